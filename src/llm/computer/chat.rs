//! Open computer-use models over the chat completions the runner already speaks (vLLM,
//! llama.cpp, Ollama): the conversation is ours (the instruction, each turn's screenshot
//! and what the last actions did, the model's replies), only the last
//! `keep_screenshots` images are sent again, and each reply is read in its format's
//! syntax (`uitars`, `qwen`). Which model speaks which syntax, in which coordinate space,
//! is the agent's table of formats.

use async_trait::async_trait;

use super::{Ask, ComputerModel, ModelAction, ModelCall, ModelError, Point, Turn, outcome_text};
use crate::llm::{LlmClient, Message, Part};

/// How a model writes its actions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Syntax {
    /// UI-TARS 1 and 1.5: `click(start_box='(x,y)')`.
    UiTars,
    /// UI-TARS-2: `click(point='<point>x y</point>')`.
    UiTars2,
    /// Qwen-VL: `<tool_call>{"name": "computer_use", ...}</tool_call>`.
    QwenToolCall,
}

/// A reply's actions as read, each with what the model wrote.
type ReadActions = Vec<(Result<ModelAction, String>, serde_json::Value)>;

/// What stands for an image no longer sent.
const OMITTED: &str = "(an earlier screenshot, no longer shown)";

/// The operator's conversation with an open model.
pub(crate) struct ChatModel {
    syntax: Syntax,
    /// Says the coordinate space in the prompt (`None`: the image's pixels).
    grid: Option<u32>,
    keep_screenshots: usize,
    messages: Vec<Message>,
    /// Turns so far (the calls' ids).
    turns: u32,
    /// Where the last action that ran left the pointer, in the model's space (a Qwen
    /// drag starts there).
    pointer: Option<Point>,
    /// Where each action of the last reply would leave it, in order.
    turn_points: Vec<Option<Point>>,
}

impl ChatModel {
    /// A conversation in `syntax`; `grid` is the model's grid (0–N) when its points are
    /// not the image's pixels.
    pub(crate) fn new(syntax: Syntax, grid: Option<u32>, keep_screenshots: usize) -> Self {
        Self {
            syntax,
            grid,
            keep_screenshots: keep_screenshots.max(1),
            messages: Vec::new(),
            turns: 0,
            pointer: None,
            turn_points: Vec::new(),
        }
    }

    /// The pointer where the last reply's actions that ran left it.
    fn moved_by(&mut self, outcomes: &[super::Outcome]) {
        for (outcome, point) in outcomes.iter().zip(std::mem::take(&mut self.turn_points)) {
            if outcome.result.is_ok() && !outcome.skipped && point.is_some() {
                self.pointer = point;
            }
        }
    }

    /// The system prompt for a screen shown at `width` x `height`.
    fn system(&self, width: u32, height: u32) -> String {
        match self.syntax {
            Syntax::UiTars | Syntax::UiTars2 => uitars_prompt(self.syntax),
            Syntax::QwenToolCall => {
                let (w, h) = match self.grid {
                    Some(n) => (n, n),
                    None => (width, height),
                };
                qwen_prompt(w, h)
            }
        }
    }

    /// The user message of `ask`, with the screen.
    fn user_message(&self, ask: &Ask<'_>) -> Message {
        let mut text = Vec::new();
        if let Some(instruction) = ask.instruction {
            text.push(match self.syntax {
                Syntax::QwenToolCall => instruction.to_string(),
                Syntax::UiTars | Syntax::UiTars2 => format!("## User Instruction\n{instruction}"),
            });
        }
        if !ask.outcomes.is_empty() {
            let said: Vec<String> = ask
                .outcomes
                .iter()
                .enumerate()
                .map(|(i, o)| format!("{}. {}", i + 1, outcome_text(o)))
                .collect();
            text.push(format!("Your last actions:\n{}", said.join("\n")));
        }
        if let Some(why) = ask.correction {
            text.push(why.to_string());
        }
        if text.is_empty() {
            text.push("The screen now:".to_string());
        }
        let mut parts = vec![Part::text(text.join("\n\n"))];
        for o in ask.outcomes {
            if let Some(picture) = &o.picture {
                parts.push(Part::png(&picture.bytes));
            }
        }
        parts.push(Part::png(&ask.screen.bytes));
        Message::user_parts(parts)
    }

    /// The messages to send: the last `keep_screenshots` images, the rest folded.
    fn to_send(&self, system: String) -> Vec<Message> {
        let mut out = vec![Message::system(system)];
        let mut seen = 0;
        let mut kept: Vec<Message> = Vec::with_capacity(self.messages.len());
        for m in self.messages.iter().rev() {
            let n = m.images();
            if n > 0 && seen >= self.keep_screenshots {
                kept.push(m.without_images(OMITTED));
            } else {
                kept.push(m.clone());
            }
            seen += n;
        }
        kept.reverse();
        out.extend(kept);
        out
    }

