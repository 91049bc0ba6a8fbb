//! Anthropic's Messages API with its computer tool (`POST {base}/v1/messages`), as the
//! `anthropic` SDK types it (2.10): the computer toolset
//! (`computer_toolset_20260801_param.py`: a `tools[]` entry with only `type`, `configs`
//! and `cache_control`, no display size; its 17 members, `computer_member_name.py`,
//! come back as `tool_use` blocks named by member and carrying `toolset_name:
//! "computer"`, several to a reply), or the older single tool
//! (`beta/beta_tool_computer_use_20251124_param.py`: `name: "computer"`, the display's
//! size, `enable_zoom`; the member in `input.action`; the beta header
//! `computer-use-2025-11-24`). Coordinates are pixels of the image the model saw. Every
//! `tool_use` gets a `tool_result` (`tool_result_block_param.py`, echoing
//! `toolset_name`), in order: a failed action's `is_error`, the ones after it not run;
//! the screen after the batch goes with the last. The conversation is ours: only the
//! last `keep_screenshots` images are sent again.

use async_trait::async_trait;
use serde_json::{Map, Value, json};

use super::{Ask, ComputerModel, ModelError, Png, Turn, outcome_text};
use crate::llm::LlmClient;

mod read;

use read::read;

/// The beta header the older tool needs.
pub(crate) const COMPUTER_20251124_BETA: &str = "computer-use-2025-11-24";

/// Which computer tool is offered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AnthropicTool {
    /// `computer_toolset_20260801`.
    Toolset,
    /// `computer_20251124` (beta).
    Computer20251124,
}

impl AnthropicTool {
    /// The tool's type name (the `[operator] tool` value).
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Toolset => "computer_toolset_20260801",
            Self::Computer20251124 => "computer_20251124",
        }
    }
}

/// What stands for an image no longer sent.
const OMITTED: &str = "(an earlier screenshot, no longer shown)";

/// The operator's conversation with an Anthropic model.
pub(crate) struct AnthropicModel {
    model: String,
    tool: AnthropicTool,
    max_tokens: u32,
    system: String,
    keep_screenshots: usize,
    messages: Vec<Value>,
    /// The `tool_use` ids of the last reply not yet answered, in order.
    pending: Vec<String>,
}

impl AnthropicModel {
    /// A conversation with `model` through `tool`; the last `keep_screenshots` images
    /// are sent.
    pub(crate) fn new(
        model: &str,
        tool: AnthropicTool,
        max_tokens: u32,
        system: String,
        keep_screenshots: usize,
    ) -> Self {
        Self {
            model: model.to_string(),
            tool,
            max_tokens,
            system,
            keep_screenshots: keep_screenshots.max(1),
            messages: Vec::new(),
            pending: Vec::new(),
        }
    }

    fn tool_json(&self, width: u32, height: u32) -> Value {
        match self.tool {
            AnthropicTool::Toolset => json!({"type": "computer_toolset_20260801"}),
            AnthropicTool::Computer20251124 => json!({
                "type": "computer_20251124",
                "name": "computer",
                "display_width_px": width,
                "display_height_px": height,
                "enable_zoom": true,
            }),
        }
    }

    /// The user message of `ask`: the instruction, or the results of the last reply's
    /// calls, with the screen.
    fn user_message(&self, ask: &Ask<'_>) -> Value {
        let mut content: Vec<Value> = Vec::new();
        if let Some(instruction) = ask.instruction {
            content.push(json!({"type": "text", "text": instruction}));
        }
        let last = self.pending.len().saturating_sub(1);
        for (i, id) in self.pending.iter().enumerate() {
            let outcomes: Vec<_> = ask.outcomes.iter().filter(|o| &o.id == id).collect();
            let failed = outcomes.iter().any(|o| o.skipped || o.result.is_err());
            let mut parts: Vec<Value> = Vec::new();
            let text: Vec<String> = if outcomes.is_empty() {
                vec!["not run: an earlier action of the same reply failed".to_string()]
            } else {
                outcomes.iter().map(|o| outcome_text(o)).collect()
            };
            parts.push(json!({"type": "text", "text": text.join("; ")}));
            for o in &outcomes {
                if let Some(picture) = &o.picture {
                    parts.push(image(picture));
                }
            }
            if i == last && !failed {
                parts.push(image(ask.screen));
            }
            let mut result = json!({"type": "tool_result", "tool_use_id": id, "content": parts});
            if failed || outcomes.is_empty() {
                result["is_error"] = json!(true);
            }
            if self.tool == AnthropicTool::Toolset {
                result["toolset_name"] = json!("computer");
            }
            content.push(result);
        }
        let errored = ask.outcomes.iter().any(|o| o.skipped || o.result.is_err());
        if ask.instruction.is_some() || self.pending.is_empty() || errored {
            // The screen goes once per message: with the instruction, or after an error
            // (the last result then carries none).
            content.push(image(ask.screen));
        }
        if let Some(why) = ask.correction {
            content.push(json!({"type": "text", "text": why}));
        }
        json!({"role": "user", "content": content})
    }

