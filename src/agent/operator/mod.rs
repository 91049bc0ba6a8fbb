//! The operator: UFO's computer-use agent (`OpenAIOperatorAgent`, revived for today's
//! providers): screenshot in, mouse and keyboard out, points instead of control
//! labels. One loop for every provider (`llm::computer`): the screen as the step began,
//! fitted for the provider (`picture`), goes to the model with what its last actions did;
//! its reply's actions are mapped to the desktop (`calls`) and run one a step, in order,
//! through the executor like every agent's, until one fails (the rest are not run, and
//! the model is told) or the batch is done; then the model is asked again. A reply with
//! no action ends the subtask with its message. Safety checks are acknowledged (and
//! counted) or refuse the task, as `[operator] safety_checks` says.
//!
//! It works on the whole desktop (UFO's `operator` mode, `OpenAIOperatorSession`) or,
//! under a HostAgent, on the window it selected (`normal_operator`: `agent::desktop`
//! hands it each subtask with the HostAgent's tips).

mod calls;
pub(crate) mod formats;
mod picture;
mod settings;

use std::collections::VecDeque;
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{Value, json};

pub(crate) use picture::Target;
pub(crate) use settings::{OperatorRun, OperatorSettings, Provider, SafetyPolicy};

use super::AgentSettings;
use super::act;
use crate::desktop::computer::space::Space;
use crate::executor::{Executor, Scope};
use crate::llm::LlmClient;
use crate::llm::computer::{
    AnthropicModel, Ask, ChatModel, ComputerModel, ModelAction, ModelError, OpenAiModel, Outcome,
    Png, SafetyCheck, Turn,
};
use crate::record::{ActionRecord, AgentStatus};
use crate::session::{Agent, AgentStep, Context, ErrorKind};
use crate::tool::{Blame, Failure, ResultStatus, ToolCall, ToolResult};

/// The agent type the operator's steps are logged under: UFO logs its operator's steps
/// as the AppAgent's (`operator_processor.py`, `Agent="AppAgent"`), which UFO's
/// trajectory reader looks for.
const AGENT_TYPE: &str = "AppAgent";
/// Its name.
pub(crate) const OPERATOR: &str = "OperatorAgent";

/// The most actions of one reply that run; the rest are refused, and the model told.
const MAX_ACTIONS: usize = 50;

/// UFO's words for an unattended operator (`session.py` `refine_request`,
/// `app_agent.py` `message_constructor`).
pub(crate) const NO_CONSENT: &str =
    "Please do not ask for consent to perform the task, just execute the action.";

/// An action of the reply under way, not yet run.
struct Planned {
    /// The call it belongs to.
    id: String,
    /// The action, or why it cannot be read.
    action: Result<ModelAction, String>,
    /// As the model wrote it.
    raw: Value,
    /// Its place in the reply (1-based) and the reply's length.
    place: (usize, usize),
}

/// The operator agent.
pub(crate) struct OperatorAgent {
    client: Arc<LlmClient>,
    settings: Arc<OperatorSettings>,
    agent: AgentSettings,
    model: Box<dyn ComputerModel>,
    target: Target,
    /// What the model is told at its first turn (the request or subtask, the guidance).
    instruction: String,
    /// Whether the first turn was sent.
    started: bool,
    /// The reply's actions not yet run.
    queue: VecDeque<Planned>,
    /// What became of the reply's actions so far.
    outcomes: Vec<Outcome>,
    /// The last reply's safety checks, acknowledged at the next turn.
    acknowledged: Vec<SafetyCheck>,
    /// The space of the picture the reply under way was decided on, and the window.
    space: Option<(Space, Option<crate::desktop::control::Rect>)>,
    /// The step the reply under way was asked at.
    asked_at: u32,
    /// The app the target window belongs to (for the step's name).
    application: String,
}

