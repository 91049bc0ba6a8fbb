//! The record of a task of the batch that has no result in a run dir: counted as an
//! `error` with why, so that nothing drops out of the denominator.

use crate::record::{SessionType, ShapeName, TaskRecord, TaskStatus};
use crate::task::TaskId;

/// An `error` record for `id`, saying `why`.
pub(super) fn missing(id: &TaskId, why: String) -> TaskRecord {
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
    record
}