    /// The reply's thought and calls.
    fn read(&mut self, text: &str) -> Result<(Option<String>, Vec<ModelCall>), String> {
        let id = format!("turn-{}", self.turns);
        let (thought, actions): (Option<String>, ReadActions) = match self.syntax {
            Syntax::UiTars | Syntax::UiTars2 => {
                let (thought, calls) = super::uitars::parse(text)?;
                let actions = calls
                        .iter()
                        .map(|c| {
                            let raw = serde_json::json!({"name": c.name, "args": c.args.iter().map(|(k, v)| (k.clone(), serde_json::Value::String(v.clone()))).collect::<serde_json::Map<_, _>>()});
                            (super::uitars::action(c), raw)
                        })
                        .collect();
                (thought, actions)
            }
            Syntax::QwenToolCall => {
                let (thought, calls) = super::qwen::parse(text)?;
                let mut out = Vec::new();
                // Within the reply, each action starts where the one before left the
                // pointer (a later one runs only if those before it did).
                let mut pointer = self.pointer;
                for args in calls {
                    let action = super::qwen::action(&args, pointer);
                    let moved = action.as_ref().ok().and_then(moved_to);
                    pointer = moved.or(pointer);
                    self.turn_points.push(moved);
                    out.push((action, args));
                }
                (thought, out)
            }
        };
        let calls = actions
            .into_iter()
            .map(|(action, raw)| ModelCall {
                id: id.clone(),
                action,
                raw,
            })
            .collect();
        Ok((thought, calls))
    }
}

/// Where an action leaves the pointer.
fn moved_to(action: &ModelAction) -> Option<Point> {
    match action {
        ModelAction::Click { at, .. }
        | ModelAction::Scroll { at, .. }
        | ModelAction::Button { at, .. } => *at,
        ModelAction::Move { at, .. } => Some(*at),
        ModelAction::Drag { path, .. } => path.last().copied(),
        _ => None,
    }
}

#[async_trait]
impl ComputerModel for ChatModel {
    fn restart(&mut self) {
        self.messages.clear();
        self.pointer = None;
        self.turn_points.clear();
    }

    async fn ask(
        &mut self,
        client: &LlmClient,
        ask: Ask<'_>,
        notify: &(dyn Fn(String) + Send + Sync),
    ) -> Result<Turn, ModelError> {
        self.turns += 1;
        self.moved_by(ask.outcomes);
        self.turn_points.clear();
        let message = self.user_message(&ask);
        self.messages.push(message);
        let messages = self.to_send(self.system(ask.screen.width, ask.screen.height));
        let images = messages.iter().map(Message::images).sum::<usize>() as u32;
        let reply = client.chat(&messages, None, notify).await?;
        self.messages
            .push(Message::assistant(reply.content.clone()));
        let answered = crate::llm::Answered {
            usage: reply.usage,
            cost: reply.cost,
            attempts: reply.attempts,
        };
        let (thought, calls) = self.read(&reply.content).map_err(|why| {
            ModelError::Unusable(format!(
                "{why}; the reply was: {}",
                crate::text::shorten(reply.content.trim(), 300)
            ))
        })?;
        let mut turn = Turn::read(thought, calls, None);
        turn.answered = answered;
        turn.images = images;
        Ok(turn)
    }
}

/// UI-TARS's prompt: its output format and action space (the format's own calls).
fn uitars_prompt(syntax: Syntax) -> String {
    let p = |name: &str| match syntax {
        Syntax::UiTars2 => format!("{name}='<point>x y</point>'"),
        _ => format!("{name}='<|box_start|>(x1,y1)<|box_end|>'"),
    };
    let (start, end) = match syntax {
        Syntax::UiTars2 => (p("point"), p("end_point")),
        _ => (p("start_box"), p("end_box")),
    };
    let drag_start = match syntax {
        Syntax::UiTars2 => p("start_point"),
        _ => start.clone(),
    };
    format!(
        "You are a GUI agent working on a computer's screen. You are given a task, then a screenshot after each of \
         your actions; output the next action until the task is done. No human is watching: never ask for \
         confirmation or help.\n\n\
         ## Output Format\n```\nThought: what you see and why you act\nAction: the action\n```\n\n\
         ## Action Space\n\
         click({start})\n\
         left_double({start})\n\
         right_single({start})\n\
         drag({drag_start}, {end})\n\
         hotkey(key='ctrl c') # keys pressed together, lowercase, space-separated\n\
         type(content='text') # to submit, end with \\n\n\
         scroll({start}, direction='down or up or right or left')\n\
         wait() # 5 seconds, then a new screenshot\n\
         finished(content='what was done')\n\n\
         ## Note\n- Write the Thought in the user's language.\n"
    )
}

