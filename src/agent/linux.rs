//! The LinuxAgent: asks the model for one action at a time (UFO's reply schema), runs it
//! through the executor, and feeds the results back, until the model says FINISH or
//! FAIL. A reply that cannot be used is sent back with the reason, a bounded number of
//! times. PENDING and CONFIRM never wait for a human: the unattended policy decides.

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::Value;

use super::ask::{Ask, AskError, Asker, Spent};
use super::conversation::Conversation;
use super::prompt::{
    RoundBrief, correction_message, reply_schema, results_message, round_message, system_prompt,
};
use super::reply::{Reply, parse_reply};
use crate::event::Level;
use crate::executor::{Executor, execute_all};
use crate::llm::{LlmClient, Message};
use crate::record::{ActionRecord, AgentStatus};
use crate::session::{Agent, AgentStep, Context, ErrorKind};
use crate::tool::{ResultStatus, ToolCall, ToolSpec};

const AGENT_TYPE: &str = "LinuxAgent";

/// What to do when the model asks to confirm a sensitive action.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum ConfirmPolicy {
    /// Refuse it: the action does not run and the task fails, saying why.
    #[default]
    Deny,
    /// Run it.
    Allow,
}

/// Knobs of LLM agents.
#[derive(Clone, Debug, serde::Serialize)]
pub(crate) struct AgentSettings {
    /// Characters of command results sent back to the model per step.
    pub(crate) observation_limit: usize,
    /// Times a reply that cannot be used is asked again before the step ends in ERROR.
    pub(crate) reply_retries: u32,
    /// The unattended answer to CONFIRM.
    pub(crate) confirm: ConfirmPolicy,
    /// Steps sent to the model in full; older ones are summarized (0: all).
    pub(crate) history_steps: u32,
}

impl Default for AgentSettings {
    fn default() -> Self {
        Self {
            observation_limit: 4000,
            reply_retries: 3,
            confirm: ConfirmPolicy::Deny,
            history_steps: 20,
        }
    }
}

/// A single-tier agent working through the shell tools.
pub(crate) struct LinuxAgent {
    llm: Arc<LlmClient>,
    tools: Vec<ToolSpec>,
    settings: AgentSettings,
    system: String,
    schema: Value,
    object: Option<String>,
    /// A step plan's steps (follower sessions), one round each.
    steps: Option<Vec<String>>,
    /// The conversation of the current round.
    conversation: Conversation,
}

impl LinuxAgent {
    /// An agent using `llm` and `tools`; `steps` makes it a follower of a step plan.
    pub(crate) fn new(
        llm: Arc<LlmClient>,
        tools: Vec<ToolSpec>,
        settings: AgentSettings,
        object: Option<String>,
        steps: Option<Vec<String>>,
    ) -> Self {
        let history_steps = settings.history_steps as usize;
        Self {
            system: system_prompt(&tools),
            schema: reply_schema(&tools),
            llm,
            tools,
            settings,
            object,
            steps,
            conversation: Conversation::new(history_steps),
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
            system: &self.system,
            schema: &self.schema,
            tries: self.settings.reply_retries + 1,
            events: &ctx.events,
        };
        let tools = &self.tools;
        let mut spent = Spent::default();
        let result = ask
            .until_parsed(
                &mut self.conversation,
                &mut spent,
                |content| parse_reply(content, tools),
                correction_message,
            )
            .await;
        step.usage.add(spent.usage);
        step.cost.add(spent.cost);
        step.llm.add(spent.llm);
        result.map_err(|e| match e {
            AskError::Llm(e) if e.is_fatal() => (e.to_string(), ErrorKind::Fatal),
            AskError::Llm(e) => (e.to_string(), ErrorKind::Infrastructure),
            AskError::Unusable(last_problem) => (
                format!(
                    "the model's replies could not be used ({} tries; each is quoted in task.log); last problem: {last_problem}",
                    ask.tries
                ),
                ErrorKind::Agent,
            ),
        })
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
    }

    async fn handle(&mut self, ctx: &mut Context, executor: &mut dyn Executor) -> AgentStep {
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
        step.observation = reply.observation.clone();
        step.thought = reply.thought.clone();
        step.plan = reply.plan.clone();
        step.comment = reply.comment.clone();
        let commands: Vec<ToolCall> = reply
            .actions
            .iter()
            .map(|a| ToolCall::action(&a.function, a.arguments.clone()))
            .collect();
        if reply.status == AgentStatus::Confirm
            && self.settings.confirm == ConfirmPolicy::Deny
            && !commands.is_empty()
        {
            let asked: Vec<String> = commands.iter().map(ToolCall::action_string).collect();
            let why = format!(
                "the agent asked to confirm a sensitive action ({}); unattended runs deny it \
                 (set confirm = \"allow\" under [agent] in ufo-batch.toml to let such actions run)",
                asked.join("; ")
            );
            ctx.events.warn(why.clone());
            step.status = AgentStatus::Fail;
            step.error = Some(why);
            return step;
        }
        for command in &commands {
            ctx.events.info(format!(
                "step {}: {}",
                ctx.session_step + 1,
                command.action_string()
            ));
        }
        let executed = execute_all(executor, &commands).await;
        let failed = executed
            .iter()
            .any(|e| e.result.status != ResultStatus::Success);
        step.status = match reply.status {
            AgentStatus::Fail => AgentStatus::Fail,
            AgentStatus::Finish if failed => {
                ctx.events.info(
                    "the model said FINISH but an action failed; it gets to see the error first",
                );
                AgentStatus::Continue
            }
            other => other,
        };
        let note = (reply.status == AgentStatus::Pending).then_some(
            "no human is available to answer questions in this run; go on with your best judgment",
        );
        let shown: Vec<(String, crate::tool::ToolResult)> = commands
            .iter()
            .zip(&executed)
            .map(|(c, e)| (c.action_string(), e.result.clone()))
            .collect();
        self.conversation.push(Message::user(results_message(
            &shown,
            note,
            self.settings.observation_limit,
        )));
        self.conversation
            .end_step(step_summary(&shown, reply.status));
        step.actions = commands
            .into_iter()
            .zip(executed)
            .map(|(command, e)| ActionRecord {
                function: command.tool_name.clone(),
                action_string: command.action_string(),
                arguments: command.parameters,
                status: step.status,
                result: e.result,
                divergence: None,
                duration_s: e.duration_s,
            })
            .collect();
        step
    }
}

/// One line for a folded step: each action and how it ended.
fn step_summary(actions: &[(String, crate::tool::ToolResult)], status: AgentStatus) -> String {
    if actions.is_empty() {
        return format!("no action ({status})");
    }
    let parts: Vec<String> = actions
        .iter()
        .map(|(call, r)| {
            let code = r
                .exit_code()
                .map(|c| format!(", exit code {c}"))
                .unwrap_or_default();
            format!("{} -> {}{code}", crate::text::shorten(call, 160), r.status)
        })
        .collect();
    parts.join("; ")
}
