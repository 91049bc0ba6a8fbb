//! The computer-use tools: what an operator agent does on the desktop, as a person at
//! it would, in desktop pixels (UFO's operator commands, `controller.py`: `click`,
//! `double_click`, `drag`, `keypress`, `move`, `scroll`, `type`, `wait`; and what
//! today's models also send: `triple_click`, `mouse_down`, `mouse_up`, `hold_key`,
//! `screenshot`, `zoom`, `cursor_position`). Each is a tool call like any other, so a
//! recorded operator run replays with no model.
//!
//! A pointer action names its desktop pixel (`x`, `y`) and, when recorded, the element
//! it hit (`element`, with the place on it) and the window it acted in (`window`): a
//! replay acts on the element where it is now, else at the same place relative to the
//! window. What the model's own coordinates were is kept beside them (`model`), for the
//! record only. How a model's point becomes a desktop pixel is `space`'s; key names,
//! `keys`'.

use std::time::Duration;

use serde_json::{Map, Value};

pub(crate) mod keys;
pub(crate) mod space;
mod specs;

pub(crate) use specs::computer_tools;

use super::action::Button;
use super::control::Rect;
use super::element::Element;
use super::keys::KeyAction;
use crate::tool::{Blame, Blamed};

/// The longest text one `type` types.
pub(crate) const MAX_TYPED: usize = 10_000;
/// The most points a drag's path has.
const MAX_PATH: usize = 1000;
/// The most wheel notches of one scroll, and repeats of one key press.
const MAX_REPEAT: i64 = 100;
/// The longest a key is held.
const MAX_HOLD: f64 = 60.0;

/// An element a recording hit, and the place on it (fractions of its width and height).
pub(crate) type Recorded = (Element, (f64, f64));

/// Where a pointer action acts.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Aim {
    /// The desktop pixel.
    pub(crate) at: (i32, i32),
    /// The element a recording hit there, and the place on it (fractions).
    pub(crate) element: Option<Recorded>,
    /// The window the recording acted in, where it was.
    pub(crate) window: Option<Rect>,
}

/// A computer-use action, its arguments read.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum ComputerAction {
    /// `click`, `double_click`, `triple_click`: a button pressed `count` times.
    Click {
        /// Where (the pointer's place when `None`).
        aim: Option<Aim>,
        /// Which button.
        button: Button,
        /// 1, 2 or 3.
        count: u8,
        /// Keys held meanwhile.
        held: Vec<KeyAction>,
    },
    /// `move`: the pointer to a point.
    Move {
        /// Where.
        aim: Aim,
        /// Keys held meanwhile.
        held: Vec<KeyAction>,
    },
    /// `drag`: a button held along a path.
    Drag {
        /// The points, in order (at least two).
        path: Vec<(i32, i32)>,
        /// The element a recording's drag started on, and the place on it.
        element: Option<Recorded>,
        /// The window the recording acted in, where it was.
        window: Option<Rect>,
        /// Which button.
        button: Button,
        /// Keys held meanwhile.
        held: Vec<KeyAction>,
    },
    /// `scroll`: wheel notches across and down (positive: right and down).
    Scroll {
        /// Where (the pointer's place when `None`).
        aim: Option<Aim>,
        /// Notches across.
        dx: i32,
        /// Notches down.
        dy: i32,
        /// Keys held meanwhile.
        held: Vec<KeyAction>,
    },
    /// `mouse_down` / `mouse_up`.
    Button {
        /// Where (the pointer's place when `None`).
        aim: Option<Aim>,
        /// Which button.
        button: Button,
        /// Pressed (else released).
        down: bool,
    },
    /// `keypress`: one chord, `repeat` times.
    Keypress {
        /// The chord as key actions.
        chord: Vec<KeyAction>,
        /// How often.
        repeat: u32,
    },
    /// `hold_key`: a chord held down for a while.
    HoldKey {
        /// The chord as key actions.
        chord: Vec<KeyAction>,
        /// For how long.
        duration: Duration,
    },
    /// `type`: text typed as written.
    Type(String),
    /// `screenshot`: the screen now.
    Screenshot,
    /// `zoom`: a part of the screen, close up.
    Zoom(Rect),
    /// `cursor_position`: where the pointer is.
    CursorPosition,
}

