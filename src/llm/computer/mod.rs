//! The computer-use providers: how an operator agent talks to a model that looks at
//! screenshots and answers with mouse and keyboard actions, one room per way of
//! reaching one. OpenAI's Responses API (the `computer` tool, or the preview tool),
//! Anthropic's Messages API (the computer toolset, or the older `computer_20251124`
//! tool), and open models over the chat completions every agent speaks, each in a named
//! action format (UI-TARS, Qwen-VL). Every provider keeps its own conversation and
//! turns a reply into the same [`Turn`]: the model's thought, its actions in its own
//! coordinate space (mapping them to the desktop is the agent's), its final message, the
//! safety checks it raised. What became of the actions goes back as [`Outcome`]s with
//! the screen after them.

mod anthropic;
mod chat;
mod openai;
mod qwen;
mod uitars;

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::Value;

pub(crate) use anthropic::{AnthropicModel, AnthropicTool, COMPUTER_20251124_BETA};
pub(crate) use chat::{ChatModel, Syntax};
pub(crate) use openai::{OpenAiModel, OpenAiTool};

use super::{Answered, LlmClient, LlmError};

/// A point in the model's own space (pixels of the image it saw, or its grid).
pub(crate) type Point = (f64, f64);

/// How far a scroll goes, as the model counts it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ScrollUnit {
    /// Pixels (OpenAI's `scroll_x` and `scroll_y`, Qwen's `pixels`).
    Pixels,
    /// Wheel notches (Anthropic's `scroll_amount`, UI-TARS's directions).
    Notches,
}

/// One action a model asked for, in its own space; keys and buttons by its own names.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum ModelAction {
    /// A click, `count` times (1 to 3); at the pointer's place without a point.
    Click {
        /// Where.
        at: Option<Point>,
        /// The button, by the model's name.
        button: String,
        /// How many clicks.
        count: u8,
        /// Keys held meanwhile.
        keys: Vec<String>,
    },
    /// The pointer to a point.
    Move {
        /// Where.
        at: Point,
        /// Keys held meanwhile.
        keys: Vec<String>,
    },
    /// The left button held along a path.
    Drag {
        /// The points, in order.
        path: Vec<Point>,
        /// Keys held meanwhile.
        keys: Vec<String>,
    },
    /// The wheel, across and down (positive: right and down).
    Scroll {
        /// Where (the pointer's place when `None`).
        at: Option<Point>,
        /// Across.
        dx: f64,
        /// Down.
        dy: f64,
        /// In what.
        unit: ScrollUnit,
        /// Keys held meanwhile.
        keys: Vec<String>,
    },
    /// A button pressed or released.
    Button {
        /// Where (the pointer's place when `None`).
        at: Option<Point>,
        /// Which.
        button: String,
        /// Pressed, else released.
        down: bool,
    },
    /// One chord of keys, `repeat` times.
    Keypress {
        /// The keys pressed together.
        keys: Vec<String>,
        /// How often.
        repeat: u32,
    },
    /// A chord held down for a while.
    HoldKey {
        /// The keys.
        keys: Vec<String>,
        /// For how long.
        seconds: f64,
    },
    /// Text typed.
    Type {
        /// The text.
        text: String,
    },
    /// A pause.
    Wait {
        /// Seconds.
        seconds: f64,
    },
    /// A fresh look at the screen.
    Screenshot,
    /// A close look at a region, from one corner to the other.
    Zoom {
        /// A corner.
        from: Point,
        /// The opposite corner.
        to: Point,
    },
    /// Where the pointer is.
    CursorPosition,
    /// The model asks the user (UI-TARS's `call_user`): nobody is there.
    AskUser {
        /// What it asked, if it said.
        question: String,
    },
    /// The model says it is done (UI-TARS's `finished`, Qwen's `terminate`), or that
    /// the task cannot be done (`success` false).
    Done {
        /// Whether it succeeded.
        success: bool,
        /// Its words.
        message: String,
    },
}

/// One action of a reply, with the provider's id of the call it belongs to.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ModelCall {
    /// The call it answers (OpenAI's `call_id`, Anthropic's `tool_use` id, a chat
    /// turn's): several actions of one call share it.
    pub(crate) id: String,
    /// The action, or why it cannot be read (told back to the model as its failure).
    pub(crate) action: Result<ModelAction, String>,
    /// The action as the model wrote it, for the record.
    pub(crate) raw: Value,
}

/// A safety check a provider raised on a call (OpenAI's `pending_safety_checks`).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub(crate) struct SafetyCheck {
    /// Its id, echoed when acknowledged.
    pub(crate) id: String,
    /// Its kind (`malicious_instructions`, `irrelevant_domain`, `sensitive_domain`).
    pub(crate) code: Option<String>,
    /// Its words.
    pub(crate) message: Option<String>,
    /// The call it was raised on (its output acknowledges it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) call_id: Option<String>,
}

