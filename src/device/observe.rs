//! What a Windows device's desktop shows the HostAgent and AppAgent at each step, read
//! through UFO's data collection tools (its `UICollector` server): for the HostAgent the
//! desktop's application windows (`get_desktop_app_info`) and the desktop's screenshot
//! (`capture_desktop_screenshot`); for an AppAgent the selected window's controls
//! (`get_app_window_controls_info`), its place (`get_app_window_info`) and its
//! screenshot (`capture_window_screenshot`). The screenshots come back as base64 PNG;
//! the controls are boxed on the annotated copy here, as on a local desktop. Replies are
//! read leniently: UFO's control dictionaries have changed shape between versions.

use serde_json::{Map, Value, json};

use super::error::DeviceError;
use crate::desktop::backend::AppWindow;
use crate::desktop::control::{Control, ControlType, Rect};
use crate::desktop::screenshot::Image;
use crate::executor::{Listed, Scope, ScreenView};

/// The largest screenshot decoded, in pixels.
const MAX_PIXELS: u64 = 64 << 20;

/// A data collection call: its tool and its arguments.
pub(super) struct Ask {
    /// The tool.
    pub(super) tool: &'static str,
    /// Its arguments.
    pub(super) arguments: Map<String, Value>,
}

fn ask(tool: &'static str, arguments: Value) -> Ask {
    Ask {
        tool,
        arguments: arguments.as_object().cloned().unwrap_or_default(),
    }
}

/// The calls that observe the screen for `scope`, in order: what is listed, then
/// (for an app) the window's place, then the screenshot.
pub(super) fn asks(scope: Scope) -> Vec<Ask> {
    match scope {
        Scope::Desktop => vec![
            ask(
                "get_desktop_app_info",
                json!({"remove_empty": true, "refresh_app_windows": true}),
            ),
            ask("capture_desktop_screenshot", json!({"all_screens": false})),
        ],
        Scope::App | Scope::Screen => vec![
            ask(
                "get_app_window_controls_info",
                json!({"field_list": ["label", "control_text", "control_type", "control_rect"]}),
            ),
            ask(
                "get_app_window_info",
                json!({"field_list": ["control_text", "control_rect"]}),
            ),
            ask("capture_window_screenshot", json!({})),
        ],
    }
}

/// The screen from the answers to [`asks`] (in the same order).
pub(super) fn view(scope: Scope, answers: &[Value]) -> Result<ScreenView, DeviceError> {
    let screenshot = answers.last().ok_or(DeviceError::NoScreenshotAsked)?;
    let clean = image(screenshot)?;
    match scope {
        Scope::Desktop => {
            let windows = windows(&answers[0]);
            let labels: Vec<(&str, Rect)> =
                windows.iter().map(|w| (w.id.as_str(), w.rect)).collect();
            Ok(ScreenView {
                annotated: clean.labelled(&labels),
                clean,
                listed: Listed::Windows(windows),
                window: None,
                window_rect: None,
                application: None,
            })
        }
        Scope::App | Scope::Screen => {
            let window = answers.get(1).cloned().unwrap_or(Value::Null);
            let origin =
                rect(window.get("control_rect").unwrap_or(&Value::Null)).unwrap_or_default();
            let controls = controls(&answers[0], origin);
            Ok(ScreenView {
                annotated: clean.annotated(&controls),
                clean,
                listed: Listed::Controls(controls),
                window: text(&window, &["control_text", "title", "name"]),
                window_rect: Some(origin).filter(Rect::is_visible),
                application: None,
            })
        }
    }
}

/// A base64 PNG (with or without a `data:` prefix), decoded.
fn image(answer: &Value) -> Result<Image, DeviceError> {
    let text = answer
        .as_str()
        .or_else(|| answer.get("text").and_then(Value::as_str))
        .ok_or(DeviceError::ScreenshotNotText)?;
    if text.starts_with("Error") {
        return Err(DeviceError::NoScreenshot(crate::text::shorten(text, 200)));
    }
    let data = text.rsplit_once("base64,").map_or(text, |(_, d)| d).trim();
    use base64::Engine;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(data)
        .map_err(DeviceError::NotBase64)?;
    Image::from_png(&bytes, MAX_PIXELS).map_err(|e| DeviceError::NotPng(e.to_string()))
}

