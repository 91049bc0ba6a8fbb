//! Qwen-VL's `computer_use` tool calls (Qwen2.5-VL and Qwen3-VL, the format of QwenLM's
//! `cookbooks/utils/agent_function_call.py`): each call a `<tool_call>{"name":
//! "computer_use", "arguments": {"action": "left_click", "coordinate": [x, y]}}</tool_call>`,
//! several to a reply; actions `key`, `type`, `mouse_move`, `left_click`,
//! `left_click_drag` (from where the pointer is), `right_click`, `middle_click`,
//! `double_click`, `triple_click`, `scroll` and `hscroll` (`pixels`; positive: up, and
//! right), `wait` (`time`), `terminate` (`status`), `answer`. What is outside the calls
//! is the thought. The coordinates' space is the format's.

use serde_json::Value;

use super::{ModelAction, Point, ScrollUnit, number, text_of};

/// The thought and the calls' arguments of a reply.
pub(super) fn parse(text: &str) -> Result<(Option<String>, Vec<Value>), String> {
    let mut calls = Vec::new();
    let mut thought = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("<tool_call>") {
        thought.push_str(&rest[..start]);
        let after = &rest[start + "<tool_call>".len()..];
        let end = after.find("</tool_call>").unwrap_or(after.len());
        let body = after[..end].trim();
        let call: Value = serde_json::from_str(body).map_err(|e| {
            format!(
                "a <tool_call> is not JSON ({e}): {}",
                crate::text::shorten(body, 120)
            )
        })?;
        let name = call.get("name").and_then(Value::as_str).unwrap_or_default();
        if name != "computer_use" {
            return Err(format!("the tool is `computer_use`, not `{name}`"));
        }
        let arguments = call.get("arguments").cloned().unwrap_or(Value::Null);
        // Some servers send the arguments as a JSON string.
        let arguments = match arguments {
            Value::String(s) => serde_json::from_str(&s).unwrap_or(Value::Null),
            other => other,
        };
        calls.push(arguments);
        rest = after.get(end + "</tool_call>".len()..).unwrap_or("");
    }
    thought.push_str(rest);
    let thought = thought
        .replace("<thinking>", "")
        .replace("</thinking>", "")
        .trim()
        .trim_start_matches("Thought:")
        .trim()
        .to_string();
    if calls.is_empty() {
        return Err("the reply has no <tool_call> (call the computer_use tool)".to_string());
    }
    Ok(((!thought.is_empty()).then_some(thought), calls))
}

fn coordinate(v: Option<&Value>) -> Option<Point> {
    let a = v?.as_array()?;
    match a.as_slice() {
        [x, y] => Some((number(Some(x))?, number(Some(y))?)),
        _ => None,
    }
}

