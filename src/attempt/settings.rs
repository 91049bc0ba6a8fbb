//! What every attempt of a run shares (its settings), and how the run tells a running
//! attempt to stop.

use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::eval::EvalMode;
use crate::executor::{DesktopSettings, ShellSettings};
use crate::rundir::RunLayout;

/// Settings every attempt of a run shares.
#[derive(Clone)]
pub(crate) struct AttemptSettings {
    /// Where task folders live (the run dir resolved, see `RunLayout::resolved`, when
    /// the run made them).
    pub(crate) layout: RunLayout,
    /// How commands run.
    pub(crate) shell: ShellSettings,
    /// Knobs of desktop tasks.
    pub(crate) desktop: DesktopSettings,
    /// Wall-clock limit of a task that sets none.
    pub(crate) timeout: Duration,
    /// Step limit of a task that sets none.
    pub(crate) max_steps: Option<u32>,
    /// Round limit.
    pub(crate) max_rounds: Option<u32>,
    /// Evaluation mode.
    pub(crate) eval: EvalMode,
    /// The LLM, when one is configured.
    pub(crate) llm: Option<std::sync::Arc<crate::llm::LlmClient>>,
    /// The operator's settings and client, when an operator works on some task.
    pub(crate) operator: Option<crate::agent::OperatorRun>,
    /// The session mode of tasks that set none (`--mode`).
    pub(crate) mode: Option<crate::task::SessionMode>,
    /// Knobs of LLM agents.
    pub(crate) agent: crate::agent::AgentSettings,
    /// The run's MCP servers, when it has any.
    pub(crate) mcp: Option<std::sync::Arc<crate::mcp::McpHub>>,
    /// The device server, when tasks run on UFO's device clients.
    pub(crate) devices: Option<std::sync::Arc<crate::device::DeviceHub>>,
    /// The run's experience, when it saves or gives any.
    pub(crate) experience: Option<std::sync::Arc<crate::experience::Experience>>,
    /// OSWorld's parts, for OSWorld tasks.
    pub(crate) osworld: std::sync::Arc<crate::osworld::OsWorldRun>,
}

/// How the run tells a running attempt to stop: `kill` ends it at once (it becomes
/// `cancelled`); `stopping` says the run is stopping (no new tasks start), which turns a
/// command killed by a signal from outside (a scheduler stopping the job) into a
/// cancellation rather than the task's failure.
#[derive(Clone, Debug, Default)]
pub(crate) struct AttemptStop {
    /// End the attempt now.
    pub(crate) kill: CancellationToken,
    /// The run is stopping.
    pub(crate) stopping: CancellationToken,
}

/// How long an attempt whose command was killed by a signal from outside waits for the
/// run to say it is stopping: a scheduler signals the runner and the commands at once,
/// and the command's death can be seen first.
pub(super) const SIGNAL_WINDOW: Duration = Duration::from_secs(1);
