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
use serde_json::{Value, json};

use super::{Ask, ComputerModel, ModelCall, ModelError, Turn, outcome_text};
use crate::llm::LlmClient;

mod read;

use read::read;

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

#[cfg(test)]
mod tests;
