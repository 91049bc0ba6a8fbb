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

use super::{
    Ask, ComputerModel, ModelAction, ModelCall, ModelError, Png, ScrollUnit, Turn, number,
    outcome_text, text_of,
};
use crate::llm::LlmClient;

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

/// A reply's text (the thought, or with no action the final message) and actions.
fn read(content: &[Value]) -> Turn {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::computer::Outcome;

    fn png() -> Png {
        Png {
            bytes: std::sync::Arc::new(vec![1, 2, 3]),
            width: 1280,
            height: 800,
        }
    }

    #[test]
    fn toolset_members_and_the_older_tool_read_alike() {
        let content = vec![
            json!({"type": "text", "text": "I will save."}),
            json!({"type": "tool_use", "id": "t1", "name": "left_click", "toolset_name": "computer",
                   "caller": {"type": "direct"}, "input": {"coordinate": [10, 20], "text": "shift"}}),
            json!({"type": "tool_use", "id": "t2", "name": "key", "toolset_name": "computer",
                   "input": {"text": "ctrl+a Delete"}}),
            json!({"type": "tool_use", "id": "t3", "name": "computer",
                   "input": {"action": "scroll", "coordinate": [5, 5], "scroll_direction": "up", "scroll_amount": 2}}),
            json!({"type": "tool_use", "id": "t4", "name": "computer", "input": {"action": "warp"}}),
            // The older tool as the SDK dumps it: a null toolset.
            json!({"type": "tool_use", "id": "t5", "name": "computer", "toolset_name": null,
                   "input": {"action": "left_click", "coordinate": [3, 4]}}),
            json!({"type": "tool_use", "id": "t6", "name": "left_click", "toolset_name": "computer",
                   "input": {"coordinate": ["100", "abc"]}}),
        ];
        let turn = read(&content);
        assert_eq!(turn.thought.as_deref(), Some("I will save."));
        let ids: Vec<&str> = turn.calls.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, ["t1", "t2", "t2", "t3", "t4", "t5", "t6"]);
        assert!(matches!(
            turn.calls[5].action,
            Ok(ModelAction::Click {
                at: Some((3.0, 4.0)),
                ..
            })
        ));
        assert!(
            turn.calls[6]
                .action
                .as_ref()
                .unwrap_err()
                .contains("has a `coordinate` that is not [x, y]")
        );
        assert_eq!(
            turn.calls[0].action,
            Ok(ModelAction::Click {
                at: Some((10.0, 20.0)),
                button: "left".into(),
                count: 1,
                keys: vec!["shift".into()]
            })
        );
        assert_eq!(
            turn.calls[1].action,
            Ok(ModelAction::Keypress {
                keys: vec!["ctrl".into(), "a".into()],
                repeat: 1
            })
        );
        assert!(matches!(turn.calls[3].action, Ok(ModelAction::Scroll { dy, .. }) if dy == -2.0));
        assert!(
            turn.calls[4]
                .action
                .as_ref()
                .unwrap_err()
                .starts_with("unknown action `warp`")
        );
        assert_eq!(chord_names("ctrl++"), vec!["ctrl", "+"]);
    }

    #[test]
    fn every_tool_use_gets_its_result_in_order_and_old_images_fold() {
        let mut model =
            AnthropicModel::new("claude", AnthropicTool::Toolset, 1024, "sys".into(), 2);
        model.pending = vec!["t1".into(), "t2".into(), "t3".into()];
        let outcomes = vec![
            Outcome {
                id: "t1".into(),
                result: Ok("clicked".into()),
                skipped: false,
                picture: None,
            },
            Outcome {
                id: "t2".into(),
                result: Err("no key is named \"warp\"".into()),
                skipped: false,
                picture: None,
            },
        ];
        let message = model.user_message(&Ask {
            instruction: None,
            outcomes: &outcomes,
            screen: &png(),
            acknowledged: &[],
            correction: None,
        });
        let content = message["content"].as_array().unwrap();
        assert_eq!(content[0]["tool_use_id"], "t1");
        assert_eq!(content[0]["toolset_name"], "computer");
        assert!(content[0].get("is_error").is_none());
        assert_eq!(content[1]["is_error"], true);
        assert!(
            content[1]["content"][0]["text"]
                .as_str()
                .unwrap()
                .contains("failed: no key is named")
        );
        assert_eq!(content[2]["tool_use_id"], "t3");
        assert_eq!(content[2]["is_error"], true);
        assert_eq!(content[3]["type"], "image");
        let mut messages = vec![
            json!({"role": "user", "content": [{"type": "image"}, {"type": "text", "text": "a"}]}),
            json!({"role": "user", "content": [{"type": "tool_result", "content": [{"type": "image"}]}]}),
            json!({"role": "user", "content": [{"type": "image"}]}),
        ];
        fold_images(&mut messages, 2);
        assert_eq!(messages[0]["content"][0]["text"], OMITTED);
        assert_eq!(messages[1]["content"][0]["content"][0]["type"], "image");
        assert_eq!(messages[2]["content"][0]["type"], "image");
    }
}
