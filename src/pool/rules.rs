//! The pool's rules for stopping and retrying: a cost budget, a limit on failures, and
//! which attempts are retried and after how long. Pure decisions, tested on their own.

use std::sync::Arc;
use std::time::Duration;

use crate::attempt::AttemptOutcome;
use crate::backoff::Backoff;
use crate::llm::Spend;
use crate::record::TaskStatus;

/// A spending limit: no task starts once the run's LLM spend reaches `max_usd`.
pub(crate) struct Budget {
    /// The spend so far, updated by the LLM client.
    pub(crate) spend: Arc<Spend>,
    /// The limit.
    pub(crate) max_usd: f64,
}

impl Budget {
    /// Why no more tasks may start, if the budget is spent.
    pub(super) fn exhausted(&self) -> Option<String> {
        let spent = self.spend.usd();
        (spent >= self.max_usd).then(|| {
            format!(
                "the cost budget of ${} is reached (${spent:.4} spent; --max-cost)",
                crate::text::usd(self.max_usd)
            )
        })
    }
}

/// Retries after infrastructure errors: at most `retries` per task per invocation,
/// with exponential backoff and jitter. `failed` is never retried: it is the agent's
/// result, and retrying it would hide flakiness and cost money.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RetryPolicy {
    /// Retries allowed per task.
    pub(crate) retries: u32,
    /// The backoff between attempts.
    pub(crate) backoff: Backoff,
}

impl RetryPolicy {
    /// No retries.
    pub(crate) fn none() -> Self {
        Self {
            retries: 0,
            backoff: Backoff {
                base: Duration::from_secs(2),
                max: Duration::from_secs(60),
            },
        }
    }

    /// The delay before retrying, when `outcome` (attempt number `retry` of this
    /// invocation, counted from 1 for the first retry) deserves one.
    pub(super) fn delay(&self, outcome: &AttemptOutcome, retry: u32) -> Option<Duration> {
        let retryable =
            outcome.retryable && outcome.status == TaskStatus::Error && outcome.fatal.is_none();
        (retryable && retry <= self.retries).then(|| self.backoff.delay(retry))
    }
}

/// `--max-fail N` / `--fail-fast`: stop scheduling after N tasks did not pass.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct FailLimit {
    pub(super) max: Option<u32>,
    pub(super) seen: u32,
}

impl FailLimit {
    /// Counts a final status; returns the reason to stop once the limit is reached.
    pub(super) fn count(&mut self, status: TaskStatus) -> Option<String> {
        if !matches!(
            status,
            TaskStatus::Failed | TaskStatus::Error | TaskStatus::Timeout
        ) {
            return None;
        }
        self.seen += 1;
        match self.max {
            Some(1) if self.seen >= 1 => Some("a task did not pass (--fail-fast)".to_string()),
            Some(max) if self.seen >= max => Some(format!(
                "{} tasks did not pass (--max-fail {max})",
                self.seen
            )),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(status: TaskStatus, retryable: bool) -> AttemptOutcome {
        let mut o = AttemptOutcome::infrastructure_error("x".into());
        o.status = status;
        o.retryable = retryable;
        o
    }

    #[test]
    fn only_infrastructure_errors_are_retried() {
        let p = RetryPolicy {
            retries: 2,
            ..RetryPolicy::none()
        };
        assert!(p.delay(&outcome(TaskStatus::Error, true), 1).is_some());
        assert!(p.delay(&outcome(TaskStatus::Error, true), 2).is_some());
        assert!(
            p.delay(&outcome(TaskStatus::Error, true), 3).is_none(),
            "at most 2 retries"
        );
        assert!(
            p.delay(&outcome(TaskStatus::Error, false), 1).is_none(),
            "a deterministic error does not loop"
        );
        assert!(
            p.delay(&outcome(TaskStatus::Failed, true), 1).is_none(),
            "failed is never retried"
        );
        let mut fatal = outcome(TaskStatus::Error, true);
        fatal.fatal = Some("wrong key".into());
        assert!(p.delay(&fatal, 1).is_none());
        assert!(
            RetryPolicy::none()
                .delay(&outcome(TaskStatus::Error, true), 1)
                .is_none()
        );
    }

    #[test]
    fn fail_limits() {
        let mut ff = FailLimit {
            max: Some(1),
            seen: 0,
        };
        assert_eq!(ff.count(TaskStatus::Passed), None);
        assert_eq!(ff.count(TaskStatus::Cancelled), None);
        assert_eq!(
            ff.count(TaskStatus::Timeout).as_deref(),
            Some("a task did not pass (--fail-fast)")
        );
        let mut three = FailLimit {
            max: Some(3),
            seen: 0,
        };
        assert_eq!(three.count(TaskStatus::Failed), None);
        assert_eq!(three.count(TaskStatus::Error), None);
        assert_eq!(
            three.count(TaskStatus::Failed).as_deref(),
            Some("3 tasks did not pass (--max-fail 3)")
        );
        let mut none = FailLimit::default();
        assert_eq!(none.count(TaskStatus::Failed), None);
    }
}
