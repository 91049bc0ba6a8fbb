//! The LinuxAgent: asks the model for one action at a time (UFO's reply schema), runs it
//! through the executor, and feeds the results back, until the model says FINISH or
//! FAIL. A reply that cannot be used is sent back with the reason, a bounded number of
//! times. PENDING and CONFIRM never wait for a human: the unattended policy decides.

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::Value;

use super::AgentSettings;
use super::act;
use super::ask::{Ask, Asker};
use super::conversation::Conversation;
use super::prompt::{RoundBrief, correction_message, prompt_for, results_message, round_message};
use super::reply::{Reply, parse_reply};
use crate::event::Level;
use crate::executor::Executor;
use crate::experience::Recall;
use crate::experience::index::SHELL_APP;
use crate::llm::{LlmClient, Message};
use crate::record::AgentStatus;
use crate::record::GivenExample;
use crate::session::{Agent, AgentStep, Context, ErrorKind};
use crate::tool::ToolSpec;

const AGENT_TYPE: &str = "LinuxAgent";

/// A single-tier agent working through the shell tools.
pub(crate) struct LinuxAgent {
    llm: Arc<LlmClient>,
    tools: Vec<ToolSpec>,
    settings: AgentSettings,
    system: Arc<str>,
    schema: Arc<Value>,
    object: Option<String>,
    /// A step plan's steps (follower sessions), one round each.
    steps: Option<Vec<String>>,
    /// The conversation of the current round.
    conversation: Conversation,
    /// The run's experience and demonstrations, when its agents are given examples.
    recall: Option<Recall>,
    /// The system prompt of the current round with its examples, when it has some.
    round_system: Option<String>,
    /// Examples given for the current round, not yet noted in the context.
    given: Vec<GivenExample>,
}

impl LinuxAgent {
    /// An agent using `llm` and `tools`; `steps` makes it a follower of a step plan.
    pub(crate) fn new(
        llm: Arc<LlmClient>,
        tools: Vec<ToolSpec>,
        settings: AgentSettings,
        object: Option<String>,
        steps: Option<Vec<String>>,
        recall: Option<Recall>,
    ) -> Self {
        let history_steps = settings.history_steps as usize;
        let (system, schema) = prompt_for(&tools);
        Self {
            system,
            schema,
            llm,
            tools,
            settings,
            object,
            steps,
            conversation: Conversation::new(history_steps),
            recall,
            round_system: None,
            given: Vec::new(),
        }
    }

    /// Asks until a reply can be used; `Err` ends the step in ERROR.
    async fn ask(
        &mut self,
        ctx: &Context,
        step: &mut AgentStep,
    ) -> Result<Reply, (String, ErrorKind)> {
        let ask = Ask {
            llm: &self.llm,
            asker: Asker::Agent,
            system: self.round_system.as_deref().unwrap_or(&self.system),
            schema: &self.schema,
            tries: self.settings.reply_retries + 1,
            events: &ctx.events,
        };
        let tools = &self.tools;
        ask.for_step(
            &mut self.conversation,
            step,
            |content| parse_reply(content, tools),
            correction_message,
        )
        .await
    }
}

#[async_trait]
impl Agent for LinuxAgent {
    fn begin_round(&mut self, ctx: &Context) {
        let done: Vec<String> = match &self.steps {
            Some(steps) => steps.iter().take(ctx.round_num as usize).cloned().collect(),
            None => Vec::new(),
        };
        let step = match (&self.steps, &ctx.subtask) {
            (Some(steps), Some(subtask)) => {
                Some((subtask.as_str(), ctx.round_num as usize + 1, steps.len()))
            }
            _ => None,
        };
        let brief = RoundBrief {
            request: &ctx.request,
            object: self.object.as_deref(),
            step,
            done: &done,
            workspace: &ctx.workspace,
        };
        self.conversation.start(round_message(&brief));
        // UFO retrieves for each subtask (a step plan's step), by its text.
        self.round_system = None;
        if let Some(recall) = &self.recall {
            let query = ctx.subtask.as_deref().unwrap_or(&ctx.request);
            let (block, given) = recall.examples(AGENT_TYPE, query, SHELL_APP);
            if !block.is_empty() {
                self.round_system = Some(format!("{}{block}", self.system));
            }
            self.given = given;
        }
    }

    async fn handle(&mut self, ctx: &mut Context, executor: &mut dyn Executor) -> AgentStep {
        ctx.give(std::mem::take(&mut self.given));
        let mut step = AgentStep::new(AGENT_TYPE, AGENT_TYPE, AgentStatus::Continue);
        let reply = match self.ask(ctx, &mut step).await {
            Ok(reply) => reply,
            Err((why, kind)) => {
                ctx.events.log(Level::Error, why.clone());
                step.status = AgentStatus::Error;
                step.error = Some(why);
                step.error_kind = kind;
                return step;
            }
        };
        step.reasoning(&reply.words);
        let Some(commands) =
            act::commands_of(&mut step, &ctx.events, &reply, self.settings.confirm)
        else {
            return step;
        };
        let acted = act::run(
            executor,
            &ctx.events,
            ctx.session_step + 1,
            reply.status,
            &commands,
        )
        .await;
        step.status = acted.status;
        let note = (reply.status == AgentStatus::Pending).then_some(act::NOBODY);
        let shown = acted.shown(&commands);
        self.conversation.push(Message::user(results_message(
            &shown,
            note,
            self.settings.observation_limit,
        )));
        self.conversation
            .end_step(act::step_summary(&shown, reply.status));
        step.actions = acted.records(commands);
        step
    }
}