    /// The request body: the conversation with its older images folded.
    fn body(&self, width: u32, height: u32) -> Value {
        let mut messages = self.messages.clone();
        fold_images(&mut messages, self.keep_screenshots);
        json!({
            "model": self.model,
            "max_tokens": self.max_tokens,
            "system": self.system,
            "tools": [self.tool_json(width, height)],
            "messages": messages,
        })
    }
}

/// A base64 PNG image block.
fn image(png: &Png) -> Value {
    json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": png.base64()}})
}

/// Replaces every image but the last `keep` (counting from the end) by a note.
fn fold_images(messages: &mut [Value], keep: usize) {
    let mut seen = 0;
    for message in messages.iter_mut().rev() {
        let Some(content) = message.get_mut("content").and_then(Value::as_array_mut) else {
            continue;
        };
        for block in content.iter_mut().rev() {
            fold_block(block, keep, &mut seen);
        }
    }
}

fn fold_block(block: &mut Value, keep: usize, seen: &mut usize) {
    if block.get("type").and_then(Value::as_str) == Some("image") {
        *seen += 1;
        if *seen > keep {
            *block = json!({"type": "text", "text": OMITTED});
        }
        return;
    }
    if let Some(inner) = block.get_mut("content").and_then(Value::as_array_mut) {
        for b in inner.iter_mut().rev() {
            fold_block(b, keep, seen);
        }
    }
}

/// An assistant content block as a request may carry it back.
fn as_param(block: &Value) -> Option<Value> {
    let o = block.as_object()?;
    let keep = |keys: &[&str]| {
        let mut out = Map::new();
        for k in keys {
            if let Some(v) = o.get(*k).filter(|v| !v.is_null()) {
                out.insert((*k).to_string(), v.clone());
            }
        }
        Value::Object(out)
    };
    match o.get("type")?.as_str()? {
        "text" => Some(keep(&["type", "text"])),
        "tool_use" => Some(keep(&["type", "id", "name", "input", "toolset_name"])),
        "thinking" => Some(keep(&["type", "thinking", "signature"])),
        "redacted_thinking" => Some(keep(&["type", "data"])),
        _ => None,
    }
}

#[async_trait]
impl ComputerModel for AnthropicModel {
    fn restart(&mut self) {
        self.messages.clear();
        self.pending.clear();
    }

    async fn ask(
        &mut self,
        client: &LlmClient,
        ask: Ask<'_>,
        notify: &(dyn Fn(String) + Send + Sync),
    ) -> Result<Turn, ModelError> {
        let message = self.user_message(&ask);
        self.messages.push(message);
        self.pending.clear();
        let body = self.body(ask.screen.width, ask.screen.height);
        let images = super::images_in(&body["messages"]);
        let (answer, answered) = client.post(&body, notify).await?;
        let content = answer
            .get("content")
            .and_then(Value::as_array)
            .ok_or_else(|| ModelError::Unusable("the message has no `content`".to_string()))?;
        let mut blocks: Vec<Value> = content.iter().filter_map(as_param).collect();
        // The API refuses an empty message in the history: a reply with nothing in it
        // stands as a note of that.
        if blocks.is_empty() {
            blocks.push(json!({"type": "text", "text": "(an empty reply)"}));
        }
        self.messages
            .push(json!({"role": "assistant", "content": blocks}));
        let mut turn = read(content);
        // A call with no id cannot be answered: the reply is not used (nothing of it
        // runs), and stands in the history as a note, so that the next request holds
        // no unanswered call.
        if turn.calls.iter().any(|c| c.id.trim().is_empty()) {
            if let Some(last) = self.messages.last_mut() {
                *last = json!({"role": "assistant", "content": [{"type": "text", "text": "(a reply whose tool_use had no id)"}]});
            }
            return Err(ModelError::Unusable(
                "a tool_use block has no id, so it cannot be answered".to_string(),
            ));
        }
        for call in &turn.calls {
            if !self.pending.contains(&call.id) {
                self.pending.push(call.id.clone());
            }
        }
        turn.answered = answered;
        turn.images = images;
        Ok(turn)
    }
}

#[cfg(test)]
mod tests;
