//! The ReplayAgent: carries out a recorded plan's actions one step each, and compares
//! every result with the action's `expect` (success when there is none). A difference
//! fails the step, and with it the task, saying what differed.

use std::collections::VecDeque;
use std::time::Instant;

use async_trait::async_trait;

use crate::executor::Executor;
use crate::record::{ActionRecord, AgentStatus};
use crate::session::{Agent, AgentStep, Context};
use crate::task::Action;
use crate::tool::ToolCall;
use crate::units::seconds;

const AGENT_TYPE: &str = "ReplayAgent";

/// What a replay says when its recording ended saying `FAIL`.
const SAYS_FAIL: &str =
    "the recording ended here saying the task cannot be done (last_action FAIL)";

/// The agent type a replayed step is logged under: the UFO agent that recorded it
/// (`HostAgent`, `AppAgent`, `AppAgent/<app>` is an AppAgent), as UFO's trajectory
/// reader looks for it (`ufo/trajectory/parser.py`, `host_agent_log` and
/// `app_agent_log` by `agent_type`); any other the ReplayAgent's. The session
/// (FollowerSession) says that it was a replay.
fn recorded_type(agent: &str) -> &'static str {
    let class = agent.split('/').next().unwrap_or_default();
    ["HostAgent", "AppAgent", "LinuxAgent"]
        .into_iter()
        .find(|t| *t == class)
        .unwrap_or(AGENT_TYPE)
}

/// Replays recorded actions.
pub(crate) struct ReplayAgent {
    actions: VecDeque<Action>,
    total: usize,
    /// The folder of the plan's file: where what the recording saw is.
    plan_dir: Option<std::path::PathBuf>,
    /// The recording ended saying the task cannot be done.
    says_fail: bool,
}

impl ReplayAgent {
    /// An agent that will replay `actions` in order, recorded in `plan_dir`.
    pub(crate) fn new(actions: Vec<Action>, plan_dir: Option<std::path::PathBuf>) -> Self {
        Self {
            total: actions.len(),
            actions: actions.into(),
            plan_dir,
            says_fail: false,
        }
    }

    /// The replay ends as its recording did, saying the task cannot be done (`FAIL`),
    /// once every action replayed.
    pub(crate) fn saying_fail(mut self, says_fail: bool) -> Self {
        self.says_fail = says_fail;
        self
    }

    /// For a computer-use action that did not replay: the screen now and the one the
    /// recording saw, to compare.
    fn screens(&self, action: &Action, step: u32) -> Option<String> {
        let recorded = action.parameters.get("recorded_screenshot")?.as_str()?;
        let name = std::path::Path::new(recorded).file_name()?;
        let place = match &self.plan_dir {
            Some(dir) if dir.join(name).is_file() => dir.join(name).display().to_string(),
            _ => format!("{} (not beside the plan)", name.to_string_lossy()),
        };
        Some(format!(
            " (the screen now: action_step{step}.png; as recorded: {place})"
        ))
    }
}

#[async_trait]
impl Agent for ReplayAgent {
    async fn handle(&mut self, ctx: &mut Context, executor: &mut dyn Executor) -> AgentStep {
        let Some(action) = self.actions.pop_front() else {
            if self.says_fail {
                let mut step = AgentStep::new(AGENT_TYPE, AGENT_TYPE, AgentStatus::Fail);
                step.comment = Some(SAYS_FAIL.to_string());
                return step;
            }
            let mut step = AgentStep::new(AGENT_TYPE, AGENT_TYPE, AgentStatus::Finish);
            step.comment = Some("the plan has no actions".to_string());
            return step;
        };
        let number = self.total - self.actions.len();
        let command = ToolCall::action(&action.action, action.parameters.clone());
        ctx.events.info(format!(
            "step {number}/{}: {}",
            self.total,
            command.action_string()
        ));
        let clock = Instant::now();
        let result = executor.execute(&command).await;
        let duration_s = seconds(clock.elapsed());
        let shown = crate::text::code_span(&crate::text::shorten(&command.action_string(), 120));
        // One wording: a step that records a result (`expect`) and got another
        // diverged from the recording; a step that records none (a hand-written plan)
        // and failed simply failed, in the tool's own words.
        let (divergence, error) = if action.expect.is_some() {
            let diffs = action.differences(&result);
            let divergence = (!diffs.is_empty()).then(|| diffs.join("; "));
            let error = divergence
                .as_ref()
                .map(|d| format!("step {number} {shown} diverged from the recording: {d}"));
            (divergence, error)
        } else {
            let error = (result.status != crate::tool::ResultStatus::Success).then(|| {
                let why = result.error.as_deref().map_or_else(
                    || result.status.to_string(),
                    |e| crate::text::shorten(e, 300),
                );
                format!("step {number} {shown} failed: {why}")
            });
            (None, error)
        };
        let error = error.map(|e| match self.screens(&action, ctx.session_step + 1) {
            Some(screens) => format!("{e}{screens}"),
            None => e,
        });
        let status = match (&error, self.actions.is_empty()) {
            (Some(_), _) => AgentStatus::Fail,
            (None, true) if self.says_fail => AgentStatus::Fail,
            (None, true) => AgentStatus::Finish,
            (None, false) => AgentStatus::Continue,
        };
        if let Some(e) = &error {
            ctx.events.warn(e.clone());
        }
        let name = action
            .agent
            .clone()
            .unwrap_or_else(|| AGENT_TYPE.to_string());
        let mut step = AgentStep::new(recorded_type(&name), name, status);
        step.comment = match (status, error.is_none()) {
            (AgentStatus::Fail, true) => Some(SAYS_FAIL.to_string()),
            _ => action.comment.clone(),
        };
        step.error = error;
        step.actions.push(ActionRecord {
            function: command.tool_name.clone(),
            action_string: command.action_string(),
            arguments: crate::tool::call::recorded_arguments(command.parameters),
            status,
            result,
            divergence,
            duration_s,
        });
        step
    }
}
