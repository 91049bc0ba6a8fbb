//! UFO's two-tier desktop agents (ufo.md §2, §6): a HostAgent that looks at the
//! desktop's application windows and hands subtasks to an AppAgent, which acts in one
//! window with the app tools until the subtask is done and reports back.
//!
//! One `DesktopAgents` plays both tiers for a session, a step at a time; it decides
//! whose turn the next step is and what the round does after each (UFO's `next_state`
//! and `next_agent`):
//!
//! - FromFileSession (a UFO request on a document): the HostAgent selects a window
//!   and says ASSIGN with the subtask; the AppAgent (with a fresh memory per subtask)
//!   works until FINISH, which hands back to the HostAgent; the HostAgent assigns the
//!   next subtask or says FINISH, which ends the round and the session. FAIL from
//!   either ends the session as failed.
//! - FollowerSession (a step plan on a document): round 0 is the HostAgent's, asked to
//!   select the application and finish; each later round is one step of the plan,
//!   done by an AppAgent with a fresh memory, its FINISH ending the round.
//!
//! PENDING is answered "nobody is there" and the agent goes on; CONFIRM follows the
//! unattended policy (`agent::act`). In UFO's `normal_operator` an operator
//! (`agent::operator`) does each subtask in the selected window instead of an AppAgent,
//! given the HostAgent's tips, and hands back as the AppAgent does (`operator_step`). What each agent is shown of the screen is in
//! `view`; their prompts and replies in `host` and `app`.

mod app;
mod app_step;
mod host;
mod host_step;
mod log_keys;
mod operator_step;
mod view;

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::Value;

use super::AgentSettings;
use super::ask::{Ask, Asker};
use super::conversation::Conversation;
use crate::desktop::app::Known;
use crate::event::Level;
use crate::executor::{Executor, Scope};
use crate::experience::Recall;
use crate::experience::index::known_key;
use crate::llm::LlmClient;
use crate::record::AgentStatus;
use crate::record::GivenExample;
use crate::session::{Agent, AgentStep, Context, ErrorKind, Transition};
use crate::tool::ToolSpec;
use view::Showing;

const HOST: &str = "HostAgent";
const APP: &str = "AppAgent";

/// One agent's side: its prompt, reply schema and conversation.
struct Voice {
    system: String,
    /// Experience and demonstrations for the work under way (UFO puts them in the
    /// system prompt).
    examples: String,
    schema: Value,
    conversation: Conversation,
}

/// Whose turn the next step is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Turn {
    Host,
    App,
}

/// The HostAgent and its AppAgents, for one desktop session.
pub(crate) struct DesktopAgents {
    llm: Arc<LlmClient>,
    settings: AgentSettings,
    /// What every AppAgent acts with: the app tools (and MCP tools).
    base_tools: Vec<ToolSpec>,
    /// What the AppAgent acts with in the selected window: the base tools and, when its
    /// app has them, the app's API tools (UFO's hybrid AppAgent).
    app_tools: Vec<ToolSpec>,
    /// The API of the selected window's app (`desktop::office`), if it has one.
    api: Option<String>,
    host: Voice,
    app: Voice,
    /// UFO's `object`: the document (or application) the task is about.
    object: Option<String>,
    /// A step plan's steps (FollowerSession), one round each after round 0.
    steps: Option<Vec<String>>,
    turn: Turn,
    /// The subtask the AppAgent works on.
    subtask: Option<String>,
    /// What the HostAgent is told at its next step: subtask reports, its last
    /// selection's result, notes.
    host_news: Vec<String>,
    /// What the AppAgent is told at its next step: its last action's results.
    app_news: Option<String>,
    /// The window selected (its title and application), once one is.
    window: Option<(String, String)>,
    /// Subtasks assigned so far.
    assigned: u32,
    /// What the round does after the last step.
    next: Transition,
    /// The run's experience and demonstrations, when its agents are given examples.
    recall: Option<Recall>,
    /// The task's app as records name it, until a window is selected.
    app_hint: String,
    /// Examples given, not yet noted in the context.
    given: Vec<GivenExample>,
    /// The operator that does the AppAgent's work (UFO's `normal_operator`), if one does.
    operator: Option<super::OperatorAgent>,
}