impl OperatorAgent {
    /// An operator of `run` on `target`, with the agents' `settings`.
    pub(crate) fn new(run: &OperatorRun, agent: AgentSettings, target: Target) -> Self {
        let settings = Arc::clone(&run.settings);
        let keep = settings.keep_screenshots as usize;
        let model: Box<dyn ComputerModel> = match &settings.provider {
            Provider::OpenAi { tool } => Box::new(OpenAiModel::new(
                run.client.model(),
                tool.clone(),
                settings.max_tokens,
            )),
            Provider::Anthropic { tool } => Box::new(AnthropicModel::new(
                run.client.model(),
                *tool,
                settings.max_tokens,
                system_prompt(target),
                keep,
            )),
            Provider::Chat { format } => {
                let grid = match format.units {
                    crate::desktop::computer::space::Units::Grid(n) => Some(n),
                    crate::desktop::computer::space::Units::Pixels => None,
                };
                Box::new(ChatModel::new(format.syntax, grid, keep))
            }
        };
        Self {
            client: Arc::clone(&run.client),
            settings,
            agent,
            model,
            target,
            instruction: String::new(),
            started: false,
            queue: VecDeque::new(),
            outcomes: Vec::new(),
            acknowledged: Vec::new(),
            space: None,
            asked_at: 0,
            application: String::new(),
        }
    }

    /// Starts on `instruction` with a fresh conversation (a new subtask).
    pub(crate) fn start(&mut self, instruction: String, application: &str) {
        self.instruction = instruction;
        self.application = application.to_string();
        self.model.restart();
        self.started = false;
        self.queue.clear();
        self.outcomes.clear();
        self.acknowledged.clear();
        self.space = None;
    }

    /// The step's name (`OperatorAgent/mousepad` in a window).
    fn name(&self) -> String {
        if self.application.is_empty() {
            OPERATOR.to_string()
        } else {
            format!("{OPERATOR}/{}", self.application)
        }
    }

    /// Asks the model for its next reply on the screen `view`, correcting replies that
    /// cannot be used; the asking's cost goes onto `step`.
    async fn next_turn(
        &mut self,
        ctx: &Context,
        step: &mut AgentStep,
        screen: &Png,
    ) -> Result<Turn, (String, ErrorKind)> {
        let tries = self.agent.reply_retries + 1;
        let events = ctx.events.clone();
        let notify = move |message: String| events.warn(format!("operator: {message}"));
        let outcomes = std::mem::take(&mut self.outcomes);
        let acknowledged = std::mem::take(&mut self.acknowledged);
        let mut correction: Option<String> = None;
        let mut last = String::new();
        for attempt in 1..=tries {
            let first = !self.started;
            let ask = Ask {
                instruction: first.then_some(self.instruction.as_str()),
                outcomes: if attempt == 1 { &outcomes } else { &[] },
                screen,
                acknowledged: if attempt == 1 { &acknowledged } else { &[] },
                correction: correction.as_deref(),
            };
            let asked = self.model.ask(&self.client, ask, &notify).await;
            self.started = true;
            match asked {
                Ok(turn) => {
                    step.usage.add(turn.answered.usage);
                    step.cost.add(turn.answered.cost);
                    step.llm.calls += 1;
                    step.llm.images += turn.images;
                    step.llm.retries += turn.answered.attempts.saturating_sub(1);
                    if !turn.calls.is_empty() || turn.message.is_some() {
                        return Ok(turn);
                    }
                    last = "the reply has neither an action nor a message".to_string();
                }
                Err(ModelError::Llm(e)) => {
                    step.llm.retries += e.retries();
                    return Err(self.refused(e));
                }
                Err(ModelError::Unusable(why)) => {
                    step.llm.calls += 1;
                    last = why;
                }
            }
            step.llm.bad_replies += 1;
            ctx.events.warn(format!(
                "operator reply {attempt} of {tries} could not be used: {last}"
            ));
            correction = Some(format!(
                "Your last reply could not be used: {last}. Reply with your next action on the screen, or, \
                 when the task is done, with a message saying so."
            ));
        }
        Err((
            format!(
                "the operator's replies could not be used ({tries} tries; each is in task.log); last problem: {last}"
            ),
            ErrorKind::AGENT,
        ))
    }

