//! The status and reason of an attempt that ended: the status rules of design.md §4 for
//! a session that ran, an error retried or fatal, and the words of a timeout.

use std::time::Duration;

use super::rule;
use crate::record::{Evaluation, TaskStatus};
use crate::session::{Context, ErrorKind, SessionEnd};

/// The status rules of design.md §4 for a session that ran.
pub(super) fn session_status(
    end: &SessionEnd,
    evaluation: Option<&Evaluation>,
) -> (TaskStatus, Option<String>) {
    // A score (OSWorld's) is the verdict however the agent ended, as OSWorld counts:
    // an infeasible task's pass is the agent's FAIL, a step limit scores what was done.
    if let Some(e) = evaluation.filter(|e| e.score.is_some())
        && !matches!(end, SessionEnd::Error(..))
    {
        return match (e.holds(), end) {
            (true, _) => (TaskStatus::Passed, None),
            (false, SessionEnd::Finished) => (TaskStatus::Failed, Some(e.reason.clone())),
            (false, end) => (
                TaskStatus::Failed,
                Some(format!("{}; the session {}", e.reason, end.describe())),
            ),
        };
    }
    match end {
        SessionEnd::Finished => match evaluation {
            Some(e) if !e.holds() => (TaskStatus::Failed, Some(e.reason.clone())),
            _ => (TaskStatus::Passed, None),
        },
        SessionEnd::Failed(why) => (TaskStatus::Failed, Some(why.clone())),
        // An agent that cannot produce usable replies failed the task; a broken LLM
        // connection or executor is not the agent's doing.
        SessionEnd::Error(why, kind) => (rule(kind.blame()).status, Some(why.clone())),
        SessionEnd::StepLimit(_) | SessionEnd::RoundLimit(_) => {
            (TaskStatus::Failed, Some(end.describe()))
        }
    }
}

/// Whether an error of `kind` is retried, and, when it stops the run, why (`why`).
pub(super) fn retried_or_fatal(kind: ErrorKind, why: &str) -> (bool, Option<String>) {
    match kind {
        ErrorKind::Fatal(_) => (false, Some(why.to_string())),
        ErrorKind::Blamed(blame) => (rule(blame).retried, None),
    }
}

/// Why an attempt timed out: the limit, the stage, the step it was in (during the
/// session), and the time spent waiting for the LLM provider, which is not counted.
pub(super) fn timed_out(
    limit: Duration,
    waited: Duration,
    ctx: Option<&Context>,
    stage: &str,
) -> String {
    // The session stops in the middle of a step: the one after the last
    // finished (whose record was never written), which is said, with how
    // many steps were done.
    let done = ctx
        .and_then(|c| c.trajectory.last())
        .map_or(0, |s| s.session_step);
    let step = (stage == "the session").then(|| {
        format!(
            ", in step {} ({} done)",
            done + 1,
            crate::text::plural(done as usize, "step")
        )
    });
    let waited = if waited >= Duration::from_millis(100) {
        format!(
            " (not counting {:.1}s spent waiting for the LLM provider)",
            waited.as_secs_f64()
        )
    } else {
        String::new()
    };
    format!(
        "timed out after {} during {stage}{}{waited}",
        humantime::format_duration(limit),
        step.unwrap_or_default()
    )
}
