//! Reading a response: its thought (the `reasoning` summaries), the actions of its
//! `computer_call`s, its final message and its safety checks.

use serde_json::{Map, Value};

use super::WAIT_S;
use crate::llm::computer::{
    ModelAction, ModelCall, ModelError, SafetyCheck, ScrollUnit, Turn, number, text_of,
};

/// A response's thought, actions, final message and safety checks.
pub(super) fn read(answer: &Value) -> Result<Turn, ModelError> {
    if let Some(error) = answer.get("error").filter(|e| !e.is_null()) {
        let message = error
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or("no message");
        return Err(ModelError::Unusable(format!(
            "the response failed: {message}"
        )));
    }
    let output = answer
        .get("output")
        .and_then(Value::as_array)
        .ok_or_else(|| ModelError::Unusable("the response has no `output`".to_string()))?;
    let mut thoughts = Vec::new();
    let mut texts = Vec::new();
    let mut calls = Vec::new();
    let mut safety_checks = Vec::new();
    for item in output {
        match item.get("type").and_then(Value::as_str) {
            Some("reasoning") => {
                for s in item["summary"].as_array().into_iter().flatten() {
                    if let Some(t) = s.get("text").and_then(Value::as_str) {
                        thoughts.push(t.trim().to_string());
                    }
                }
            }
            Some("message") => {
                for c in item["content"].as_array().into_iter().flatten() {
                    let t = c.get("text").or_else(|| c.get("refusal"));
                    if let Some(t) = t.and_then(Value::as_str) {
                        texts.push(t.trim().to_string());
                    }
                }
            }
            Some("computer_call") => {
                let id = text_of(item.get("call_id")).unwrap_or_default();
                for check in item["pending_safety_checks"]
                    .as_array()
                    .into_iter()
                    .flatten()
                {
                    safety_checks.push(SafetyCheck {
                        id: text_of(check.get("id")).unwrap_or_default(),
                        code: text_of(check.get("code")),
                        message: text_of(check.get("message")),
                        call_id: Some(id.clone()),
                    });
                }
                // The GA tool batches `actions`; the preview tool sends one `action`.
                let actions: Vec<Value> = match (item.get("actions"), item.get("action")) {
                    (Some(Value::Array(list)), _) if !list.is_empty() => list.clone(),
                    (_, Some(one)) if one.is_object() => vec![one.clone()],
                    _ => vec![Value::Null],
                };
                for raw in actions {
                    calls.push(ModelCall {
                        id: id.clone(),
                        action: action(&raw),
                        raw,
                    });
                }
            }
            _ => {}
        }
    }
    let thought = (!thoughts.is_empty()).then(|| thoughts.join("\n"));
    let message = (!texts.is_empty()).then(|| texts.join("\n"));
    // A call with no id cannot be answered: the reply is not used.
    if calls.iter().any(|c| c.id.trim().is_empty()) {
        return Err(ModelError::Unusable(
            "a computer_call has no call_id, so it cannot be answered".to_string(),
        ));
    }
    let mut turn = Turn::read(thought, calls, message);
    turn.safety_checks = safety_checks;
    Ok(turn)
}

/// The keys held (`keys`), as names.
fn keys(o: &Map<String, Value>) -> Vec<String> {
    o.get("keys")
        .and_then(Value::as_array)
        .map(|k| {
            k.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// One action of a `computer_call` (`computer_action.py`), read.
fn action(raw: &Value) -> Result<ModelAction, String> {
    const TYPES: &str = "click, double_click, drag, keypress, move, screenshot, scroll, type, wait";
    let Some(o) = raw.as_object() else {
        return Err("the computer call carries no action".to_string());
    };
    let kind = o.get("type").and_then(Value::as_str).unwrap_or_default();
    let point = || -> Result<(f64, f64), String> {
        match (number(o.get("x")), number(o.get("y"))) {
            (Some(x), Some(y)) => Ok((x, y)),
            _ => Err(format!("the `{kind}` action needs `x` and `y`")),
        }
    };
    Ok(match kind {
        "click" => ModelAction::Click {
            at: Some(point()?),
            button: text_of(o.get("button")).unwrap_or_else(|| "left".to_string()),
            count: 1,
            keys: keys(o),
        },
        "double_click" => ModelAction::Click {
            at: Some(point()?),
            button: "left".to_string(),
            count: 2,
            keys: keys(o),
        },
        "move" => ModelAction::Move {
            at: point()?,
            keys: keys(o),
        },
        "drag" => {
            let path: Option<Vec<(f64, f64)>> = o
                .get("path")
                .and_then(Value::as_array)
                .map(|p| {
                    p.iter()
                        .map(|pt| Some((number(pt.get("x"))?, number(pt.get("y"))?)))
                        .collect()
                })
                .unwrap_or(None);
            match path {
                Some(path) if path.len() >= 2 => ModelAction::Drag {
                    path,
                    keys: keys(o),
                },
                _ => {
                    return Err(
                        "the `drag` action needs a `path` of two or more {x, y} points".to_string(),
                    );
                }
            }
        }
        "scroll" => ModelAction::Scroll {
            at: Some(point()?),
            dx: number(o.get("scroll_x")).unwrap_or(0.0),
            dy: number(o.get("scroll_y")).unwrap_or(0.0),
            unit: ScrollUnit::Pixels,
            keys: keys(o),
        },
        "keypress" => {
            let keys = keys(o);
            if keys.is_empty() {
                return Err("the `keypress` action needs `keys`".to_string());
            }
            ModelAction::Keypress { keys, repeat: 1 }
        }
        "type" => ModelAction::Type {
            text: text_of(o.get("text")).ok_or("the `type` action needs `text`")?,
        },
        "wait" => ModelAction::Wait { seconds: WAIT_S },
        "screenshot" => ModelAction::Screenshot,
        "" => return Err(format!("the action has no `type` (one of {TYPES})")),
        other => return Err(format!("unknown action type `{other}` (one of {TYPES})")),
    })
}