    /// A failed request's error: a request the provider rejected (a tool version it
    /// does not serve, a model it does not have) names the setting to change.
    fn refused(&self, e: crate::llm::LlmError) -> (String, ErrorKind) {
        use crate::llm::LlmError;
        let kind = super::ask::llm_error_kind(&e);
        match &e {
            LlmError::Rejected { status, detail }
                if (400..500).contains(status) && names_the_tool(detail) =>
            {
                (
                    format!(
                        "{e}; the provider does not serve the computer tool {:?} for model {:?} as asked: check {} and [operator] model",
                        self.settings.provider.version(),
                        self.client.model(),
                        self.settings.provider.version_key()
                    ),
                    ErrorKind::Fatal(Blame::Config),
                )
            }
            _ => (e.to_string(), kind),
        }
    }

    /// What a reply's safety checks make of the step: recorded and counted; with
    /// `refuse`, the task's failure.
    fn safety(&mut self, ctx: &Context, step: &mut AgentStep, checks: Vec<SafetyCheck>) -> bool {
        if checks.is_empty() {
            return true;
        }
        step.llm.safety_checks += checks.len() as u32;
        step.extra
            .insert("safety_checks".into(), json!(checks.clone()));
        let said: Vec<String> = checks
            .iter()
            .map(|c| {
                format!(
                    "{} ({})",
                    c.code.as_deref().unwrap_or("unnamed"),
                    c.message.as_deref().unwrap_or("no message")
                )
            })
            .collect();
        match self.settings.safety_checks {
            SafetyPolicy::Acknowledge => {
                ctx.events.warn(format!(
                    "the provider raised {}: acknowledged ([operator] safety_checks = \"acknowledge\"): {}",
                    crate::text::plural(checks.len(), "safety check"),
                    said.join("; ")
                ));
                self.acknowledged = checks;
                true
            }
            SafetyPolicy::Refuse => {
                let why = format!(
                    "the provider raised a safety check: {}; [operator] safety_checks = \"refuse\" fails the task",
                    said.join("; ")
                );
                ctx.events.warn(why.clone());
                step.status = AgentStatus::Fail;
                step.error = Some(why);
                false
            }
        }
    }

    /// Runs the next action of the reply under way as this step.
    async fn run_next(&mut self, ctx: &Context, executor: &mut dyn Executor, step: &mut AgentStep) {
        let Some(planned) = self.queue.pop_front() else {
            return;
        };
        let (n, of) = planned.place;
        if of > 1 {
            step.extra.insert(
                "batch".into(),
                json!({"action": n, "of": of, "asked_at_step": self.asked_at}),
            );
        }
        let done = match &planned.action {
            Ok(ModelAction::Done { success, message }) => Some((*success, message.clone())),
            _ => None,
        };
        if let Ok(ModelAction::AskUser { question }) = &planned.action {
            // Nobody will answer in an unattended run: the model is told so, and goes on.
            step.status = AgentStatus::Pending;
            step.comment = Some(question.clone()).filter(|q| !q.trim().is_empty());
            ctx.events.info(format!(
                "step {}: the operator asked for the user; {}",
                ctx.session_step + 1,
                super::act::NOBODY
            ));
            self.outcomes.push(Outcome {
                id: planned.id.clone(),
                result: Ok(super::act::NOBODY.to_string()),
                skipped: false,
                picture: None,
            });
            return;
        }
        if let Some((success, message)) = done {
            self.queue.clear();
            step.comment = Some(message.clone())
                .filter(|m| !m.trim().is_empty())
                .or(step.comment.take());
            if success {
                step.status = AgentStatus::Finish;
            } else {
                // The agent's answer, not an error of its step: OSWorld's FAIL, the pass
                // of an infeasible task.
                step.status = AgentStatus::Fail;
                step.comment = Some(format!(
                    "the operator said the task cannot be done: {}",
                    message.trim()
                ));
            }
            return;
        }
        let (space, window) = self
            .space
            .clone()
            .expect("a reply under way was decided on a picture");
        let call = match &planned.action {
            Ok(action) => calls::call_for(action, &space, window),
            Err(why) => Err(why.clone()),
        };
        let (command, result, duration_s) = match call {
            Ok(command) => {
                let acted = act::run(
                    executor,
                    &ctx.events,
                    ctx.session_step + 1,
                    AgentStatus::Continue,
                    std::slice::from_ref(&command),
                )
                .await;
                let executed = acted
                    .executed
                    .into_iter()
                    .next()
                    .expect("one command, one result");
                (command, executed.result, executed.duration_s)
            }
            Err(why) => {
                // The model's action could not become a call: its failure, as the
                // model wrote it.
                let mut args = serde_json::Map::new();
                args.insert("model".into(), planned.raw.clone());
                let command = ToolCall::action(calls::tool_of_raw(&planned.raw), args);
                ctx.events.info(format!(
                    "step {}: {} refused: {why}",
                    ctx.session_step + 1,
                    command.tool_name
                ));
                let result =
                    ToolResult::failure(&command, OPERATOR, Failure::agent(why), Value::Null);
                (command, result, 0.0)
            }
        };
        let outcome = self.outcome(&planned, &result, &space);
        let failed = result.status != ResultStatus::Success;
        self.outcomes.push(outcome);
        if failed {
            // The rest of the reply is not run; the model is told.
            for rest in self.queue.drain(..) {
                self.outcomes.push(Outcome {
                    id: rest.id,
                    result: Err("not run".to_string()),
                    skipped: true,
                    picture: None,
                });
            }
        }
        step.actions.push(ActionRecord {
            function: command.tool_name.clone(),
            action_string: command.action_string(),
            arguments: crate::tool::call::recorded_arguments(command.parameters),
            status: step.status,
            result,
            divergence: None,
            duration_s,
        });
    }

