//! OpenAI's Responses API with its computer tool (`POST {base}/responses`), as the
//! `openai` SDK types it (`openai/types/responses/`, 3.51): the GA tool
//! (`computer_tool_param.py`: `{"type": "computer"}`, no display size) whose
//! `computer_call` items carry a batch of `actions` (`response_computer_tool_call.py`),
//! or the preview tool (`computer_use_preview_tool_param.py`: display size and
//! environment; one `action` per call) for servers that still serve it. The
//! conversation is the server's: each request names the last response
//! (`previous_response_id`) with `truncation: "auto"`, and answers every `computer_call`
//! with a `computer_call_output` holding the screen after it
//! (`response_input_param.py` `ComputerCallOutput`; the screenshot param,
//! `response_computer_tool_call_output_screenshot_param.py`, has no `detail`: the image
//! goes at the resolution it has). The API has no error field for an action: a failed
//! one is said in a user message beside the screenshot, as peers do. `reasoning`
//! summaries are the thought; a `message` is the end.

use async_trait::async_trait;
use serde_json::{Map, Value, json};

use super::{
    Ask, ComputerModel, ModelAction, ModelCall, ModelError, SafetyCheck, ScrollUnit, Turn, number,
    outcome_text, text_of,
};
use crate::llm::LlmClient;

/// How long the model's `wait` waits (UFO's `WaitCommand`: 3 s).
const WAIT_S: f64 = 3.0;

/// Which computer tool is offered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum OpenAiTool {
    /// The GA tool, `{"type": "computer"}`.
    Computer,
    /// `computer_use_preview`, with the display's size and this environment.
    Preview {
        /// `windows`, `mac`, `linux`, `ubuntu` or `browser`.
        environment: String,
    },
}

/// The operator's conversation with an OpenAI model.
pub(crate) struct OpenAiModel {
    model: String,
    tool: OpenAiTool,
    max_output_tokens: u32,
    /// The last response, which the next request continues.
    previous: Option<String>,
    /// The `computer_call`s of the last response not yet answered, in order.
    pending: Vec<String>,
}

impl OpenAiModel {
    /// A conversation with `model` through `tool`.
    pub(crate) fn new(model: &str, tool: OpenAiTool, max_output_tokens: u32) -> Self {
        Self {
            model: model.to_string(),
            tool,
            max_output_tokens,
            previous: None,
            pending: Vec::new(),
        }
    }

    fn tool_json(&self, width: u32, height: u32) -> Value {
        match &self.tool {
            OpenAiTool::Computer => json!({"type": "computer"}),
            OpenAiTool::Preview { environment } => json!({
                "type": "computer_use_preview",
                "display_width": width,
                "display_height": height,
                "environment": environment,
            }),
        }
    }

    /// The request body of `ask`.
    fn body(&self, ask: &Ask<'_>) -> Value {
        let screen = ask.screen;
        let mut input: Vec<Value> = Vec::new();
        if let Some(instruction) = ask.instruction {
            input.push(json!({
                "role": "user",
                "content": [
                    {"type": "input_text", "text": instruction},
                    {"type": "input_image", "image_url": screen.data_url(), "detail": "original"},
                ],
            }));
        }
        for call_id in &self.pending {
            let mut output = json!({
                "type": "computer_call_output",
                "call_id": call_id,
                "output": {"type": "computer_screenshot", "image_url": screen.data_url()},
            });
            // Each call's own checks, acknowledged on its output.
            let checks: Vec<Value> = ask
                .acknowledged
                .iter()
                .filter(|c| c.call_id.as_deref().is_none_or(|id| id == call_id))
                .map(|c| json!({"id": c.id, "code": c.code, "message": c.message}))
                .collect();
            if !checks.is_empty() {
                output["acknowledged_safety_checks"] = json!(checks);
            }
            input.push(output);
        }
        // What went wrong, in words: the API has no error field for an action.
        let troubled: Vec<String> = ask
            .outcomes
            .iter()
            .filter(|o| o.skipped || o.result.is_err())
            .map(outcome_text)
            .collect();
        let mut said = Vec::new();
        if !troubled.is_empty() {
            said.push(format!("Of your last actions: {}", troubled.join("; ")));
        }
        if let Some(why) = ask.correction {
            said.push(why.to_string());
        }
        // With no call to answer (a reply corrected), the screen goes with the words.
        let screen_too = ask.instruction.is_none() && self.pending.is_empty();
        if !said.is_empty() || screen_too {
            let mut content = vec![
                json!({"type": "input_text", "text": if said.is_empty() { "The screen now:".to_string() } else { said.join("\n") }}),
            ];
            if screen_too {
                content.push(json!({"type": "input_image", "image_url": screen.data_url(), "detail": "original"}));
            }
            input.push(json!({"role": "user", "content": content}));
        }
        let mut body = json!({
            "model": self.model,
            "tools": [self.tool_json(screen.width, screen.height)],
            "input": input,
            "truncation": "auto",
            "reasoning": {"summary": "concise"},
            "max_output_tokens": self.max_output_tokens,
        });
        if let Some(previous) = &self.previous {
            body["previous_response_id"] = json!(previous);
        }
        body
    }
}

#[async_trait]
impl ComputerModel for OpenAiModel {
    fn restart(&mut self) {
        self.previous = None;
        self.pending.clear();
    }