impl DesktopAgents {
    /// Agents asking `llm`, the AppAgent acting with `app_tools`; `steps` makes the
    /// session a follower of a step plan.
    pub(crate) fn new(
        llm: Arc<LlmClient>,
        app_tools: Vec<ToolSpec>,
        settings: AgentSettings,
        object: Option<String>,
        steps: Option<Vec<String>>,
        recall: Option<Recall>,
        app_hint: String,
    ) -> Self {
        let keep = settings.history_steps as usize;
        Self {
            host: Voice {
                system: host::system_prompt(),
                examples: String::new(),
                schema: host::reply_schema(),
                conversation: Conversation::new(keep),
            },
            app: Voice {
                system: app::system_prompt(&app_tools, settings.vision),
                examples: String::new(),
                schema: app::reply_schema(&app_tools),
                conversation: Conversation::new(keep),
            },
            llm,
            settings,
            base_tools: app_tools.clone(),
            app_tools,
            api: None,
            object,
            steps,
            turn: Turn::Host,
            subtask: None,
            host_news: Vec::new(),
            app_news: None,
            window: None,
            assigned: 0,
            next: Transition::Continue,
            recall,
            app_hint,
            given: Vec::new(),
            operator: None,
        }
    }

    /// Hands every subtask to `operator` instead of an AppAgent (UFO's
    /// `normal_operator`: `HostAgent.create_subagent` makes an operator agent).
    pub(crate) fn with_operator(&mut self, operator: super::OperatorAgent) {
        self.operator = Some(operator);
    }

    fn showing(&self) -> Showing {
        Showing {
            vision: self.settings.vision,
            max_side: self.settings.image_max_side,
        }
    }

    /// The HostAgent's brief for the round.
    fn host_brief(&self, ctx: &Context) -> String {
        let object = self.object.as_deref();
        let mut m = String::new();
        if self.steps.is_some() {
            // UFO's follower round 0 (`get_host_agent_request`).
            m.push_str(&format!(
                "<Request> Open and select the application of {}, and output the FINISH status immediately, without assigning any subtask.\n",
                object.unwrap_or("the task")
            ));
            m.push_str(&format!(
                "<Overall task, for later rounds> {}\n",
                ctx.request.trim()
            ));
        } else {
            m.push_str(&format!("<Request> {}\n", ctx.request.trim()));
            if let Some(object) = object {
                m.push_str(&format!(
                    "<Document> {object} is open in its application: select that window and assign the work in it.\n"
                ));
            }
        }
        m.push_str("Each step you see the desktop as it is now; reply with one JSON object.");
        m
    }

    /// Starts the AppAgent on `subtask` with a fresh memory.
    fn start_subtask(&mut self, ctx: &Context, subtask: String, tips: &[String]) {
        let step = self.steps.as_ref().map(|steps| {
            let n = ctx.round_num as usize;
            (
                n,
                steps.len(),
                &steps[..n.saturating_sub(1).min(steps.len())],
            )
        });
        if let Some(operator) = &mut self.operator {
            let application = self
                .window
                .as_ref()
                .map(|(_, a)| a.clone())
                .unwrap_or_default();
            operator.start(operator_step::instruction(&subtask, tips), &application);
            self.subtask = Some(subtask);
            self.turn = Turn::App;
            return;
        }
        let brief = app::brief(&app::SubtaskBrief {
            request: &ctx.request,
            subtask: &subtask,
            tips,
            step,
        });
        self.app.conversation.start(brief);
        self.app_news = None;
        // UFO's AppAgent retrieves for each subtask, by its text, in its app.
        if let Some(recall) = &self.recall {
            let app = match &self.window {
                Some((title, application)) => Known::for_window(application, title)
                    .map(|k| known_key(k).to_string())
                    .unwrap_or_else(|| application.clone()),
                None => self.app_hint.clone(),
            };
            let (block, given) = recall.examples(APP, &subtask, &app);
            self.app.examples = block;
            self.given.extend(given);
        }
        self.subtask = Some(subtask);
        self.turn = Turn::App;
    }

