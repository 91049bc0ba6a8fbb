//! UFO's app tools (its `ui_mcp_server`: HostAgent, AppAgent and data collection), with
//! UFO's names and arguments, and what a call of one asks the desktop to do once its
//! arguments are read. A control is named by `id` (its label in the current control
//! list) and/or `name` and `control_type`.

use std::sync::LazyLock;
use std::time::Duration;

use serde_json::{Map, Value};

use super::keys::{self, KeyAction, Modifier};
use super::select::Selector;
use crate::tool::{ParamKind, ParamSpec, ToolSpec};

/// A mouse button.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Button {
    /// The left button.
    Left,
    /// The middle button.
    Middle,
    /// The right button.
    Right,
}

impl Button {
    /// UFO's button names (`left`, `right`, `middle`).
    pub(crate) fn parse(name: &str) -> Result<Self, String> {
        match name.trim().to_ascii_lowercase().as_str() {
            "" | "left" => Ok(Self::Left),
            "middle" => Ok(Self::Middle),
            "right" => Ok(Self::Right),
            other => Err(format!(
                "unknown mouse button `{other}` (use left, right or middle)"
            )),
        }
    }
}

/// The longest `wait`.
const MAX_WAIT: Duration = Duration::from_secs(300);

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

/// Whether `tool` is one of the desktop's: a UI tool, or an app's API tool
/// (`desktop::office`).
pub(crate) fn is_desktop_tool(tool: &str) -> bool {
    desktop_tools().iter().any(|t| t.name == tool) || super::office::is_office_tool(tool)
}

impl DesktopAction {
    /// Reads a call of `tool` with `args`.
    pub(crate) fn parse(tool: &str, args: &Map<String, Value>) -> Result<Self, String> {
        let text = |key: &str| {
            args.get(key)
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        };
        let flag = |key: &str| args.get(key).and_then(Value::as_bool).unwrap_or(false);
        let strings = |key: &str| -> Result<Vec<String>, String> {
            match args.get(key) {
                None | Some(Value::Null) => Ok(Vec::new()),
                Some(Value::Array(items)) => items
                    .iter()
                    .map(|i| {
                        i.as_str()
                            .map(str::to_string)
                            .ok_or_else(|| format!("`{key}` must be a list of field names"))
                    })
                    .collect(),
                Some(_) => Err(format!("`{key}` must be a list of field names")),
            }
        };
        let number = |key: &str| args.get(key).and_then(Value::as_f64);
        let fraction = |key: &str| -> Result<f64, String> {
            match number(key) {
                Some(v) if (0.0..=1.0).contains(&v) => Ok(v),
                Some(v) => Err(format!(
                    "`{key}` is {v}: coordinates are fractions of the window, from 0 to 1"
                )),
                None => Err(format!("`{tool}` needs `{key}` (a fraction from 0 to 1)")),
            }
        };
        let target = || Selector::from_arguments(args).map_err(|e| e.to_string());
        let button = || Button::parse(&text("button"));
        Ok(match tool {
            // UFO's documented plan names a control by `label`: its id, or else its name.
            "click_element" => {
                let label = text("label");
                let numeric = !label.is_empty() && label.chars().all(|c| c.is_ascii_digit());
                Self::Click {
                    target: Selector {
                        id: numeric.then(|| label.clone()),
                        name: (!numeric).then_some(label).filter(|l| !l.is_empty()),
                        control_type: None,
                    },
                    button: button()?,
                    double: flag("double"),
                }
            }
            "select_application" => Self::SelectApplication {
                name: text("app_name"),
            },
            "click_input" => Self::Click {
                target: target()?,
                button: button()?,
                double: flag("double"),
            },
            "set_edit_text" => Self::SetText {
                target: target()?,
                text: text("text"),
            },
            "keyboard_input" => {
                let focus = args
                    .get("control_focus")
                    .and_then(Value::as_bool)
                    .unwrap_or(true);
                let named = Selector::from_arguments(args).ok();
                Self::Keys {
                    target: named.filter(|_| focus),
                    keys: keys::parse(&text("keys")).map_err(|e| e.to_string())?,
                }
            }
            "wheel_mouse_input" => Self::Wheel {
                target: target()?,
                notches: number("wheel_dist").unwrap_or(0.0).round() as i32,
            },
            "texts" => Self::Texts { target: target()? },
            "click_on_coordinates" => Self::ClickAt {
                x: fraction("x")?,
                y: fraction("y")?,
                button: button()?,
                double: flag("double"),
            },
            "drag_on_coordinates" => Self::Drag {
                from: (fraction("start_x")?, fraction("start_y")?),
                to: (fraction("end_x")?, fraction("end_y")?),
                button: button()?,
                duration: seconds(number("duration").unwrap_or(1.0), "duration")?,
                held: match text("key_hold").to_ascii_lowercase().as_str() {
                    "" => None,
                    "ctrl" | "control" => Some(Modifier::Ctrl),
                    "shift" => Some(Modifier::Shift),
                    "alt" => Some(Modifier::Alt),
                    other => return Err(format!("`key_hold` `{other}` is not ctrl, shift or alt")),
                },
            },
            "wait" => Self::Wait(seconds(number("seconds").unwrap_or(1.0), "seconds")?),
            "summary" => Self::Summary(text("text")),
            "select_application_window" => {
                let id = match args.get("id") {
                    Some(Value::Number(n)) => Some(n.to_string()),
                    _ => Some(text("id")).filter(|i| !i.trim().is_empty()),
                };
                let name = Some(text("name")).filter(|n| !n.trim().is_empty());
                if id.is_none() && name.is_none() {
                    return Err(
                        "`select_application_window` needs the window's `id` (its label in the window list) or `name`"
                            .to_string(),
                    );
                }
                Self::SelectWindow { id, name }
            }
            "capture_window_screenshot" => Self::Screenshot { desktop: false },
            "capture_desktop_screenshot" => Self::Screenshot { desktop: true },
            "get_ui_tree" => Self::UiTree,
            "get_app_window_info" => Self::WindowInfo {
                fields: strings("field_list")?,
            },
            "get_desktop_app_info" => Self::DesktopApps { target: false },
            "get_desktop_app_target_info" => Self::DesktopApps { target: true },
            "get_app_window_controls_info" => Self::Controls {
                fields: strings("field_list")?,
                target: false,
            },
            "get_app_window_controls_target_info" => Self::Controls {
                fields: strings("field_list")?,
                target: true,
            },
            other => return Err(format!("`{other}` is not a desktop tool")),
        })
    }
}