    /// What became of `planned`, in the model's words and space.
    fn outcome(&self, planned: &Planned, result: &ToolResult, space: &Space) -> Outcome {
        let mut picture = None;
        let said = match result.status {
            ResultStatus::Success => {
                let r = &result.result;
                if let Some(png) = &result.picture
                    && let Ok(image) = crate::desktop::screenshot::Image::from_png(png, 64 << 20)
                {
                    // A zoom scaled up; a fresh screenshot shown as the batch's was (the
                    // same part of the screen, the same fit), so that its points are in
                    // the space the batch's points are mapped from.
                    let fitted = if r.get("region").is_some() {
                        picture::zoomed(&image, &self.settings).ok()
                    } else {
                        picture::refit(&image, space.region, &self.settings).ok()
                    };
                    picture = fitted;
                }
                Ok(
                    match (
                        r.get("x").and_then(Value::as_i64),
                        r.get("y").and_then(Value::as_i64),
                    ) {
                        (Some(x), Some(y)) if r.get("at").is_none() => {
                            let (mx, my) = space.to_model((x as i32, y as i32));
                            format!("the pointer is at ({mx}, {my})")
                        }
                        _ => String::new(),
                    },
                )
            }
            _ => Err(result
                .error
                .clone()
                .unwrap_or_else(|| result.status.to_string())),
        };
        Outcome {
            id: planned.id.clone(),
            result: said,
            skipped: false,
            picture,
        }
    }
}

/// Whether a provider's refusal is of the tool or the model the configuration names
/// (every task would be refused alike), not of this one request (a context too long, a
/// conversation it lost).
fn names_the_tool(detail: &str) -> bool {
    let lower = detail.to_ascii_lowercase();
    ["tool", "computer", "beta", "model"]
        .iter()
        .any(|w| lower.contains(w))
        && ![
            "context",
            "too long",
            "too large",
            "previous_response",
            "call_id",
        ]
        .iter()
        .any(|w| lower.contains(w))
}

