//! The table of whose failure it is: what a failure of one party's makes of a task.

use crate::record::TaskStatus;
use crate::tool::Blame;

/// What a failure of one party's makes of a task: the table of the README's "Whose
/// failure it is", decided here and nowhere else.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Rule {
    /// The task's status.
    pub(crate) status: TaskStatus,
    /// Whether `--retries` tries it again in the same run.
    pub(crate) retried: bool,
    /// Whether a resumed run keeps the result while the task's inputs (its file, its
    /// object, the settings it depends on) are unchanged, rather than running it again.
    pub(crate) kept_on_resume: bool,
}

/// The rule for a failure of `blame`'s.
pub(crate) fn rule(blame: Blame) -> Rule {
    let (status, retried, kept_on_resume) = match blame {
        // The step failed and the agent saw it; the session ended as the agent ended it.
        Blame::Agent => (TaskStatus::Failed, false, true),
        // The same file gives the same error: not tried again in the run; a resumed
        // run reads the file again (an error is no verdict), as it always has.
        Blame::TaskFile => (TaskStatus::Error, false, false),
        // The same configuration refuses again: kept until it changes.
        Blame::Config => (TaskStatus::Error, false, true),
        // Another try, on another device or after the machine recovered, may pass.
        Blame::Environment | Blame::Runner => (TaskStatus::Error, true, false),
    };
    Rule {
        status,
        retried,
        kept_on_resume,
    }
}
