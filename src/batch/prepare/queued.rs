//! A valid task as the batch holds it until it runs: by its file, with what its result
//! will depend on and what it needs of the LLM.

use std::borrow::Cow;
use std::path::Path;
use std::sync::Arc;

use crate::batch::RunSettings;
use crate::batch::inputs::{Held, SharedSettings};
use crate::record::{Inputs, TaskRecord};
use crate::rundir::Resumable;
use crate::task::{FilePlace, Identified, Task, TaskId, TaskSource};

/// A valid task as the batch holds it until it runs: by its file, with what its result
/// will depend on and what it needs of the LLM (64 bytes: a batch holds a million).
pub(super) struct Queued {
    pub(super) source: TaskSource,
    pub(super) held: Arc<Held>,
    /// Its earlier record, when it runs again.
    pub(super) previous: Option<Box<TaskRecord>>,
}

impl Queued {
    pub(super) fn of(
        task: Task,
        file: Option<FilePlace>,
        config: &RunSettings,
        shared: &SharedSettings,
    ) -> Self {
        Self {
            held: shared.held(&task, config),
            source: TaskSource::of(task, file),
            previous: None,
        }
    }

    pub(super) fn repetition(&self, n: u32) -> Self {
        Self {
            source: self.source.repetition(n),
            held: Arc::clone(&self.held),
            previous: None,
        }
    }
}

impl Identified for Queued {
    fn id(&self) -> &TaskId {
        self.source.id()
    }
    fn source(&self) -> Cow<'_, Path> {
        self.source.path()
    }
    fn source_hash(&self) -> String {
        self.source.source_hash()
    }
}

impl Resumable for Queued {
    fn inputs(&self) -> Inputs {
        self.held.inputs.with_task_file(self.source.source_hash())
    }
    fn resume_from(&mut self, previous: Box<TaskRecord>) {
        self.previous = Some(previous);
    }
    fn keeps_error(blame: crate::tool::Blame) -> bool {
        crate::attempt::rule(blame).kept_on_resume
    }
}

#[cfg(test)]
mod tests {
    /// A batch holds one of these per task until it starts: a million of them are most
    /// of a large run's memory, so their size is kept.
    #[test]
    fn a_queued_task_is_held_in_64_bytes() {
        assert!(std::mem::size_of::<super::Queued>() <= 64);
        assert!(std::mem::size_of::<crate::pool::Scheduled>() <= 64);
    }
}
