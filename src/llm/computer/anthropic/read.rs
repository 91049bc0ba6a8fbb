//! Reading a reply: its text and the actions its `tool_use` blocks ask for, member by
//! member (a key text of several chords is several actions).

use serde_json::{Value, json};

use crate::llm::computer::{ModelAction, ModelCall, ScrollUnit, Turn, number, text_of};

/// A reply's text (the thought, or with no action the final message) and actions.
pub(super) fn read(content: &[Value]) -> Turn {
    let mut texts = Vec::new();
    let mut calls = Vec::new();
    for block in content {
        match block.get("type").and_then(Value::as_str) {
            Some("text") => {
                if let Some(t) = block.get("text").and_then(Value::as_str) {
                    texts.push(t.trim().to_string());
                }
            }
            Some("tool_use") => {
                let id = text_of(block.get("id")).unwrap_or_default();
                let input = block.get("input").cloned().unwrap_or(Value::Null);
                let name = block
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                // The older tool is named `computer` and says its member in `action`
                // (its blocks carry no toolset, or a null one).
                let toolset = block.get("toolset_name").filter(|v| !v.is_null());
                let member = if name == "computer" && toolset.is_none() {
                    input
                        .get("action")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                } else {
                    name
                };
                for action in actions(member, &input) {
                    calls.push(ModelCall {
                        id: id.clone(),
                        action,
                        raw: json!({"name": member, "input": input}),
                    });
                }
            }
            _ => {}
        }
    }
    let text = (!texts.is_empty()).then(|| texts.join("\n"));
    let (thought, message) = if calls.is_empty() {
        (None, text)
    } else {
        (text, None)
    };
    Turn::read(thought, calls, message)
}

/// A point `[x, y]`.
fn point(v: Option<&Value>) -> Option<(f64, f64)> {
    let a = v?.as_array()?;
    match a.as_slice() {
        [x, y] => Some((number(Some(x))?, number(Some(y))?)),
        _ => None,
    }
}

/// The chords of an xdotool key text: sequences split by spaces, each chord by `+`.
fn chords(text: &str) -> Vec<Vec<String>> {
    text.split_whitespace().map(chord_names).collect()
}

/// The key names of one chord written as text (`ctrl+s`, `ctrl++`, `+`).
pub(crate) fn chord_names(text: &str) -> Vec<String> {
    let text = text.trim();
    if text == "+" {
        return vec!["+".to_string()];
    }
    let mut parts: Vec<String> = text
        .split('+')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(str::to_string)
        .collect();
    if text.ends_with("++") {
        parts.push("+".to_string());
    }
    parts
}

