//! What a call of one of UFO's app tools asks the desktop to do (`DesktopAction`): which
//! tool means which action, its arguments read (`args`: the control it names, the keys,
//! the mouse button, coordinates as fractions of the window, durations). A call whose
//! arguments cannot be read is the agent's mistake (`ArgumentError`). The tools' names
//! and parameters, as the model is offered them, are `tools`'.

use std::time::Duration;

use serde_json::{Map, Value};

use super::keys::{self, KeyAction, Modifier};
use super::select::Selector;

mod args;

use args::Args;
pub(crate) use args::ArgumentError;

/// A mouse button.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Button {
    /// The left button.
    Left,
    /// The middle button.
    Middle,
    /// The right button.
    Right,
    /// The side button that goes back (X11 button 8, Windows' XBUTTON1).
    Back,
    /// The side button that goes forward (X11 button 9, Windows' XBUTTON2).
    Forward,
}

impl Button {
    /// UFO's button names (`left`, `right`, `middle`).
    pub(crate) fn parse(name: &str) -> Result<Self, ArgumentError> {
        match name.trim().to_ascii_lowercase().as_str() {
            "" | "left" => Ok(Self::Left),
            "middle" => Ok(Self::Middle),
            "right" => Ok(Self::Right),
            other => Err(ArgumentError::Button(other.to_string())),
        }
    }
}

/// What a desktop tool call asks for, its arguments read and checked.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum DesktopAction {
    /// `click_input`.
    Click {
        /// The control.
        target: Selector,
        /// The button.
        button: Button,
        /// A double click.
        double: bool,
    },
    /// `set_edit_text`.
    SetText {
        /// The control.
        target: Selector,
        /// The text.
        text: String,
    },
    /// `keyboard_input`.
    Keys {
        /// The control to focus first, if any.
        target: Option<Selector>,
        /// The keys.
        keys: Vec<KeyAction>,
    },
    /// `wheel_mouse_input`.
    Wheel {
        /// The control.
        target: Selector,
        /// Notches, up when positive.
        notches: i32,
    },
    /// `texts`.
    Texts {
        /// The control.
        target: Selector,
    },
    /// `click_on_coordinates`: fractions of the app window.
    ClickAt {
        /// Across, 0 to 1.
        x: f64,
        /// Down, 0 to 1.
        y: f64,
        /// The button.
        button: Button,
        /// A double click.
        double: bool,
    },
    /// `drag_on_coordinates`: fractions of the app window.
    Drag {
        /// From (across, down).
        from: (f64, f64),
        /// To.
        to: (f64, f64),
        /// The button.
        button: Button,
        /// How long the drag takes.
        duration: Duration,
        /// A key held down meanwhile.
        held: Option<Modifier>,
    },
    /// `wait`.
    Wait(Duration),
    /// `summary`: the agent's words, returned as they are.
    Summary(String),
    /// `select_application` (UFO's documented recorded plan): open or select an app.
    SelectApplication {
        /// Its name (`word`, `notepad`, ...).
        name: String,
    },
    /// `select_application_window`: the window the actions go to from now on, by its
    /// label in the window list and/or its title.
    SelectWindow {
        /// Its label, if given.
        id: Option<String>,
        /// Its title (or a part of it), if given.
        name: Option<String>,
    },
    /// `capture_window_screenshot` / `capture_desktop_screenshot`.
    Screenshot {
        /// The whole desktop rather than the window.
        desktop: bool,
    },
    /// `get_ui_tree`.
    UiTree,
    /// `get_app_window_info`: the fields of `field_list` (`desktop::info`).
    WindowInfo {
        /// The fields asked for (every one when empty).
        fields: Vec<String>,
    },
    /// `get_desktop_app_info` / `get_desktop_app_target_info`.
    DesktopApps {
        /// UFO's `TargetInfo`s rather than its dictionaries.
        target: bool,
    },
    /// `get_app_window_controls_info` / `get_app_window_controls_target_info`.
    Controls {
        /// The fields asked for (every one when empty).
        fields: Vec<String>,
        /// UFO's `TargetInfo`s rather than its dictionaries.
        target: bool,
    },
}

impl DesktopAction {
    /// Reads a call of `tool` with `args`.
    pub(crate) fn parse(tool: &str, args: &Map<String, Value>) -> Result<Self, ArgumentError> {
        let args = Args { tool, args };
        match Self::acting(&args)? {
            Some(action) => Ok(action),
            None => Self::observing(&args),
        }
    }

    /// The tools that act on the app's window; `None` for another tool.
    fn acting(a: &Args<'_>) -> Result<Option<Self>, ArgumentError> {
        Ok(Some(match a.tool {
            // UFO's documented plan names a control by `label`: its id, or else its name.
            "click_element" => {
                let label = a.text("label");
                let numeric = !label.is_empty() && label.chars().all(|c| c.is_ascii_digit());
                Self::Click {
                    target: Selector {
                        id: numeric.then(|| label.clone()),
                        name: (!numeric).then_some(label).filter(|l| !l.is_empty()),
                        control_type: None,
                    },
                    button: a.button()?,
                    double: a.flag("double"),
                }
            }
            "click_input" => Self::Click {
                target: a.target()?,
                button: a.button()?,
                double: a.flag("double"),
            },
            "set_edit_text" => Self::SetText {
                target: a.target()?,
                text: a.text("text"),
            },
            "keyboard_input" => {
                let focus = a
                    .args
                    .get("control_focus")
                    .and_then(Value::as_bool)
                    .unwrap_or(true);
                let named = Selector::from_arguments(a.args).ok();
                Self::Keys {
                    target: named.filter(|_| focus),
                    keys: keys::parse(&a.text("keys"))?,
                }
            }
            "wheel_mouse_input" => Self::Wheel {
                target: a.target()?,
                notches: a.number("wheel_dist").unwrap_or(0.0).round() as i32,
            },
            "texts" => Self::Texts {
                target: a.target()?,
            },
            "click_on_coordinates" => Self::ClickAt {
                x: a.fraction("x")?,
                y: a.fraction("y")?,
                button: a.button()?,
                double: a.flag("double"),
            },
            "drag_on_coordinates" => Self::Drag {
                from: (a.fraction("start_x")?, a.fraction("start_y")?),
                to: (a.fraction("end_x")?, a.fraction("end_y")?),
                button: a.button()?,
                duration: a.seconds("duration")?,
                held: match a.text("key_hold").to_ascii_lowercase().as_str() {
                    "" => None,
                    "ctrl" | "control" => Some(Modifier::Ctrl),
                    "shift" => Some(Modifier::Shift),
                    "alt" => Some(Modifier::Alt),
                    other => return Err(ArgumentError::KeyHold(other.to_string())),
                },
            },
            "wait" => Self::Wait(a.seconds("seconds")?),
            "summary" => Self::Summary(a.text("text")),
            _ => return Ok(None),
        }))
    }

