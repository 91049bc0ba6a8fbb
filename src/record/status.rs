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
}

impl TaskStatus {
    /// The five final statuses, in report order.
    pub(crate) const FINAL: [TaskStatus; 5] = [
        Self::Passed,
        Self::Failed,
        Self::Error,
        Self::Timeout,
        Self::Cancelled,
    ];

    /// True once the task will not run again in this run dir (unless asked).
    pub(crate) fn is_final(self) -> bool {
        !matches!(self, Self::Pending | Self::Running)
    }

    /// True once the task needs no more running: final and not `cancelled` (a
    /// cancelled task runs again when the run is resumed).
    pub(crate) fn is_done(self) -> bool {
        self.is_final() && self != Self::Cancelled
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
        }
    }
}

impl fmt::Display for TaskStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