/// Qwen-VL's prompt: the `computer_use` function, in Qwen's function-calling template.
fn qwen_prompt(width: u32, height: u32) -> String {
    let description = format!(
        "Use a mouse and keyboard to work on a computer's screen, which you see as screenshots. The screen's \
         resolution is {width}x{height}: coordinates are [x, y] pixels of it. Click on the middle of an element; \
         after each action you get a new screenshot. No human is watching: never ask for confirmation."
    );
    let parameters = serde_json::json!({
        "type": "object",
        "required": ["action"],
        "properties": {
            "action": {"type": "string", "enum": [
                "key", "type", "mouse_move", "left_click", "left_click_drag", "right_click", "middle_click",
                "double_click", "triple_click", "scroll", "hscroll", "wait", "terminate", "answer"
            ], "description": "key: press keys together (keys); type: type text (text); mouse_move, *_click: at coordinate; left_click_drag: from the pointer to coordinate; scroll/hscroll: by pixels (positive: up/right); wait: for time seconds; terminate: end with status; answer: reply with text"},
            "keys": {"type": "array", "description": "for key"},
            "text": {"type": "string", "description": "for type and answer"},
            "coordinate": {"type": "array", "description": "[x, y]"},
            "pixels": {"type": "number", "description": "for scroll and hscroll"},
            "time": {"type": "number", "description": "for wait"},
            "status": {"type": "string", "enum": ["success", "failure"], "description": "for terminate"}
        }
    });
    let tool = serde_json::json!({"type": "function", "function": {
        "name": "computer_use", "description": description, "parameters": parameters}});
    format!(
        "You are a helpful assistant.\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\n\
         You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n{tool}\n</tools>\n\n\
         For each function call, return a json object with function name and arguments within <tool_call></tool_call> \
         XML tags:\n<tool_call>\n{{\"name\": <function-name>, \"arguments\": <args-json-object>}}\n</tool_call>"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::computer::Png;

    fn png() -> Png {
        Png {
            bytes: std::sync::Arc::new(vec![1]),
            width: 1288,
            height: 812,
        }
    }

    #[test]
    fn only_the_last_screenshots_are_sent() {
        let mut model = ChatModel::new(Syntax::QwenToolCall, None, 2);
        for i in 0..4 {
            let outcomes = [];
            let ask = Ask {
                instruction: (i == 0).then_some("do it"),
                outcomes: &outcomes,
                screen: &png(),
                acknowledged: &[],
                correction: None,
            };
            let m = model.user_message(&ask);
            model.messages.push(m);
            model.messages.push(Message::assistant("ok"));
        }
        let sent = model.to_send(model.system(1288, 812));
        let images: Vec<usize> = sent.iter().map(Message::images).collect();
        assert_eq!(images, [0, 0, 0, 0, 0, 1, 0, 1, 0]);
        assert!(sent[1].text().contains(OMITTED));
        assert!(sent[0].text().contains("resolution is 1288x812"));
        let grid = ChatModel::new(Syntax::QwenToolCall, Some(1000), 3);
        assert!(grid.system(1288, 812).contains("resolution is 1000x1000"));
    }

    #[test]
    fn a_turns_actions_share_its_id_and_a_qwen_drag_starts_at_the_pointer() {
        let mut model = ChatModel::new(Syntax::QwenToolCall, None, 3);
        model.turns = 7;
        let (_, calls) = model
            .read("<tool_call>{\"name\": \"computer_use\", \"arguments\": {\"action\": \"mouse_move\", \"coordinate\": [5, 6]}}</tool_call><tool_call>{\"name\": \"computer_use\", \"arguments\": {\"action\": \"left_click_drag\", \"coordinate\": [50, 60]}}</tool_call>")
            .unwrap();
        assert!(calls.iter().all(|c| c.id == "turn-7"));
        assert_eq!(
            calls[1].action,
            Ok(ModelAction::Drag {
                path: vec![(5.0, 6.0), (50.0, 60.0)],
                keys: vec![]
            })
        );
        assert!(uitars_prompt(Syntax::UiTars2).contains("click(point='<point>x y</point>')"));
        assert!(uitars_prompt(Syntax::UiTars).contains("<|box_start|>(x1,y1)<|box_end|>"));
    }
}