fn text(item: &Value, keys: &[&str]) -> Option<String> {
    keys.iter().find_map(|k| match item.get(*k)? {
        Value::String(s) => Some(s.trim().to_string()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    })
}

/// A rectangle as UFO writes one: `[left, top, right, bottom]`, or an object with
/// `left/top/right/bottom` or `x/y/width/height`.
fn rect(value: &Value) -> Option<Rect> {
    let n = |v: Option<&Value>| v.and_then(Value::as_f64).map(|f| f.round() as i32);
    let (l, t, r, b) = match value {
        Value::Array(a) if a.len() == 4 => {
            (n(a.first())?, n(a.get(1))?, n(a.get(2))?, n(a.get(3))?)
        }
        Value::Object(o) if o.contains_key("right") => (
            n(o.get("left"))?,
            n(o.get("top"))?,
            n(o.get("right"))?,
            n(o.get("bottom"))?,
        ),
        Value::Object(o) => {
            let (x, y) = (n(o.get("x"))?, n(o.get("y"))?);
            (
                x,
                y,
                x.saturating_add(n(o.get("width"))?),
                y.saturating_add(n(o.get("height"))?),
            )
        }
        _ => return None,
    };
    Some(Rect {
        x: l,
        y: t,
        width: r.saturating_sub(l),
        height: b.saturating_sub(t),
    })
}

fn items(answer: &Value) -> Vec<Value> {
    match answer {
        Value::Array(items) => items.clone(),
        Value::Object(o) => o
            .get("controls")
            .or_else(|| o.get("windows"))
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default(),
        _ => Vec::new(),
    }
}

/// The windows of a `get_desktop_app_info` answer.
pub(super) fn windows(answer: &Value) -> Vec<AppWindow> {
    items(answer)
        .iter()
        .enumerate()
        .map(|(i, w)| AppWindow {
            id: text(w, &["label", "annotation_id", "id"]).unwrap_or_else(|| (i + 1).to_string()),
            name: text(w, &["control_text", "title", "name"]).unwrap_or_default(),
            application: text(w, &["process_name", "application", "class_name"])
                .unwrap_or_default(),
            rect: w
                .get("control_rect")
                .or_else(|| w.get("rectangle"))
                .and_then(rect)
                .unwrap_or_default(),
            handle: i,
        })
        .collect()
}

/// The controls listed, their places moved into the window screenshot (`origin` is
/// the window's place on the screen).
fn controls(answer: &Value, origin: Rect) -> Vec<Control> {
    items(answer)
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let mut r = c
                .get("control_rect")
                .or_else(|| c.get("rectangle"))
                .and_then(rect)
                .unwrap_or_default();
            r.x = r.x.saturating_sub(origin.x);
            r.y = r.y.saturating_sub(origin.y);
            Control {
                id: text(c, &["label", "annotation_id", "id"])
                    .unwrap_or_else(|| (i + 1).to_string()),
                name: text(c, &["control_text", "name"]).unwrap_or_default(),
                control_type: text(c, &["control_type"])
                    .and_then(|t| ControlType::parse(&t))
                    .unwrap_or(ControlType::Custom),
                rect: r,
                editable: false,
                enabled: true,
                handle: i,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn png() -> String {
        use base64::Engine;
        let image = Image::new(64, 32);
        format!(
            "data:image/png;base64,{}",
            base64::engine::general_purpose::STANDARD.encode(image.png().unwrap())
        )
    }

    #[test]
    fn ufos_desktop_and_window_answers_are_read() {
        let desktop = view(
            Scope::Desktop,
            &[
                json!([{"label": "1", "control_text": "Document1 - Word", "control_type": "Window"},
                       {"label": "2", "control_text": "Book1 - Excel", "control_type": "Window"}]),
                json!(png()),
            ],
        )
        .unwrap();
        let Listed::Windows(w) = &desktop.listed else {
            panic!()
        };
        assert_eq!(
            (w[1].id.as_str(), w[1].name.as_str()),
            ("2", "Book1 - Excel")
        );
        assert_eq!(desktop.clean.width, 64);
        let app = view(
            Scope::App,
            &[
                json!([{"label": 1, "control_text": "Bold", "control_type": "Button", "control_rect": [110, 60, 130, 80]}]),
                json!({"control_text": "Document1 - Word", "control_rect": [100, 50, 900, 700]}),
                json!(png()),
            ],
        )
        .unwrap();
        let Listed::Controls(c) = &app.listed else {
            panic!()
        };
        assert_eq!(
            (c[0].id.as_str(), c[0].control_type),
            ("1", ControlType::Button)
        );
        assert_eq!((c[0].rect.x, c[0].rect.y, c[0].rect.width), (10, 10, 20));
        assert_eq!(app.window.as_deref(), Some("Document1 - Word"));
        let e = view(
            Scope::App,
            &[json!([]), json!({}), json!("Error: No window selected")],
        )
        .unwrap_err()
        .to_string();
        assert_eq!(
            e,
            "the device could not take the screenshot: Error: No window selected"
        );
    }

    #[test]
    fn rectangles_in_every_shape() {
        let want = Rect {
            x: 1,
            y: 2,
            width: 3,
            height: 4,
        };
        assert_eq!(rect(&json!([1, 2, 4, 6])), Some(want));
        assert_eq!(
            rect(&json!({"left": 1, "top": 2, "right": 4, "bottom": 6})),
            Some(want)
        );
        assert_eq!(
            rect(&json!({"x": 1, "y": 2, "width": 3, "height": 4})),
            Some(want)
        );
        assert_eq!(rect(&json!("no")), None);
    }
}
