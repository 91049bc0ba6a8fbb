//! A model's action as the computer-use tool call that carries it out: every point
//! mapped from the model's space to a desktop pixel (`desktop::computer::space`), the
//! model's own point kept beside it for the record, and the target window's place so
//! that a replay can follow the window. A point the picture does not show is the
//! action's failure, told to the model.

use serde_json::{Map, Value, json};

use crate::desktop::computer::space::Space;
use crate::desktop::control::Rect;
use crate::llm::computer::{ModelAction, Point, ScrollUnit};
use crate::tool::ToolCall;

/// Pixels a wheel notch scrolls, for models that count scrolls in pixels (a browser's
/// usual 100).
const PIXELS_PER_NOTCH: f64 = 100.0;

/// The tool call of `action`, decided on the picture of `space`, in a window at
/// `window` (when the operator works on one).
pub(super) fn call_for(
    action: &ModelAction,
    space: &Space,
    window: Option<Rect>,
) -> Result<ToolCall, String> {
    let mut args = Map::new();
    let map = |p: Point| space.to_desktop(p.0, p.1).map_err(|e| e.to_string());
    let aim = |args: &mut Map<String, Value>, p: Point| -> Result<(), String> {
        let (x, y) = map(p)?;
        args.insert("x".into(), json!(x));
        args.insert("y".into(), json!(y));
        args.insert(
            "model".into(),
            json!({"x": p.0, "y": p.1, "space": space.describe()}),
        );
        if let Some(w) = window {
            args.insert("window".into(), json!(w));
        }
        Ok(())
    };
    let keys = |args: &mut Map<String, Value>, keys: &[String]| {
        if !keys.is_empty() {
            args.insert("keys".into(), json!(keys));
        }
    };
    let tool = match action {
        ModelAction::Click {
            at,
            button,
            count,
            keys: held,
        } => {
            if let Some(p) = at {
                aim(&mut args, *p)?;
            }
            if button != "left" {
                args.insert("button".into(), json!(button));
            }
            keys(&mut args, held);
            match count {
                2 => "double_click",
                3 => "triple_click",
                _ => "click",
            }
        }
        ModelAction::Move { at, keys: held } => {
            aim(&mut args, *at)?;
            keys(&mut args, held);
            "move"
        }
        ModelAction::Drag { path, keys: held } => {
            let points = path
                .iter()
                .map(|p| map(*p).map(|(x, y)| json!({"x": x, "y": y})))
                .collect::<Result<Vec<_>, _>>()?;
            args.insert("path".into(), Value::Array(points));
            args.insert(
                "model".into(),
                json!({"path": path.iter().map(|p| json!([p.0, p.1])).collect::<Vec<_>>(), "space": space.describe()}),
            );
            if let Some(w) = window {
                args.insert("window".into(), json!(w));
            }
            keys(&mut args, held);
            "drag"
        }
        ModelAction::Scroll {
            at,
            dx,
            dy,
            unit,
            keys: held,
        } => {
            if let Some(p) = at {
                aim(&mut args, *p)?;
            }
            let notches = |d: f64| -> i64 {
                let n = match unit {
                    ScrollUnit::Notches => d,
                    ScrollUnit::Pixels => d / PIXELS_PER_NOTCH,
                };
                // Any scroll moves at least a notch.
                let r = n.round() as i64;
                if r == 0 && d != 0.0 {
                    d.signum() as i64
                } else {
                    r.clamp(-100, 100)
                }
            };
            args.insert("scroll_x".into(), json!(notches(*dx)));
            args.insert("scroll_y".into(), json!(notches(*dy)));
            keys(&mut args, held);
            "scroll"
        }
        ModelAction::Button { at, button, down } => {
            if let Some(p) = at {
                aim(&mut args, *p)?;
                args.remove("window");
            }
            args.insert("button".into(), json!(button));
            if *down { "mouse_down" } else { "mouse_up" }
        }
        ModelAction::Keypress { keys, repeat } => {
            args.insert("keys".into(), json!(keys));
            if *repeat > 1 {
                args.insert("repeat".into(), json!(repeat));
            }
            "keypress"
        }
        ModelAction::HoldKey { keys, seconds } => {
            args.insert("keys".into(), json!(keys));
            args.insert("seconds".into(), json!(seconds));
            "hold_key"
        }
        ModelAction::Type { text } => {
            args.insert("text".into(), json!(text));
            "type"
        }
        ModelAction::Wait { seconds } => {
            if !(0.0..=300.0).contains(seconds) {
                return Err(format!(
                    "`wait` is for 0 to 300 seconds, not {seconds}: wait in parts, looking at the screen between them"
                ));
            }
            args.insert("seconds".into(), json!(seconds));
            "wait"
        }
        ModelAction::Screenshot => "screenshot",
        ModelAction::Zoom { from, to } => {
            let region = space
                .rect_to_desktop(*from, *to)
                .map_err(|e| e.to_string())?;
            args.insert("region".into(), json!(region));
            args.insert(
                "model".into(),
                json!({"region": [from.0, from.1, to.0, to.1], "space": space.describe()}),
            );
            "zoom"
        }
        ModelAction::CursorPosition => "cursor_position",
        ModelAction::Done { .. } | ModelAction::AskUser { .. } => {
            return Err("the task's end and a question are not actions".to_string());
        }
    };
    Ok(ToolCall::action(tool, args))
}

