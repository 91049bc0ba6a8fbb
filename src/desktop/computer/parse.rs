//! Reading a computer-use call's arguments into a `ComputerAction`: points, recorded
//! elements and windows, held keys, buttons, counts and paths, each refused with what is
//! wrong.

use std::time::Duration;

use serde_json::{Map, Value};

use super::{
    Aim, ComputerAction, ComputerArgError, MAX_HOLD, MAX_PATH, MAX_REPEAT, MAX_TYPED, Recorded,
    keys,
};
use crate::desktop::action::Button;
use crate::desktop::control::Rect;
use crate::desktop::element::Element;
use crate::desktop::keys::KeyAction;

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