/// What a model's reply says.
#[derive(Clone, Debug)]
pub(crate) struct Turn {
    /// Its reasoning (OpenAI's summaries, Anthropic's text before its actions, UI-TARS's
    /// `Thought:`).
    pub(crate) thought: Option<String>,
    /// Its actions, in order.
    pub(crate) calls: Vec<ModelCall>,
    /// Its final message, when it says something and asks for no action.
    pub(crate) message: Option<String>,
    /// Safety checks raised on its calls.
    pub(crate) safety_checks: Vec<SafetyCheck>,
    /// What the call took.
    pub(crate) answered: Answered,
    /// Images the request carried.
    pub(crate) images: u32,
}

impl Turn {
    /// A reply's words and actions, what the call took still to be said.
    pub(crate) fn read(
        thought: Option<String>,
        calls: Vec<ModelCall>,
        message: Option<String>,
    ) -> Self {
        Self {
            thought,
            calls,
            message,
            safety_checks: Vec::new(),
            answered: Answered {
                usage: crate::units::Usage::default(),
                cost: crate::units::Cost::default(),
                attempts: 1,
            },
            images: 0,
        }
    }
}

/// A picture as PNG, and its size.
#[derive(Clone, Debug)]
pub(crate) struct Png {
    /// The encoded image.
    pub(crate) bytes: Arc<Vec<u8>>,
    /// Width in pixels.
    pub(crate) width: u32,
    /// Height in pixels.
    pub(crate) height: u32,
}

impl Png {
    /// The `data:` URL of the image.
    pub(crate) fn data_url(&self) -> String {
        format!("data:image/png;base64,{}", self.base64())
    }

    /// The image in base64.
    pub(crate) fn base64(&self) -> String {
        use base64::Engine;
        base64::engine::general_purpose::STANDARD.encode(self.bytes.as_slice())
    }
}

/// What became of one action, told back.
#[derive(Clone, Debug)]
pub(crate) struct Outcome {
    /// The call it belongs to.
    pub(crate) id: String,
    /// What it did (a short note), or why it failed.
    pub(crate) result: Result<String, String>,
    /// It was not run: an earlier action of the reply failed.
    pub(crate) skipped: bool,
    /// The picture it took (a screenshot or a zoom), fitted for the model.
    pub(crate) picture: Option<Png>,
}

/// What a model is sent at one turn.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Ask<'a> {
    /// The instruction, at the first turn.
    pub(crate) instruction: Option<&'a str>,
    /// What became of the last reply's actions.
    pub(crate) outcomes: &'a [Outcome],
    /// The screen now, as the model is shown it.
    pub(crate) screen: &'a Png,
    /// The safety checks acknowledged (those of the last reply).
    pub(crate) acknowledged: &'a [SafetyCheck],
    /// Why the last reply could not be used, when it could not.
    pub(crate) correction: Option<&'a str>,
}

/// Why a turn has no usable reply.
#[derive(Debug)]
pub(crate) enum ModelError {
    /// The request failed (after the client's retries).
    Llm(LlmError),
    /// The reply cannot be used: why, in words (the model is told and asked again).
    Unusable(String),
}

impl From<LlmError> for ModelError {
    fn from(e: LlmError) -> Self {
        Self::Llm(e)
    }
}

/// A computer-use model's side of the conversation.
#[async_trait]
pub(crate) trait ComputerModel: Send {
    /// Starts a new conversation (a new subtask): what was said is forgotten.
    fn restart(&mut self);

    /// Sends a turn and reads the reply.
    async fn ask(
        &mut self,
        client: &LlmClient,
        ask: Ask<'_>,
        notify: &(dyn Fn(String) + Send + Sync),
    ) -> Result<Turn, ModelError>;
}

/// How many images a request's JSON carries: image blocks and parts, data URLs.
pub(crate) fn images_in(value: &Value) -> u32 {
    match value {
        Value::Object(o) => {
            let own = match o.get("type").and_then(Value::as_str) {
                Some("image" | "input_image" | "computer_screenshot" | "image_url") => 1,
                _ => 0,
            };
            own + o
                .iter()
                .filter(|(k, _)| k.as_str() != "image_url" || own == 0)
                .map(|(_, v)| images_in(v))
                .sum::<u32>()
        }
        Value::Array(a) => a.iter().map(images_in).sum(),
        _ => 0,
    }
}

/// The words an outcome is told back in.
pub(crate) fn outcome_text(outcome: &Outcome) -> String {
    match (&outcome.result, outcome.skipped) {
        (_, true) => "not run: an earlier action of the same reply failed".to_string(),
        (Ok(note), false) if note.is_empty() => "done".to_string(),
        (Ok(note), false) => note.clone(),
        (Err(e), false) => format!("failed: {e}"),
    }
}

/// The text of a JSON value that should be a string.
fn text_of(v: Option<&Value>) -> Option<String> {
    v.and_then(Value::as_str).map(str::to_string)
}

/// A number of a JSON value (an integer or a float, or a numeric string).
fn number(v: Option<&Value>) -> Option<f64> {
    match v? {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
    .filter(|f: &f64| f.is_finite())
}