    async fn ask(
        &mut self,
        client: &LlmClient,
        ask: Ask<'_>,
        notify: &(dyn Fn(String) + Send + Sync),
    ) -> Result<Turn, ModelError> {
        let body = self.body(&ask);
        let images = super::images_in(&body["input"]);
        let (answer, answered) = client.post(&body, notify).await?;
        // Whatever the reply holds, its calls are answered by the next request; the
        // conversation goes on from it only when it is a response (a failed one is not).
        self.pending.clear();
        let mut turn = read(&answer)?;
        if let Some(id) = answer.get("id").and_then(Value::as_str) {
            self.previous = Some(id.to_string());
        }
        self.pending = unique_ids(&turn.calls);
        turn.answered = answered;
        turn.images = images;
        Ok(turn)
    }
}

/// The calls' ids, each once, in order.
fn unique_ids(calls: &[ModelCall]) -> Vec<String> {
    let mut ids: Vec<String> = Vec::new();
    for c in calls {
        if !ids.contains(&c.id) {
            ids.push(c.id.clone());
        }
    }
    ids
}

/// A response's thought, actions, final message and safety checks.
fn read(answer: &Value) -> Result<Turn, ModelError> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::computer::{Outcome, Png};

    fn png() -> Png {
        Png {
            bytes: std::sync::Arc::new(vec![0x89, b'P', b'N', b'G']),
            width: 1280,
            height: 800,
        }
    }

    #[test]
    fn a_batch_of_actions_is_read_in_order_with_its_checks() {
        let answer = json!({
            "id": "resp_1",
            "output": [
                {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "Open the file menu."}]},
                {"type": "computer_call", "id": "cu_1", "call_id": "call_1", "status": "completed",
                 "pending_safety_checks": [{"id": "sc_1", "code": "sensitive_domain", "message": "careful"}],
                 "actions": [
                    {"type": "click", "button": "left", "x": 10, "y": 20, "keys": ["CTRL"]},
                    {"type": "type", "text": "naïve"},
                    {"type": "teleport"},
                    {"type": "click", "button": "left"}
                 ]}
            ]
        });
        let turn = read(&answer).unwrap();
        assert_eq!(turn.thought.as_deref(), Some("Open the file menu."));
        assert_eq!(turn.calls.len(), 4);
        assert!(turn.calls.iter().all(|c| c.id == "call_1"));
        assert_eq!(
            turn.calls[0].action,
            Ok(ModelAction::Click {
                at: Some((10.0, 20.0)),
                button: "left".into(),
                count: 1,
                keys: vec!["CTRL".into()]
            })
        );
        assert!(
            turn.calls[2]
                .action
                .as_ref()
                .unwrap_err()
                .starts_with("unknown action type `teleport`")
        );
        assert_eq!(
            turn.calls[3].action,
            Err("the `click` action needs `x` and `y`".to_string())
        );
        assert_eq!(
            turn.safety_checks[0].code.as_deref(),
            Some("sensitive_domain")
        );
        assert!(turn.message.is_none());
    }

    #[test]
    fn the_next_request_answers_every_call_with_the_screen() {
        let mut model = OpenAiModel::new("gpt-5.4", OpenAiTool::Computer, 4096);
        let first = model.body(&Ask {
            instruction: Some("do it"),
            outcomes: &[],
            screen: &png(),
            acknowledged: &[],
            correction: None,
        });
        assert_eq!(first["tools"], json!([{"type": "computer"}]));
        assert_eq!(first["truncation"], "auto");
        assert_eq!(first["input"][0]["content"][1]["detail"], "original");
        assert!(first.get("previous_response_id").is_none());
        model.previous = Some("resp_1".into());
        model.pending = vec!["call_1".into()];
        let check = SafetyCheck {
            id: "sc_1".into(),
            code: Some("sensitive_domain".into()),
            message: None,
            call_id: Some("call_1".into()),
        };
        let failed = Outcome {
            id: "call_1".into(),
            result: Err("(5000, 10) is off the screen".into()),
            skipped: false,
            picture: None,
        };
        let next = model.body(&Ask {
            instruction: None,
            outcomes: &[failed],
            screen: &png(),
            acknowledged: &[check],
            correction: None,
        });
        assert_eq!(next["previous_response_id"], "resp_1");
        let output = &next["input"][0];
        assert_eq!(output["type"], "computer_call_output");
        assert_eq!(output["call_id"], "call_1");
        assert_eq!(output["output"]["type"], "computer_screenshot");
        assert!(output["output"].get("detail").is_none());
        assert_eq!(output["acknowledged_safety_checks"][0]["id"], "sc_1");
        let note = next["input"][1]["content"][0]["text"].as_str().unwrap();
        assert!(
            note.contains("failed: (5000, 10) is off the screen"),
            "{note}"
        );
        let preview = OpenAiModel::new(
            "cu",
            OpenAiTool::Preview {
                environment: "linux".into(),
            },
            10,
        );
        assert_eq!(
            preview.tool_json(1280, 800),
            json!({"type": "computer_use_preview", "display_width": 1280, "display_height": 800, "environment": "linux"})
        );
    }

    #[test]
    fn a_message_alone_is_the_end_and_an_error_is_unusable() {
        let end = read(&json!({"id": "r", "output": [
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "All saved."}]}
        ]}))
        .unwrap();
        assert_eq!(end.message.as_deref(), Some("All saved."));
        assert!(end.calls.is_empty());
        let Err(ModelError::Unusable(why)) =
            read(&json!({"id": "r", "error": {"code": "x", "message": "boom"}, "output": []}))
        else {
            panic!()
        };
        assert_eq!(why, "the response failed: boom");
    }
}