/// Why a computer-use call's arguments cannot be read: the agent's.
#[derive(Debug, PartialEq, thiserror::Error)]
pub(crate) enum ComputerArgError {
    /// A coordinate not given or not a number.
    #[error("`{tool}` needs `{key}`: a whole number of desktop pixels")]
    Coordinate {
        /// The tool.
        tool: String,
        /// The argument.
        key: &'static str,
    },
    /// A button no mouse has.
    #[error("unknown mouse button `{0}` (use left, right, middle, wheel, back or forward)")]
    Button(String),
    /// A key name the table does not know.
    #[error(transparent)]
    Key(#[from] keys::UnknownKey),
    /// Keys not given as a list of names.
    #[error("`{0}` must be a list of key names, such as [\"ctrl\", \"s\"]")]
    NotKeys(&'static str),
    /// A chord with no key.
    #[error("`keypress` needs at least one key in `keys`")]
    NoKeys,
    /// A path of fewer than two points, or not of points.
    #[error("`drag` needs a `path` of 2 to {MAX_PATH} points, each {{\"x\": .., \"y\": ..}}")]
    Path,
    /// A count out of range.
    #[error("`{0}` must be a whole number from {1} to {MAX_REPEAT}")]
    Count(&'static str, i64),
    /// A duration out of range.
    #[error("`{0}` must be a number of seconds from 0 to {MAX_HOLD}")]
    Seconds(&'static str),
    /// Text over the bound.
    #[error("`type` takes at most {MAX_TYPED} characters at once ({0} given): type it in parts")]
    LongText(usize),
    /// A recorded element that cannot be read.
    #[error("`element` is not a recorded element: {0}")]
    Element(String),
    /// A rectangle that is not one.
    #[error("`{0}` must be {{\"x\", \"y\", \"width\", \"height\"}} in desktop pixels, with a size")]
    Rect(&'static str),
    /// Not a computer-use tool.
    #[error("`{0}` is not a computer-use tool")]
    NotComputerTool(String),
}

impl Blamed for ComputerArgError {
    fn blame(&self) -> Blame {
        Blame::Agent
    }
}

/// Whether `tool` is one of the computer-use tools.
pub(crate) fn is_computer_tool(tool: &str) -> bool {
    crate::tool::desktop_names::COMPUTER_TOOLS.contains(&tool)
}

impl Button {
    /// A computer-use button name: UFO's and OpenAI's (`wheel` is the middle button,
    /// as UFO's controller reads it), and the side buttons.
    pub(crate) fn of_computer(name: &str) -> Result<Self, ComputerArgError> {
        match name.trim().to_ascii_lowercase().as_str() {
            "" | "left" | "primary" => Ok(Self::Left),
            "right" | "secondary" => Ok(Self::Right),
            "middle" | "wheel" => Ok(Self::Middle),
            "back" => Ok(Self::Back),
            "forward" => Ok(Self::Forward),
            other => Err(ComputerArgError::Button(other.to_string())),
        }
    }
}

/// A call's arguments.
struct Args<'a> {
    tool: &'a str,
    args: &'a Map<String, Value>,
}

impl Args<'_> {
    fn int(&self, key: &'static str) -> Option<i64> {
        match self.args.get(key)? {
            Value::Number(n) => n.as_i64().or_else(|| {
                n.as_f64()
                    .filter(|f| f.is_finite())
                    .map(|f| f.round() as i64)
            }),
            _ => None,
        }
    }

    fn coordinate(&self, key: &'static str) -> Result<i32, ComputerArgError> {
        self.int(key)
            .and_then(|v| i32::try_from(v).ok())
            .ok_or_else(|| ComputerArgError::Coordinate {
                tool: self.tool.to_string(),
                key,
            })
    }

    fn rect(&self, key: &'static str, value: &Value) -> Result<Rect, ComputerArgError> {
        let rect: Rect =
            serde_json::from_value(value.clone()).map_err(|_| ComputerArgError::Rect(key))?;
        if rect.width <= 0 || rect.height <= 0 {
            return Err(ComputerArgError::Rect(key));
        }
        Ok(rect)
    }

    fn window(&self) -> Result<Option<Rect>, ComputerArgError> {
        match self.args.get("window") {
            None | Some(Value::Null) => Ok(None),
            Some(v) => self.rect("window", v).map(Some),
        }
    }

    fn element(&self) -> Result<Option<Recorded>, ComputerArgError> {
        let Some(value) = self.args.get("element").filter(|v| !v.is_null()) else {
            return Ok(None);
        };
        let element: Element = serde_json::from_value(value.clone())
            .map_err(|e| ComputerArgError::Element(e.to_string()))?;
        let at = value
            .get("at")
            .and_then(Value::as_array)
            .and_then(|a| Some((a.first()?.as_f64()?, a.get(1)?.as_f64()?)))
            .unwrap_or((0.5, 0.5));
        Ok(Some((element, at)))
    }

    fn aim(&self) -> Result<Aim, ComputerArgError> {
        Ok(Aim {
            at: (self.coordinate("x")?, self.coordinate("y")?),
            element: self.element()?,
            window: self.window()?,
        })
    }

    /// An aim when the call gives a point, else `None` (the pointer's place).
    fn maybe_aim(&self) -> Result<Option<Aim>, ComputerArgError> {
        if self.args.get("x").is_none() && self.args.get("y").is_none() {
            return Ok(None);
        }
        self.aim().map(Some)
    }

    fn names(&self, key: &'static str) -> Result<Vec<String>, ComputerArgError> {
        match self.args.get(key) {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(Value::String(s)) => Ok(keys::split_chord(s)),
            Some(Value::Array(items)) => items
                .iter()
                .map(|i| i.as_str().map(str::to_string))
                .collect::<Option<Vec<_>>>()
                .ok_or(ComputerArgError::NotKeys(key)),
            Some(_) => Err(ComputerArgError::NotKeys(key)),
        }
    }

    /// Keys held during a pointer action, as presses before it (released after it,
    /// in reverse, by the executor).
    fn held(&self) -> Result<Vec<KeyAction>, ComputerArgError> {
        let names = self.names("keys")?;
        let keys = names
            .iter()
            .map(|n| keys::key_named(n))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(keys.into_iter().map(KeyAction::Down).collect())
    }

    fn button(&self) -> Result<Button, ComputerArgError> {
        Button::of_computer(
            self.args
                .get("button")
                .and_then(Value::as_str)
                .unwrap_or(""),
        )
    }

    fn count(&self, key: &'static str, default: i64, min: i64) -> Result<i64, ComputerArgError> {
        let n = match self.args.get(key) {
            None | Some(Value::Null) => default,
            Some(_) => self.int(key).ok_or(ComputerArgError::Count(key, min))?,
        };
        if (min..=MAX_REPEAT).contains(&n) {
            Ok(n)
        } else {
            Err(ComputerArgError::Count(key, min))
        }
    }

    fn notches(&self, key: &'static str) -> Result<i32, ComputerArgError> {
        let n = match self.args.get(key) {
            None | Some(Value::Null) => 0,
            Some(_) => self
                .int(key)
                .ok_or(ComputerArgError::Count(key, -MAX_REPEAT))?,
        };
        if n.unsigned_abs() <= MAX_REPEAT as u64 {
            Ok(n as i32)
        } else {
            Err(ComputerArgError::Count(key, -MAX_REPEAT))
        }
    }
}

impl ComputerAction {
    /// Reads a call of `tool` with `args`.
    pub(crate) fn parse(tool: &str, args: &Map<String, Value>) -> Result<Self, ComputerArgError> {
        let a = Args { tool, args };
        Ok(match tool {
            "click" | "double_click" | "triple_click" => Self::Click {
                aim: a.maybe_aim()?,
                button: a.button()?,
                count: match tool {
                    "double_click" => 2,
                    "triple_click" => 3,
                    _ => 1,
                },
                held: a.held()?,
            },
            "move" => Self::Move {
                aim: a.aim()?,
                held: a.held()?,
            },
            "drag" => Self::Drag {
                path: path(args.get("path"))?,
                element: a.element()?,
                window: a.window()?,
                button: a.button()?,
                held: a.held()?,
            },
            "scroll" => Self::Scroll {
                aim: a.maybe_aim()?,
                dx: a.notches("scroll_x")?,
                dy: a.notches("scroll_y")?,
                held: a.held()?,
            },
            "mouse_down" | "mouse_up" => Self::Button {
                aim: a.maybe_aim()?,
                button: a.button()?,
                down: tool == "mouse_down",
            },
            "keypress" => {
                let names = a.names("keys")?;
                if names.is_empty() {
                    return Err(ComputerArgError::NoKeys);
                }
                Self::Keypress {
                    chord: keys::chord(&names)?,
                    repeat: a.count("repeat", 1, 1)? as u32,
                }
            }
            "hold_key" => {
                let names = a.names("keys")?;
                if names.is_empty() {
                    return Err(ComputerArgError::NoKeys);
                }
                let seconds = args.get("seconds").and_then(Value::as_f64).unwrap_or(1.0);
                if !(0.0..=MAX_HOLD).contains(&seconds) {
                    return Err(ComputerArgError::Seconds("seconds"));
                }
                Self::HoldKey {
                    chord: keys::chord(&names)?,
                    duration: Duration::from_secs_f64(seconds),
                }
            }
            "type" => {
                let text = args
                    .get("text")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string();
                let n = text.chars().count();
                if n > MAX_TYPED {
                    return Err(ComputerArgError::LongText(n));
                }
                Self::Type(text)
            }
            "screenshot" => Self::Screenshot,
            "zoom" => Self::Zoom(a.rect("region", args.get("region").unwrap_or(&Value::Null))?),
            "cursor_position" => Self::CursorPosition,
            other => return Err(ComputerArgError::NotComputerTool(other.to_string())),
        })
    }
}

/// A drag's path: `[{"x", "y"}, ...]`.
fn path(value: Option<&Value>) -> Result<Vec<(i32, i32)>, ComputerArgError> {
    let points = value
        .and_then(Value::as_array)
        .ok_or(ComputerArgError::Path)?;
    if points.len() < 2 || points.len() > MAX_PATH {
        return Err(ComputerArgError::Path);
    }
    points
        .iter()
        .map(|p| {
            let c = |k: &str| {
                p.get(k)
                    .and_then(Value::as_f64)
                    .filter(|v| v.is_finite() && v.abs() < 1e7)
                    .map(|v| v.round() as i32)
            };
            Some((c("x")?, c("y")?))
        })
        .collect::<Option<Vec<_>>>()
        .ok_or(ComputerArgError::Path)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::desktop::keys::{Key, Modifier};

    fn parse(tool: &str, args: Value) -> Result<ComputerAction, ComputerArgError> {
        ComputerAction::parse(tool, args.as_object().unwrap())
    }

    #[test]
    fn pointer_actions_read_their_point_and_held_keys() {
        let click = parse(
            "double_click",
            json!({"x": 10, "y": 20.4, "button": "wheel", "keys": ["shift"]}),
        )
        .unwrap();
        assert_eq!(
            click,
            ComputerAction::Click {
                aim: Some(Aim {
                    at: (10, 20),
                    element: None,
                    window: None
                }),
                button: Button::Middle,
                count: 2,
                held: vec![KeyAction::Down(Key::Modifier(Modifier::Shift))],
            }
        );
        let scroll = parse("scroll", json!({"scroll_y": -3})).unwrap();
        assert!(matches!(
            scroll,
            ComputerAction::Scroll {
                aim: None,
                dx: 0,
                dy: -3,
                ..
            }
        ));
        let drag = parse(
            "drag",
            json!({"path": [{"x": 1, "y": 2}, {"x": 3, "y": 4}, {"x": 5, "y": 6}]}),
        )
        .unwrap();
        assert!(matches!(drag, ComputerAction::Drag { ref path, .. } if path.len() == 3));
    }

    #[test]
    fn a_recorded_element_and_window_are_read() {
        let click = parse(
            "click",
            json!({"x": 5, "y": 6,
                   "window": {"x": 0, "y": 0, "width": 640, "height": 480},
                   "element": {"name": "Save", "role": "push button", "window": "w",
                               "path": [{"role": "frame", "name": "w", "index": 0}],
                               "rect": {"x": 1, "y": 2, "width": 30, "height": 20}, "at": [0.25, 0.75]}}),
        )
        .unwrap();
        let ComputerAction::Click { aim: Some(aim), .. } = click else {
            panic!()
        };
        let (element, at) = aim.element.unwrap();
        assert_eq!((element.name.as_str(), at), ("Save", (0.25, 0.75)));
        assert_eq!(aim.window.unwrap().width, 640);
    }

    #[test]
    fn bad_arguments_say_what_is_wrong() {
        for (tool, args, words) in [
            (
                "click",
                json!({"y": 3}),
                "`click` needs `x`: a whole number of desktop pixels",
            ),
            (
                "click",
                json!({"x": 1, "y": 2, "button": "thumb"}),
                "unknown mouse button `thumb`",
            ),
            (
                "keypress",
                json!({"keys": []}),
                "`keypress` needs at least one key",
            ),
            (
                "keypress",
                json!({"keys": ["ctrl", "warp"]}),
                "no key is named \"warp\"",
            ),
            (
                "keypress",
                json!({"keys": 5}),
                "`keys` must be a list of key names",
            ),
            (
                "drag",
                json!({"path": [{"x": 1, "y": 2}]}),
                "`drag` needs a `path` of 2",
            ),
            (
                "scroll",
                json!({"scroll_y": 5000}),
                "`scroll_y` must be a whole number",
            ),
            (
                "hold_key",
                json!({"keys": ["a"], "seconds": 600}),
                "`seconds` must be a number of seconds",
            ),
            (
                "zoom",
                json!({"region": {"x": 0, "y": 0, "width": 0, "height": 5}}),
                "`region` must be",
            ),
            (
                "teleport",
                json!({}),
                "`teleport` is not a computer-use tool",
            ),
        ] {
            let e = parse(tool, args).unwrap_err();
            assert!(e.to_string().contains(words), "{tool}: {e}");
            assert_eq!(e.blame(), Blame::Agent);
        }
        let long = "x".repeat(MAX_TYPED + 1);
        assert!(matches!(
            parse("type", json!({"text": long})),
            Err(ComputerArgError::LongText(_))
        ));
    }

    #[test]
    fn every_tool_has_a_spec_and_parses() {
        for spec in computer_tools() {
            assert!(is_computer_tool(&spec.name), "{}", spec.name);
        }
        let names: Vec<&str> = computer_tools().iter().map(|t| t.name.as_ref()).collect();
        assert_eq!(names, crate::tool::desktop_names::COMPUTER_TOOLS);
    }
}