    /// The tools that select an app or a window, or look at the screen.
    fn observing(a: &Args<'_>) -> Result<Self, ArgumentError> {
        Ok(match a.tool {
            "select_application" => Self::SelectApplication {
                name: a.text("app_name"),
            },
            "select_application_window" => {
                let id = match a.args.get("id") {
                    Some(Value::Number(n)) => Some(n.to_string()),
                    _ => Some(a.text("id")).filter(|i| !i.trim().is_empty()),
                };
                let name = Some(a.text("name")).filter(|n| !n.trim().is_empty());
                if id.is_none() && name.is_none() {
                    return Err(ArgumentError::NoWindow);
                }
                Self::SelectWindow { id, name }
            }
            "capture_window_screenshot" => Self::Screenshot { desktop: false },
            "capture_desktop_screenshot" => Self::Screenshot { desktop: true },
            "get_ui_tree" => Self::UiTree,
            "get_app_window_info" => Self::WindowInfo {
                fields: a.strings("field_list")?,
            },
            "get_desktop_app_info" => Self::DesktopApps { target: false },
            "get_desktop_app_target_info" => Self::DesktopApps { target: true },
            "get_app_window_controls_info" => Self::Controls {
                fields: a.strings("field_list")?,
                target: false,
            },
            "get_app_window_controls_target_info" => Self::Controls {
                fields: a.strings("field_list")?,
                target: true,
            },
            other => return Err(ArgumentError::NotDesktopTool(other.to_string())),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tool::{Blame, Blamed};
    use serde_json::json;

    fn parse(tool: &str, args: Value) -> Result<DesktopAction, ArgumentError> {
        DesktopAction::parse(tool, args.as_object().unwrap())
    }

    /// Why a call cannot be read, in words.
    fn refused(tool: &str, args: Value) -> String {
        parse(tool, args).unwrap_err().to_string()
    }

    #[test]
    fn ufo_arguments_are_read() {
        let click = parse(
            "click_input",
            json!({"id": "5", "name": "OK", "button": "right"}),
        )
        .unwrap();
        let DesktopAction::Click {
            target,
            button,
            double,
        } = click
        else {
            panic!()
        };
        assert_eq!(
            (target.id.as_deref(), button, double),
            (Some("5"), Button::Right, false)
        );
        let keys = parse(
            "keyboard_input",
            json!({"keys": "^s", "control_focus": false, "name": "Doc"}),
        )
        .unwrap();
        assert!(matches!(keys, DesktopAction::Keys { target: None, .. }));
        let at = parse("click_on_coordinates", json!({"x": 0.5, "y": 1})).unwrap();
        assert_eq!(
            at,
            DesktopAction::ClickAt {
                x: 0.5,
                y: 1.0,
                button: Button::Left,
                double: false
            }
        );
    }

    #[test]
    fn bad_arguments_say_what_is_wrong() {
        let err = refused("click_on_coordinates", json!({"x": 640, "y": 0.5}));
        assert_eq!(
            err,
            "`x` is 640: coordinates are fractions of the window, from 0 to 1"
        );
        let err = refused("click_input", json!({"button": "left"}));
        assert!(err.contains("id") && err.contains("name"), "{err}");
        let err = refused("wait", json!({"seconds": 1000}));
        assert_eq!(err, "`seconds` must be at most 300 seconds, not 1000");
        let err = refused("wait", json!({"seconds": -1}));
        assert!(err.contains("from 0 to 300, not -1"), "{err}");
        let err = refused("keyboard_input", json!({"keys": "{NOSUCHKEY}"}));
        assert!(err.contains("NOSUCHKEY"), "{err}");
        let err = refused("click_input", json!({"name": "OK", "button": "x"}));
        assert_eq!(err, "unknown mouse button `x` (use left, right or middle)");
        let err = refused("get_app_window_info", json!({"field_list": "label"}));
        assert_eq!(err, "`field_list` must be a list of field names");
        let err = refused("no_such_tool", json!({}));
        assert_eq!(err, "`no_such_tool` is not a desktop tool");
    }

    #[test]
    fn bad_arguments_are_the_agents_in_their_own_words() {
        for (tool, args) in [
            ("keyboard_input", json!({"keys": "{NOSUCHKEY}"})),
            ("click_input", json!({})),
            ("drag_on_coordinates", json!({"start_x": 0.5})),
        ] {
            let e = parse(tool, args).unwrap_err();
            let failure = e.failure();
            assert_eq!(failure.blame, Blame::Agent, "{tool}");
            assert_eq!(failure.message, e.to_string(), "{tool}");
        }
    }
}