/// The tool an action that cannot be read would have been, for its record.
pub(super) fn tool_of_raw(raw: &Value) -> String {
    ["type", "name", "action"]
        .iter()
        .find_map(|k| raw.get(*k).and_then(Value::as_str))
        .filter(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or("action")
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::desktop::computer::space::{Fit, Units};
    use crate::desktop::screenshot::Image;

    fn space(region: Rect, units: Units) -> Space {
        Space::picture(&Image::new(1280, 800), region, Fit::Original, units).1
    }

    #[test]
    fn points_become_desktop_pixels_with_the_models_beside_them() {
        let window = Rect {
            x: 100,
            y: 50,
            width: 800,
            height: 600,
        };
        let s = space(window, Units::Pixels);
        let click = ModelAction::Click {
            at: Some((10.0, 20.0)),
            button: "right".into(),
            count: 2,
            keys: vec!["shift".into()],
        };
        let call = call_for(&click, &s, Some(window)).unwrap();
        assert_eq!(call.tool_name, "double_click");
        assert_eq!(call.parameters["x"], 110);
        assert_eq!(call.parameters["y"], 70);
        assert_eq!(call.parameters["button"], "right");
        assert_eq!(call.parameters["keys"], json!(["shift"]));
        assert_eq!(call.parameters["model"]["x"], 10.0);
        assert_eq!(call.parameters["window"]["x"], 100);
        let off = ModelAction::Move {
            at: (900.0, 20.0),
            keys: vec![],
        };
        let e = call_for(&off, &s, Some(window)).unwrap_err();
        assert!(e.contains("outside the screenshot"), "{e}");
    }

    #[test]
    fn scrolls_in_pixels_become_notches() {
        let s = space(
            Rect {
                x: 0,
                y: 0,
                width: 1280,
                height: 800,
            },
            Units::Grid(1000),
        );
        let scroll = ModelAction::Scroll {
            at: Some((500.0, 500.0)),
            dx: 0.0,
            dy: -300.0,
            unit: ScrollUnit::Pixels,
            keys: vec![],
        };
        let call = call_for(&scroll, &s, None).unwrap();
        assert_eq!(
            (
                call.parameters["scroll_y"].clone(),
                call.parameters["x"].clone()
            ),
            (json!(-3), json!(640))
        );
        let tiny = ModelAction::Scroll {
            at: None,
            dx: 5.0,
            dy: 0.0,
            unit: ScrollUnit::Pixels,
            keys: vec![],
        };
        assert_eq!(call_for(&tiny, &s, None).unwrap().parameters["scroll_x"], 1);
        assert_eq!(tool_of_raw(&json!({"type": "teleport"})), "teleport");
        assert_eq!(tool_of_raw(&json!({"type": "rm -rf"})), "action");
    }
}
