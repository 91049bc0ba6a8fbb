//! Carrying out the actions of a model's reply, for every agent that acts (the
//! LinuxAgent, the AppAgent): the unattended answer to CONFIRM, the commands run in
//! order (the rest skipped after a failure), and the step's status after them (a
//! FINISH whose action failed goes on, so that the model sees the error first).

use super::ConfirmPolicy;
use super::reply::Reply;
use crate::event::TaskEvents;
use crate::executor::{Executed, Executor, execute_all};
use crate::record::{ActionRecord, AgentStatus};
use crate::session::AgentStep;
use crate::tool::{ResultStatus, ToolCall, ToolResult};

/// What an unattended run answers a PENDING.
pub(super) const NOBODY: &str =
    "no human is available to answer questions in this run; go on with your best judgment";

/// The commands of `reply` (its actions as tool calls), or `None` when it asks to
/// confirm them and `policy` denies that: then `step` fails saying why, and nothing
/// runs.
pub(super) fn commands_of(
    step: &mut AgentStep,
    events: &TaskEvents,
    reply: &Reply,
    policy: ConfirmPolicy,
) -> Option<Vec<ToolCall>> {
    let commands: Vec<ToolCall> = reply
        .actions
        .iter()
        .map(|a| ToolCall::action(&a.function, a.arguments.clone()))
        .collect();
    (!deny(step, events, reply.status, policy, &commands)).then_some(commands)
}

/// Denies a reply asking to confirm `commands` under `policy`: `step` fails saying why,
/// and nothing runs. Returns whether it did.
fn deny(
    step: &mut AgentStep,
    events: &TaskEvents,
    status: AgentStatus,
    policy: ConfirmPolicy,
    commands: &[ToolCall],
) -> bool {
    if status != AgentStatus::Confirm || policy != ConfirmPolicy::Deny || commands.is_empty() {
        return false;
    }
    let asked: Vec<String> = commands.iter().map(ToolCall::action_string).collect();
    let why = format!(
        "the agent asked to confirm a sensitive action ({}); unattended runs deny it \
         (set confirm = \"allow\" under [agent] in ufo-batch.toml to let such actions run)",
        asked.join("; ")
    );
    events.warn(why.clone());
    step.status = AgentStatus::Fail;
    step.error = Some(why);
    true
}

/// What running a reply's commands gave.
pub(super) struct Acted {
    /// Each command's result.
    pub(super) executed: Vec<Executed>,
    /// The step's status.
    pub(super) status: AgentStatus,
}

impl Acted {
    /// Each command as a call string and its result, for the model.
    pub(super) fn shown(&self, commands: &[ToolCall]) -> Vec<(String, ToolResult)> {
        commands
            .iter()
            .zip(&self.executed)
            .map(|(c, e)| (c.action_string(), e.result.clone()))
            .collect()
    }

    /// The step's action records.
    pub(super) fn records(&self, commands: Vec<ToolCall>) -> Vec<ActionRecord> {
        commands
            .into_iter()
            .zip(&self.executed)
            .map(|(command, e)| ActionRecord {
                function: command.tool_name.clone(),
                action_string: command.action_string(),
                arguments: crate::tool::call::recorded_arguments(command.parameters),
                status: self.status,
                result: e.result.clone(),
                divergence: None,
                duration_s: e.duration_s,
            })
            .collect()
    }
}

/// Runs `commands` (logged as step `step`'s) and decides the step's status from the
/// model's `said`.
pub(super) async fn run(
    executor: &mut dyn Executor,
    events: &TaskEvents,
    step: u32,
    said: AgentStatus,
    commands: &[ToolCall],
) -> Acted {
    for command in commands {
        events.info(format!("step {step}: {}", command.action_string()));
    }
    let executed = execute_all(executor, commands).await;
    let failed = executed
        .iter()
        .any(|e| e.result.status != ResultStatus::Success);
    let status = match said {
        AgentStatus::Finish if failed => {
            events
                .info("the model said FINISH but an action failed; it gets to see the error first");
            AgentStatus::Continue
        }
        other => other,
    };
    Acted { executed, status }
}

/// One line for a folded step: each action and how it ended.
pub(super) fn step_summary(actions: &[(String, ToolResult)], status: AgentStatus) -> String {
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
