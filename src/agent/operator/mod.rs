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
mod run;
mod settings;
mod turn;

use std::collections::VecDeque;
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::Value;

pub(crate) use picture::Target;
pub(crate) use settings::{OperatorRun, OperatorSettings, Provider, SafetyPolicy};

use super::AgentSettings;
use crate::desktop::computer::space::Space;
use crate::executor::{Executor, Scope};
use crate::llm::LlmClient;
use crate::llm::computer::{
    AnthropicModel, ChatModel, ComputerModel, ModelAction, OpenAiModel, Outcome, SafetyCheck,
};
use crate::record::AgentStatus;
use crate::session::{Agent, AgentStep, Context, ErrorKind};

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