    /// Offers the AppAgent the API tools of `api` (none when `None`) beside its base
    /// tools, from its next subtask on: its prompt and reply schema follow.
    fn offer_api(&mut self, api: Option<&str>) {
        if self.api.as_deref() == api {
            return;
        }
        self.api = api.map(str::to_string);
        let mut tools = self.base_tools.clone();
        let api_tools = api
            .map(crate::desktop::office::tools_of)
            .unwrap_or_default();
        // A tool of the same name from an MCP server is the one the AppAgent has.
        tools.extend(
            api_tools
                .into_iter()
                .filter(|t| self.base_tools.iter().all(|b| b.name != t.name)),
        );
        self.app.system = app::system_prompt(&tools, self.settings.vision);
        self.app.schema = app::reply_schema(&tools);
        self.app_tools = tools;
    }

    /// Asks `voice` until a reply parses; what asking cost goes onto `step`.
    async fn ask<T>(
        llm: &LlmClient,
        voice: &mut Voice,
        tries: u32,
        ctx: &Context,
        step: &mut AgentStep,
        // Its error is the correction the model is sent, word for word.
        parse: impl Fn(&str) -> Result<T, String>,
        correct: impl Fn(&str) -> String,
    ) -> Result<T, (String, ErrorKind)> {
        let system = if voice.examples.is_empty() {
            std::borrow::Cow::Borrowed(voice.system.as_str())
        } else {
            std::borrow::Cow::Owned(format!("{}{}", voice.system, voice.examples))
        };
        let ask = Ask {
            llm,
            asker: Asker::Agent,
            system: &system,
            schema: &voice.schema,
            tries,
            events: &ctx.events,
        };
        ask.for_step(&mut voice.conversation, step, parse, correct)
            .await
    }

    /// Ends `step` in ERROR.
    fn failed(
        &mut self,
        ctx: &Context,
        mut step: AgentStep,
        (why, kind): (String, ErrorKind),
    ) -> AgentStep {
        ctx.events.log(Level::Error, why.clone());
        step.status = AgentStatus::Error;
        step.error = Some(why);
        step.error_kind = kind;
        self.next = Transition::Error;
        step
    }
}

/// Why a session failed when `agent` said FAIL, with its comment.
fn said_fail(agent: &str, comment: Option<&str>) -> String {
    match comment {
        Some(c) => format!("the {agent} said FAIL: {c}"),
        None => format!("the {agent} said FAIL"),
    }
}

#[async_trait]
impl Agent for DesktopAgents {
    fn begin_round(&mut self, ctx: &Context) {
        self.next = Transition::Continue;
        match (&self.steps, ctx.round_num) {
            (Some(_), n) if n > 0 => {
                let subtask = ctx.subtask.clone().unwrap_or_default();
                self.start_subtask(ctx, subtask, &[]);
            }
            _ => {
                self.turn = Turn::Host;
                let brief = self.host_brief(ctx);
                self.host.conversation.start(brief);
            }
        }
    }

    fn scope(&self) -> Scope {
        match (self.turn, &self.operator) {
            (Turn::Host, _) => Scope::Desktop,
            (Turn::App, Some(_)) => Scope::Screen,
            (Turn::App, None) => Scope::App,
        }
    }

    async fn handle(&mut self, ctx: &mut Context, executor: &mut dyn Executor) -> AgentStep {
        ctx.give(std::mem::take(&mut self.given));
        match (self.turn, self.operator.is_some()) {
            (Turn::Host, _) => self.host_step(ctx, executor).await,
            (Turn::App, true) => self.operator_step(ctx, executor).await,
            (Turn::App, false) => self.app_step(ctx, executor).await,
        }
    }

    fn next(&self, step: &AgentStep) -> Transition {
        if step.status == AgentStatus::Error {
            return Transition::Error;
        }
        self.next
    }
}

/// The prompts' text, for the fingerprint of a result (`agent::prompt_version`).
pub(crate) fn prompts() -> String {
    let tools = crate::desktop::tools::app_agent_tools();
    format!(
        "{}\n{}\n{}\n{}\n{}",
        host::system_prompt(),
        host::reply_schema(),
        app::system_prompt(tools, true),
        app::system_prompt(tools, false),
        app::reply_schema(tools)
    )
}