/// The action a call's arguments ask for; `pointer` is where the last action left the
/// pointer (in the model's space), where a drag starts.
pub(super) fn action(args: &Value, pointer: Option<Point>) -> Result<ModelAction, String> {
    let kind = args
        .get("action")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let at = || {
        coordinate(args.get("coordinate"))
            .ok_or_else(|| format!("`{kind}` needs `coordinate`: [x, y]"))
    };
    let click = |button: &str, count: u8| -> Result<ModelAction, String> {
        Ok(ModelAction::Click {
            at: Some(at()?),
            button: button.to_string(),
            count,
            keys: Vec::new(),
        })
    };
    let pixels = || number(args.get("pixels")).unwrap_or(0.0);
    match kind {
        "left_click" => click("left", 1),
        "right_click" => click("right", 1),
        "middle_click" => click("middle", 1),
        "double_click" => click("left", 2),
        "triple_click" => click("left", 3),
        "mouse_move" => Ok(ModelAction::Move {
            at: at()?,
            keys: Vec::new(),
        }),
        "left_click_drag" => {
            let to = at()?;
            let from = pointer.ok_or("`left_click_drag` starts where the pointer is: move it there first with mouse_move")?;
            Ok(ModelAction::Drag {
                path: vec![from, to],
                keys: Vec::new(),
            })
        }
        "key" => {
            let keys: Vec<String> = match args.get("keys") {
                Some(Value::Array(k)) => k
                    .iter()
                    .filter_map(|v| v.as_str().map(str::to_string))
                    .collect(),
                Some(Value::String(s)) => s.split('+').map(str::to_string).collect(),
                _ => Vec::new(),
            };
            if keys.is_empty() {
                return Err("`key` needs `keys`, such as [\"ctrl\", \"s\"]".to_string());
            }
            Ok(ModelAction::Keypress { keys, repeat: 1 })
        }
        "type" => Ok(ModelAction::Type {
            text: text_of(args.get("text")).ok_or("`type` needs `text`")?,
        }),
        // Positive pixels scroll up (and right): the wheel's down is the other way.
        "scroll" => Ok(ModelAction::Scroll {
            at: coordinate(args.get("coordinate")),
            dx: 0.0,
            dy: -pixels(),
            unit: ScrollUnit::Pixels,
            keys: Vec::new(),
        }),
        "hscroll" => Ok(ModelAction::Scroll {
            at: coordinate(args.get("coordinate")),
            dx: pixels(),
            dy: 0.0,
            unit: ScrollUnit::Pixels,
            keys: Vec::new(),
        }),
        "wait" => Ok(ModelAction::Wait {
            seconds: number(args.get("time")).unwrap_or(1.0),
        }),
        "terminate" => {
            let status = args
                .get("status")
                .and_then(Value::as_str)
                .unwrap_or("success");
            Ok(ModelAction::Done {
                success: status != "failure",
                message: format!("the model ended the task: {status}"),
            })
        }
        "answer" => Ok(ModelAction::Done {
            success: true,
            message: text_of(args.get("text")).unwrap_or_default(),
        }),
        "" => Err("the call has no `action`".to_string()),
        other => Err(format!(
            "unknown action `{other}` (key, type, mouse_move, left_click, left_click_drag, right_click, middle_click, double_click, triple_click, scroll, hscroll, wait, terminate, answer)"
        )),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn tool_calls_are_read_with_the_thought() {
        let text = "I click the text area.\n<tool_call>\n{\"name\": \"computer_use\", \"arguments\": {\"action\": \"left_click\", \"coordinate\": [640, 400]}}\n</tool_call>\n<tool_call>{\"name\": \"computer_use\", \"arguments\": {\"action\": \"key\", \"keys\": [\"ctrl\", \"s\"]}}</tool_call>";
        let (thought, calls) = parse(text).unwrap();
        assert_eq!(thought.as_deref(), Some("I click the text area."));
        assert_eq!(calls.len(), 2);
        assert_eq!(
            action(&calls[0], None).unwrap(),
            ModelAction::Click {
                at: Some((640.0, 400.0)),
                button: "left".into(),
                count: 1,
                keys: vec![]
            }
        );
        assert_eq!(
            action(&calls[1], None).unwrap(),
            ModelAction::Keypress {
                keys: vec!["ctrl".into(), "s".into()],
                repeat: 1
            }
        );
    }

    #[test]
    fn drags_start_at_the_pointer_and_scrolls_go_the_models_way() {
        let drag = json!({"action": "left_click_drag", "coordinate": [50, 60]});
        assert!(
            action(&drag, None)
                .unwrap_err()
                .contains("move it there first")
        );
        assert_eq!(
            action(&drag, Some((1.0, 2.0))).unwrap(),
            ModelAction::Drag {
                path: vec![(1.0, 2.0), (50.0, 60.0)],
                keys: vec![]
            }
        );
        let up = action(&json!({"action": "scroll", "pixels": 300}), None).unwrap();
        assert!(matches!(up, ModelAction::Scroll { dy, .. } if dy == -300.0));
        let done = action(&json!({"action": "terminate", "status": "failure"}), None).unwrap();
        assert!(matches!(done, ModelAction::Done { success: false, .. }));
    }

    #[test]
    fn bad_replies_say_why() {
        assert!(parse("just text").unwrap_err().contains("no <tool_call>"));
        assert!(
            parse("<tool_call>{bad</tool_call>")
                .unwrap_err()
                .contains("not JSON")
        );
        let (_, calls) = parse("<tool_call>{\"name\": \"computer_use\", \"arguments\": {\"action\": \"fly\"}}</tool_call>").unwrap();
        assert!(
            action(&calls[0], None)
                .unwrap_err()
                .starts_with("unknown action `fly`")
        );
    }
}
