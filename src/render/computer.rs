//! What a computer-use action's record says of where it acted, in words, for the
//! trajectories: the model's own point and the space it is in, the desktop pixel (and,
//! in a replay, how it was found), the window it acted in, and the element it hit.

use serde_json::Value;

use crate::record::ActionRecord;

/// A point `[x, y]` or `{x, y}` as `(x, y)`.
fn point(v: &Value) -> Option<String> {
    let (x, y) = match v {
        Value::Array(a) if a.len() == 2 => (a[0].as_f64()?, a[1].as_f64()?),
        Value::Object(o) => (o.get("x")?.as_f64()?, o.get("y")?.as_f64()?),
        _ => return None,
    };
    Some(format!("({x}, {y})"))
}

fn rect(v: &Value) -> Option<String> {
    let n = |k: &str| v.get(k).and_then(Value::as_i64);
    Some(format!(
        "({}, {}) {}x{}",
        n("x")?,
        n("y")?,
        n("width")?,
        n("height")?
    ))
}

/// The labelled lines of `action`'s computer-use record (none for other tools).
pub(super) fn details(action: &ActionRecord) -> Vec<(&'static str, String)> {
    if !crate::desktop::computer::is_computer_tool(&action.function) {
        return Vec::new();
    }
    let args = &action.arguments;
    let result = &action.result.result;
    let mut out = Vec::new();
    if let Some(model) = args.get("model") {
        let at = point(model)
            .or_else(|| model.get("region").map(Value::to_string))
            .or_else(|| model.get("path").map(Value::to_string));
        if let Some(at) = at {
            let space = model.get("space").and_then(Value::as_str).unwrap_or("");
            out.push(("Model's point", format!("{at} in {space}")));
        }
    }
    if let Some(at) = result.get("at").and_then(point) {
        let how = result
            .get("how")
            .and_then(Value::as_str)
            .map(|h| format!(", {h}"))
            .unwrap_or_default();
        out.push(("Desktop point", format!("{at}{how}")));
    }
    if let Some(window) = args.get("window").and_then(rect) {
        out.push(("Window", window));
    }
    if let Some(element) = result.get("element") {
        let name = element.get("name").and_then(Value::as_str).unwrap_or("");
        let role = element.get("role").and_then(Value::as_str).unwrap_or("?");
        let path = element
            .get("path_text")
            .and_then(Value::as_str)
            .unwrap_or("");
        let named = if name.trim().is_empty() {
            String::new()
        } else {
            format!(" {:?}", crate::text::shorten(name.trim(), 80))
        };
        let at = element
            .get("rect")
            .and_then(rect)
            .map(|r| format!(" at {r}"))
            .unwrap_or_default();
        out.push(("Element", format!("{role}{named}{at} ({path})")));
    }
    out
}