fn seconds(value: f64, key: &str) -> Result<Duration, String> {
    let d = Duration::try_from_secs_f64(value)
        .map_err(|_| format!("`{key}` must be a number of seconds from 0 to 300, not {value}"))?;
    if d > MAX_WAIT {
        return Err(format!("`{key}` must be at most 300 seconds, not {value}"));
    }
    Ok(d)
}

/// UFO's app tools.
pub(crate) fn desktop_tools() -> &'static [ToolSpec] {
    static TOOLS: LazyLock<Vec<ToolSpec>> = LazyLock::new(specs);
    &TOOLS
}

/// The tools an AppAgent acts with in its window (UFO's AppAgent functions).
pub(crate) fn app_agent_tools() -> &'static [ToolSpec] {
    static TOOLS: LazyLock<Vec<ToolSpec>> = LazyLock::new(|| {
        const APP: [&str; 9] = [
            "click_input",
            "set_edit_text",
            "keyboard_input",
            "wheel_mouse_input",
            "texts",
            "click_on_coordinates",
            "drag_on_coordinates",
            "wait",
            "summary",
        ];
        desktop_tools()
            .iter()
            .filter(|t| APP.contains(&t.name.as_ref()))
            .cloned()
            .collect()
    });
    &TOOLS
}

fn specs() -> Vec<ToolSpec> {
    use ParamKind::{Boolean, Number, String as Text};
    let p = |name: &'static str, kind, required, description: &'static str| ParamSpec {
        name: name.into(),
        kind,
        required,
        description: description.into(),
    };
    let control = || {
        vec![
            p(
                "id",
                Text,
                false,
                "the control's label in the current control list",
            ),
            p("name", Text, false, "the control's name"),
            p(
                "control_type",
                Text,
                false,
                "its UI Automation control type (Button, Edit, MenuItem, ...)",
            ),
        ]
    };
    let with = |mut params: Vec<ParamSpec>, more: Vec<ParamSpec>| {
        params.extend(more);
        params
    };
    let fields = || {
        p(
            "field_list",
            ParamKind::Schema(serde_json::json!({"type": "array", "items": {"type": "string"}})),
            true,
            "the fields wanted (control_text, control_type, control_rect, ...)",
        )
    };
    let apps = || {
        vec![
            p(
                "remove_empty",
                Boolean,
                false,
                "leave out windows that show nothing (default true)",
            ),
            p(
                "refresh_app_windows",
                Boolean,
                false,
                "list the windows again (default true)",
            ),
        ]
    };
    let button = || p("button", Text, false, "left (default), right or middle");
    let double = || p("double", Boolean, false, "a double click");
    let tool = |name: &'static str, description: &'static str, params| ToolSpec {
        name: name.into(),
        description: description.into(),
        params,
    };
    vec![
        tool(
            "click_input",
            "Click a control with the mouse.",
            with(control(), vec![button(), double()]),
        ),
        tool(
            "set_edit_text",
            "Replace the text of an edit control.",
            with(
                control(),
                vec![
                    p("text", Text, true, "the new text"),
                    p(
                        "clear_current_text",
                        Boolean,
                        false,
                        "clear it first (always done)",
                    ),
                ],
            ),
        ),
        tool(
            "keyboard_input",
            "Type keys (pywinauto syntax: ^s is Ctrl+S, {ENTER}, {TAB 2}), after focusing the control when one is named.",
            with(
                control(),
                vec![
                    p("keys", Text, true, "the keys"),
                    p(
                        "control_focus",
                        Boolean,
                        false,
                        "focus the control first (default true)",
                    ),
                ],
            ),
        ),
        tool(
            "wheel_mouse_input",
            "Turn the mouse wheel over a control (positive: up).",
            // An integer, as UFO declares it (`wheel_dist: int = 0`).
            with(
                control(),
                vec![p("wheel_dist", ParamKind::Integer, false, "notches")],
            ),
        ),
        tool("texts", "Read the text of a control.", control()),
        tool(
            "click_on_coordinates",
            "Click at a point of the app window, given as fractions of its width and height.",
            vec![
                p("x", Number, true, "0 (left) to 1 (right)"),
                p("y", Number, true, "0 (top) to 1 (bottom)"),
                button(),
                double(),
            ],
        ),
        tool(
            "drag_on_coordinates",
            "Drag between two points of the app window, given as fractions.",
            vec![
                p("start_x", Number, true, "from, across"),
                p("start_y", Number, true, "from, down"),
                p("end_x", Number, true, "to, across"),
                p("end_y", Number, true, "to, down"),
                button(),
                p("duration", Number, false, "seconds (default 1)"),
                p("key_hold", Text, false, "ctrl, shift or alt held meanwhile"),
            ],
        ),
        tool(
            "wait",
            "Wait a number of seconds.",
            // Required, as UFO declares it (`seconds: float`).
            vec![p("seconds", Number, true, "seconds (at most 300)")],
        ),
        tool(
            "summary",
            "Say what you see; the text is the result.",
            vec![p("text", Text, true, "the summary")],
        ),
        tool(
            "select_application",
            "Open an application by name (word, excel, powerpoint, notepad), or select it when it is open.",
            vec![p("app_name", Text, true, "the application's name")],
        ),
        tool(
            "click_element",
            "Click a control named by its label: its id in the control list, or its name.",
            vec![
                p("label", Text, true, "the control's id or name"),
                button(),
                double(),
            ],
        ),
        tool(
            "select_application_window",
            "Select the application window to work in.",
            vec![
                p("id", Text, false, "the window's label"),
                p("name", Text, false, "the window's title"),
            ],
        ),
        tool(
            "capture_window_screenshot",
            "Save a screenshot of the app window.",
            vec![],
        ),
        tool(
            "capture_desktop_screenshot",
            "Save a screenshot of the whole desktop.",
            vec![p(
                "all_screens",
                Boolean,
                false,
                "every screen (there is one)",
            )],
        ),
        tool("get_ui_tree", "The app window's UI tree.", vec![]),
        // UFO declares `field_list: List[str]`, required, and the two flags with
        // default true (ui_mcp_server.py).
        tool(
            "get_app_window_info",
            "The selected window's info: the fields asked for (control_text, control_rect, control_type, ...).",
            vec![fields()],
        ),
        tool(
            "get_desktop_app_info",
            "The desktop's application windows: id, name, type and kind of each.",
            apps(),
        ),
        tool(
            "get_desktop_app_target_info",
            "The desktop's application windows as targets: kind, name, id and type of each.",
            apps(),
        ),
        tool(
            "get_app_window_controls_info",
            "The selected window's controls: the fields asked for of each, with its label.",
            vec![fields()],
        ),
        tool(
            "get_app_window_controls_target_info",
            "The selected window's controls as targets: kind, name, id, type and rect of each.",
            vec![fields()],
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(tool: &str, args: Value) -> Result<DesktopAction, String> {
        DesktopAction::parse(tool, args.as_object().unwrap())
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
        let err = parse("click_on_coordinates", json!({"x": 640, "y": 0.5})).unwrap_err();
        assert!(err.contains("fractions of the window"), "{err}");
        let err = parse("click_input", json!({"button": "left"})).unwrap_err();
        assert!(err.contains("id") && err.contains("name"), "{err}");
        let err = parse("wait", json!({"seconds": 1000})).unwrap_err();
        assert!(err.contains("at most 300"), "{err}");
        let err = parse("keyboard_input", json!({"keys": "{NOSUCHKEY}"})).unwrap_err();
        assert!(err.contains("NOSUCHKEY"), "{err}");
        let err = parse("click_input", json!({"name": "OK", "button": "x"})).unwrap_err();
        assert!(err.contains("unknown mouse button"), "{err}");
    }

    #[test]
    fn every_tool_has_a_spec() {
        for spec in desktop_tools() {
            let mut args = Map::new();
            for p in spec.params.iter().filter(|p| p.required) {
                let v = match p.kind {
                    ParamKind::Number => json!(0.5),
                    ParamKind::Boolean => json!(true),
                    ParamKind::Integer => json!(1),
                    ParamKind::String => json!("a"),
                    ParamKind::Schema(_) => json!(["control_text"]),
                };
                args.insert(p.name.to_string(), v);
            }
            args.insert("name".into(), json!("x"));
            assert!(is_desktop_tool(&spec.name));
            let parsed = DesktopAction::parse(&spec.name, &args);
            assert!(parsed.is_ok(), "{}: {parsed:?}", spec.name);
        }
    }
}