/// The system prompt of providers that take one (Anthropic's): where the model is.
fn system_prompt(target: Target) -> String {
    let on = match target {
        Target::Desktop => "the whole screen of a desktop",
        Target::Window => "one application window of a desktop (the screenshots show that window)",
    };
    format!(
        "You operate {on} with the computer tool, one action at a time or several in order; after them you \
         see the screen again. No human is watching this run: never ask for confirmation or help; decide \
         yourself, and when the task is done, say so in a message without an action."
    )
}

#[async_trait]
impl Agent for OperatorAgent {
    fn begin_round(&mut self, ctx: &Context) {
        // UFO's operator session (`refine_request`): the request and the guidance; a
        // step plan's round is its step.
        let request = match &ctx.subtask {
            Some(step) => format!("{}\nThe overall task: {}", step.trim(), ctx.request.trim()),
            None => ctx.round_request.trim().to_string(),
        };
        let application = self.application.clone();
        self.start(format!("{request} \n {NO_CONSENT}"), &application);
    }

    fn scope(&self) -> Scope {
        Scope::Screen
    }

    async fn handle(&mut self, ctx: &mut Context, executor: &mut dyn Executor) -> AgentStep {
        let mut step = AgentStep::new(AGENT_TYPE, self.name(), AgentStatus::Continue);
        if self.queue.is_empty() {
            let Some(view) = ctx.screen.clone() else {
                step.status = AgentStatus::Error;
                step.error_kind = ErrorKind::INFRASTRUCTURE;
                step.error = Some("the screen could not be observed, so the operator cannot see it (see task.log)".to_string());
                return step;
            };
            let clock = std::time::Instant::now();
            let pictured = picture::picture(&view, self.target, &self.settings);
            if let Ok((png, _)) = &pictured {
                ctx.events.info(format!(
                    "step {}: the operator's screenshot, {}x{} as its model sees it ({} KiB), made in {:.3}s",
                    ctx.session_step + 1,
                    png.width,
                    png.height,
                    png.bytes.len() / 1024,
                    clock.elapsed().as_secs_f64()
                ));
            }
            let (screen, space) = match pictured {
                Ok(p) => p,
                Err(e) => {
                    step.status = AgentStatus::Error;
                    step.error_kind = ErrorKind::INFRASTRUCTURE;
                    step.error = Some(format!("cannot make the operator's screenshot: {e}"));
                    return step;
                }
            };
            let turn = match self.next_turn(ctx, &mut step, &screen).await {
                Ok(turn) => turn,
                Err((why, kind)) => {
                    ctx.events.log(crate::event::Level::Error, why.clone());
                    step.status = AgentStatus::Error;
                    step.error = Some(why);
                    step.error_kind = kind;
                    return step;
                }
            };
            step.thought = turn.thought.clone();
            if !self.safety(ctx, &mut step, turn.safety_checks.clone()) {
                return step;
            }
            if turn.calls.is_empty() {
                // A message and no action: the end of the subtask, in its words.
                step.status = AgentStatus::Finish;
                step.comment = turn.message.clone();
                return step;
            }
            step.comment = turn.message.clone();
            // The window where it is (a maximized one reaches past the screen's edge:
            // the picture shows its visible part, the replay follows the window).
            let window = (self.target == Target::Window).then(|| {
                view.window_rect
                    .filter(|r| r.is_visible())
                    .unwrap_or(space.region)
            });
            self.space = Some((space, window));
            self.asked_at = ctx.session_step + 1;
            let of = turn.calls.len().min(MAX_ACTIONS);
            let mut calls = turn.calls.into_iter();
            self.queue = calls
                .by_ref()
                .take(MAX_ACTIONS)
                .enumerate()
                .map(|(i, c)| Planned {
                    id: c.id,
                    action: c.action,
                    raw: c.raw,
                    place: (i + 1, of),
                })
                .collect();
            // More than a reply may hold: the rest is refused, and the model told.
            for extra in calls {
                self.outcomes.push(Outcome {
                    id: extra.id,
                    result: Err(format!(
                        "not run: a reply may hold at most {MAX_ACTIONS} actions"
                    )),
                    skipped: false,
                    picture: None,
                });
            }
        }
        self.run_next(ctx, executor, &mut step).await;
        step
    }
}
