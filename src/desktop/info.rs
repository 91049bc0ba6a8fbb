//! What UFO's data collection tools answer about the desktop's windows and the selected
//! window's controls, in their shapes (`../ufo/ufo/client/mcp/local_servers/
//! ui_mcp_server.py`: `get_desktop_app_info`, `get_desktop_app_target_info`,
//! `get_app_window_info`, `get_app_window_controls_info`,
//! `get_app_window_controls_target_info`; a control's fields from
//! `ControlInspectorFacade.get_control_info` in `ufo/automator/ui_control/inspector.py`,
//! a target from `TargetInfo` in `ufo/agents/processors/schemas/target.py`).
//!
//! A field UFO reads from UI Automation that AT-SPI has no counterpart of
//! (`control_id`, `control_class`, `selected`) is null; `source` is empty, as UFO's is
//! when the element says none.

use serde_json::{Map, Value, json};

use super::backend::AppWindow;
use super::control::{Control, Rect};

/// The fields `get_control_info` knows, in its order.
const FIELDS: [&str; 9] = [
    "control_type",
    "control_id",
    "control_class",
    "control_name",
    "control_rect",
    "control_text",
    "control_title",
    "selected",
    "source",
];

/// UFO's rectangle: `[left, top, right, bottom]`.
fn ltrb(rect: Rect) -> Value {
    json!([rect.x, rect.y, rect.right(), rect.bottom()])
}

/// One window's or control's info with the fields of `field_list` (every field when it
/// is empty; names UFO does not know are left out, as UFO leaves them).
pub(crate) fn control_info(
    name: &str,
    control_type: &str,
    rect: Rect,
    field_list: &[String],
) -> Map<String, Value> {
    let wanted = |f: &str| field_list.is_empty() || field_list.iter().any(|w| w == f);
    FIELDS
        .iter()
        .filter(|f| wanted(f))
        .map(|f| {
            let value = match *f {
                "control_type" => json!(control_type),
                "control_name" | "control_text" | "control_title" => json!(name),
                "control_rect" => ltrb(rect),
                "source" => json!(""),
                _ => Value::Null,
            };
            (f.to_string(), value)
        })
        .collect()
}

/// The desktop's windows: `get_desktop_app_info`'s dictionaries, or with `target`
/// `get_desktop_app_target_info`'s `TargetInfo`s (no `rect`: UFO gives none).
pub(crate) fn windows(windows: &[AppWindow], target: bool) -> Value {
    windows
        .iter()
        .map(|w| {
            let mut info = json!({"id": w.id, "name": w.name, "type": "Window", "kind": "window"});
            if target {
                info["rect"] = Value::Null;
            }
            info
        })
        .collect()
}

/// The selected window's controls: `get_app_window_controls_info`'s fields of each with
/// its `label`, or with `target` `get_app_window_controls_target_info`'s `TargetInfo`s
/// (their `type` and `rect` only when `field_list` asks for them, as UFO's).
pub(crate) fn controls(controls: &[Control], field_list: &[String], target: bool) -> Value {
    controls
        .iter()
        .map(|c| {
            let kind = c.control_type.to_string();
            let mut info = control_info(&c.name, &kind, c.rect, field_list);
            if !target {
                info.insert("label".into(), json!(c.id));
                return Value::Object(info);
            }
            json!({
                "kind": "control",
                "name": c.name,
                "id": c.id,
                "type": info.get("control_type").cloned().unwrap_or(Value::Null),
                "rect": info.get("control_rect").cloned().unwrap_or(Value::Null),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::desktop::control::ControlType;

    #[test]
    fn the_shapes_are_ufos() {
        let rect = Rect {
            x: 10,
            y: 20,
            width: 100,
            height: 30,
        };
        let fields = vec![
            "control_text".to_string(),
            "control_rect".to_string(),
            "label".to_string(),
        ];
        assert_eq!(
            Value::Object(control_info("Title", "Window", rect, &fields)),
            json!({"control_rect": [10, 20, 110, 50], "control_text": "Title"})
        );
        assert_eq!(control_info("x", "Window", rect, &[]).len(), 9);
        let window = AppWindow {
            id: "1".into(),
            name: "a.txt - Mousepad".into(),
            application: "mousepad".into(),
            rect,
            handle: 0,
        };
        assert_eq!(
            windows(std::slice::from_ref(&window), false),
            json!([{"id": "1", "name": "a.txt - Mousepad", "type": "Window", "kind": "window"}])
        );
        assert_eq!(windows(&[window], true)[0]["rect"], Value::Null);
        let control = Control {
            id: "3".into(),
            name: "OK".into(),
            control_type: ControlType::Button,
            rect,
            editable: false,
            enabled: true,
            handle: 0,
        };
        let asked: Vec<String> = ["label", "control_text", "control_type", "control_rect"]
            .map(String::from)
            .to_vec();
        assert_eq!(
            controls(std::slice::from_ref(&control), &asked, false),
            json!([{"control_type": "Button", "control_rect": [10, 20, 110, 50], "control_text": "OK", "label": "3"}])
        );
        assert_eq!(
            controls(std::slice::from_ref(&control), &asked, true),
            json!([{"kind": "control", "name": "OK", "id": "3", "type": "Button", "rect": [10, 20, 110, 50]}])
        );
        assert_eq!(
            controls(&[control], &["control_text".to_string()], true)[0]["rect"],
            Value::Null
        );
    }
}
