//! The totals of a run: tasks by status, pass rate and its interval, time, tokens and
//! cost, counted over every task's row.

use std::borrow::Borrow;

use serde::Serialize;

use crate::record::{TaskRow, TaskStatus};
use crate::stats::{Interval, wilson};

/// Totals over all tasks.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub(crate) struct Totals {
    /// Tasks selected.
    pub(crate) total: usize,
    /// Passed.
    pub(crate) passed: usize,
    /// Failed.
    pub(crate) failed: usize,
    /// Error.
    pub(crate) error: usize,
    /// Timeout.
    pub(crate) timeout: usize,
    /// Cancelled.
    pub(crate) cancelled: usize,
    /// Not final (interrupted before they ended).
    pub(crate) unfinished: usize,
    /// Not run: the machine lacks what they need. Counted apart: not in the pass rate.
    pub(crate) unsupported: usize,
    /// passed / (total − unsupported).
    pub(crate) pass_rate: f64,
    /// The pass rate's 95% Wilson interval; absent with repetitions, which are not
    /// independent (see `repeats.totals.pass_at_1_ci`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) pass_rate_ci: Option<Interval>,
    /// Sum of task durations, in seconds.
    pub(crate) task_seconds: f64,
    /// Prompt tokens.
    pub(crate) prompt_tokens: u64,
    /// Completion tokens.
    pub(crate) completion_tokens: u64,
    /// Total cost; null when some task's cost is unknown.
    pub(crate) cost_usd: Option<f64>,
}

impl Totals {
    /// The counts by status in words, for a printed line: `3 passed, 1 failed, 0 error,
    /// 0 timeout, 0 cancelled`, and `, 2 unfinished` when some are; they add up to the
    /// total.
    pub(crate) fn counts(&self) -> String {
        let mut text = format!(
            "{} passed, {} failed, {} error, {} timeout, {} cancelled",
            self.passed, self.failed, self.error, self.timeout, self.cancelled
        );
        if self.unfinished > 0 {
            text.push_str(&format!(", {} unfinished", self.unfinished));
        }
        if self.unsupported > 0 {
            text.push_str(&format!(", {} unsupported", self.unsupported));
        }
        text
    }
}

/// Totals of `records`.
pub(crate) fn totals(records: impl IntoIterator<Item = impl Borrow<TaskRow>>) -> Totals {
    let mut t = Totals {
        total: 0,
        passed: 0,
        failed: 0,
        error: 0,
        timeout: 0,
        cancelled: 0,
        unfinished: 0,
        unsupported: 0,
        pass_rate: 0.0,
        pass_rate_ci: None,
        task_seconds: 0.0,
        prompt_tokens: 0,
        completion_tokens: 0,
        cost_usd: Some(0.0),
    };
    for r in records {
        let r = r.borrow();
        t.total += 1;
        match r.status {
            TaskStatus::Passed => t.passed += 1,
            TaskStatus::Failed => t.failed += 1,
            TaskStatus::Error => t.error += 1,
            TaskStatus::Timeout => t.timeout += 1,
            TaskStatus::Cancelled => t.cancelled += 1,
            TaskStatus::Pending | TaskStatus::Running => t.unfinished += 1,
            TaskStatus::Unsupported => t.unsupported += 1,
        }
        t.task_seconds += r.duration_s;
        t.prompt_tokens += r.usage.prompt_tokens;
        t.completion_tokens += r.usage.completion_tokens;
        t.cost_usd = match (t.cost_usd, r.cost_usd) {
            (Some(a), Some(b)) => Some(a + b),
            _ => None,
        };
    }
    let ran = t.total - t.unsupported;
    if ran > 0 {
        t.pass_rate = (t.passed as f64 / ran as f64 * 10_000.0).round() / 10_000.0;
        t.pass_rate_ci = wilson(t.passed as f64, ran as f64).map(Interval::rounded);
    }
    t.task_seconds = (t.task_seconds * 1000.0).round() / 1000.0;
    t
}
