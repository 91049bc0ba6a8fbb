//! The record of a task of the batch that has no result in a run dir: counted as an
//! `error` with why, so that nothing drops out of the denominator.

use crate::record::{SessionType, ShapeName, TaskRecord, TaskStatus};
use crate::task::TaskId;

/// What a task that is not final says when no runner works on its run any more.
const INTERRUPTED: &str = "interrupted: the runner stopped (killed, or its machine went down) before this task ended; running the run (or its shard) again resumes it";

/// A record that is not final, read where no runner works any more: the task is
/// unfinished (`pending`, with why), not `running`. True when it was not final.
pub(super) fn mark_interrupted(record: &mut TaskRecord) -> bool {
    let unfinished = !record.status.is_final();
    if unfinished {
        record.status = TaskStatus::Pending;
        record.error = Some(INTERRUPTED.to_string());
    }
    unfinished
}

/// An `error` record for `id` (repetition `repeat` of its task, with `--repeat`),
/// saying `why`.
pub(super) fn missing(id: &TaskId, repeat: Option<u32>, why: String) -> TaskRecord {
    let mut record = TaskRecord::new(
        id.clone(),
        String::new(),
        String::new(),
        ShapeName::Invalid,
        SessionType::None,
        String::new(),
    );
    record.status = TaskStatus::Error;
    record.error = Some(why);
    record.repeat = repeat;
    record
}

/// The ids of the batch that `records` answer for: each record's own and, for a
/// repetition (`ID/rep-N`), its task's: a run dir's `selection.json` written by an
/// earlier version named the task, not its repetitions.
pub(super) fn answered<'a>(
    records: impl IntoIterator<Item = &'a TaskRecord>,
) -> std::collections::BTreeSet<TaskId> {
    let mut ids = std::collections::BTreeSet::new();
    for r in records {
        if r.repeat.is_some() {
            ids.insert(r.base_id());
        }
        ids.insert(r.id.clone());
    }
    ids
}
