//! Task statuses (design.md §4).

use std::fmt;

use serde::{Deserialize, Serialize};

/// Where a task stands. `Pending` and `Running` are written while a run is under way;
/// the other five are final.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum TaskStatus {
    /// Selected, not started.
    Pending,
    /// Started, not finished (after a crash: interrupted).
    Running,
    /// Finished and its evaluation holds.
    Passed,
    /// Its evaluation does not hold, the agent gave up, or a step/round limit was hit.
    Failed,
    /// Infrastructure: bad task file, LLM unreachable, executor failure, runner failure.
    Error,
    /// Hit its wall-clock limit.
    Timeout,
    /// Stopped by the user or a run-level stop rule.
    Cancelled,
    /// Not run: this machine lacks what it needs (an app, a cached file, a package), as
    /// its reason says. Counted apart, never as a failure.
    Unsupported,
}

impl TaskStatus {
    /// The six final statuses, in report order.
    pub(crate) const FINAL: [TaskStatus; 6] = [
        Self::Passed,
        Self::Failed,
        Self::Error,
        Self::Timeout,
        Self::Cancelled,
        Self::Unsupported,
    ];

    /// True once the task will not run again in this run dir (unless asked).
    pub(crate) fn is_final(self) -> bool {
        !matches!(self, Self::Pending | Self::Running)
    }

    /// True once the task needs no more running: a verdict (`passed`, `failed`,
    /// `timeout`). A `cancelled` task, an infrastructure `error` and an `unsupported`
    /// one (the machine may have what it needs by then) run again when the run is
    /// resumed; UFO's `tasks_status.json` says `true` of the others alone.
    pub(crate) fn is_done(self) -> bool {
        self.is_final() && !matches!(self, Self::Cancelled | Self::Error | Self::Unsupported)
    }

    /// The name used in files.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Running => "running",
            Self::Passed => "passed",
            Self::Failed => "failed",
            Self::Error => "error",
            Self::Timeout => "timeout",
            Self::Cancelled => "cancelled",
            Self::Unsupported => "unsupported",
        }
    }
}

/// How one attempt ended: a task's statuses, and `interrupted` for an attempt during
/// which the runner itself stopped (killed, or the machine went down), so that it has no
/// result of its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum AttemptStatus {
    /// Under way (or, in a record read back, never closed).
    Running,
    /// As the task statuses.
    Passed,
    /// As the task statuses.
    Failed,
    /// As the task statuses.
    Error,
    /// As the task statuses.
    Timeout,
    /// As the task statuses.
    Cancelled,
    /// As the task statuses.
    Unsupported,
    /// The runner stopped during it.
    Interrupted,
}

impl From<TaskStatus> for AttemptStatus {
    fn from(s: TaskStatus) -> Self {
        match s {
            TaskStatus::Pending | TaskStatus::Running => Self::Running,
            TaskStatus::Passed => Self::Passed,
            TaskStatus::Failed => Self::Failed,
            TaskStatus::Error => Self::Error,
            TaskStatus::Timeout => Self::Timeout,
            TaskStatus::Cancelled => Self::Cancelled,
            TaskStatus::Unsupported => Self::Unsupported,
        }
    }
}

impl fmt::Display for AttemptStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Running => "running",
            Self::Passed => "passed",
            Self::Failed => "failed",
            Self::Error => "error",
            Self::Timeout => "timeout",
            Self::Cancelled => "cancelled",
            Self::Unsupported => "unsupported",
            Self::Interrupted => "interrupted",
        })
    }
}

impl fmt::Display for TaskStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