/// The actions a member's input asks for (a key text of several chords is several).
fn actions(member: &str, input: &Value) -> Vec<Result<ModelAction, String>> {
    let field = |k: &str| input.get(k).filter(|v| !v.is_null());
    let held = || {
        field("text")
            .and_then(Value::as_str)
            .map(chord_names)
            .unwrap_or_default()
    };
    // A coordinate given that is no `[x, y]` of numbers is the action's mistake, not
    // "where the pointer is".
    if let Some(c) = field("coordinate")
        && point(Some(c)).is_none()
    {
        return vec![Err(format!(
            "`{member}` has a `coordinate` that is not [x, y] in pixels of the screenshot: {}",
            crate::text::shorten(&c.to_string(), 80)
        ))];
    }
    let at = || point(field("coordinate"));
    let needs_at = |what: &str| -> Result<(f64, f64), String> {
        at().ok_or_else(|| {
            format!("`{what}` needs `coordinate`: [x, y] in pixels of the screenshot")
        })
    };
    let click = |button: &str, count: u8| {
        Ok(ModelAction::Click {
            at: at(),
            button: button.to_string(),
            count,
            keys: held(),
        })
    };
    let one = |a: Result<ModelAction, String>| vec![a];
    match member {
        "left_click" => one(click("left", 1)),
        "right_click" => one(click("right", 1)),
        "middle_click" => one(click("middle", 1)),
        "double_click" => one(click("left", 2)),
        "triple_click" => one(click("left", 3)),
        "mouse_move" => {
            one(needs_at("mouse_move").map(|at| ModelAction::Move { at, keys: vec![] }))
        }
        "left_click_drag" => one(match (point(field("start_coordinate")), at()) {
            (Some(from), Some(to)) => Ok(ModelAction::Drag {
                path: vec![from, to],
                keys: held(),
            }),
            _ => Err("`left_click_drag` needs `start_coordinate` and `coordinate`".to_string()),
        }),
        "left_mouse_down" | "left_mouse_up" => one(Ok(ModelAction::Button {
            at: at(),
            button: "left".to_string(),
            down: member == "left_mouse_down",
        })),
        "scroll" => {
            let amount = number(field("scroll_amount")).unwrap_or(3.0);
            let direction = field("scroll_direction")
                .and_then(Value::as_str)
                .unwrap_or("");
            let (dx, dy) = match direction {
                "up" => (0.0, -amount),
                "down" => (0.0, amount),
                "left" => (-amount, 0.0),
                "right" => (amount, 0.0),
                other => {
                    return one(Err(format!(
                        "`scroll` needs `scroll_direction` up, down, left or right, not {other:?}"
                    )));
                }
            };
            one(Ok(ModelAction::Scroll {
                at: at(),
                dx,
                dy,
                unit: ScrollUnit::Notches,
                keys: held(),
            }))
        }
        "key" => {
            let Some(text) = field("text").and_then(Value::as_str) else {
                return one(Err("`key` needs `text`, such as \"ctrl+s\"".to_string()));
            };
            let repeat = number(field("repeat")).unwrap_or(1.0).max(1.0) as u32;
            let chords = chords(text);
            if chords.is_empty() {
                return one(Err("`key` needs `text`, such as \"ctrl+s\"".to_string()));
            }
            chords
                .into_iter()
                .map(|keys| Ok(ModelAction::Keypress { keys, repeat }))
                .collect()
        }
        "hold_key" => one(match field("text").and_then(Value::as_str) {
            Some(text) => Ok(ModelAction::HoldKey {
                keys: chord_names(text),
                seconds: number(field("duration")).unwrap_or(1.0),
            }),
            None => Err("`hold_key` needs `text` and `duration`".to_string()),
        }),
        "type" => one(match field("text").and_then(Value::as_str) {
            Some(text) => Ok(ModelAction::Type {
                text: text.to_string(),
            }),
            None => Err("`type` needs `text`".to_string()),
        }),
        "wait" => one(Ok(ModelAction::Wait {
            seconds: number(field("duration")).unwrap_or(1.0),
        })),
        "screenshot" => one(Ok(ModelAction::Screenshot)),
        "cursor_position" => one(Ok(ModelAction::CursorPosition)),
        "zoom" => one(match field("region").and_then(Value::as_array) {
            Some(r) if r.len() == 4 => {
                let n: Vec<Option<f64>> = r.iter().map(|v| number(Some(v))).collect();
                match n.as_slice() {
                    [Some(x0), Some(y0), Some(x1), Some(y1)] => Ok(ModelAction::Zoom {
                        from: (*x0, *y0),
                        to: (*x1, *y1),
                    }),
                    _ => Err("`zoom` needs `region`: [x0, y0, x1, y1]".to_string()),
                }
            }
            _ => Err("`zoom` needs `region`: [x0, y0, x1, y1]".to_string()),
        }),
        "" => one(Err("the tool use names no action".to_string())),
        other => one(Err(format!(
            "unknown action `{other}` (the computer tool's actions are key, hold_key, type, cursor_position, mouse_move, left_mouse_down, left_mouse_up, left_click, left_click_drag, right_click, middle_click, double_click, triple_click, scroll, wait, screenshot, zoom)"
        ))),
    }
}
