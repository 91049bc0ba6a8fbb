//! Resuming a run dir: deciding, from each task's stored `status.json`, whether it runs
//! again. A task with a final result is kept (unless `--rerun-failed` and it did not
//! pass, or its task file changed since); `cancelled`, `running` and `pending` tasks
//! run again. `--fresh` deletes the run dir first, and only a ufo-batch run dir.

use crate::config::ResumeMode;
use crate::layout::RunLayout;
use crate::record::{TaskRecord, TaskStatus};
use crate::task::{Shape, Task, TaskId};

/// Why a run dir cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum RunDirError {
    /// The folder exists, is not empty, and is not ours.
    #[error(
        "{0} exists and is not a ufo-batch run folder (it has no ufo-batch run.json); choose another --out or --name"
    )]
    NotOurs(String),
    /// Reading or deleting it failed.
    #[error("cannot use the run folder {path}: {source}")]
    Io {
        /// The folder.
        path: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

/// What to do with one task.
#[derive(Debug)]
pub enum Decision {
    /// Run it; attempts continue from the earlier record if there is one.
    Run(Option<TaskRecord>),
    /// Keep its earlier final result.
    Keep(TaskRecord),
}

/// Checks the run dir is ours (or new), deletes it for `--fresh`, and returns how many
/// invocations of it came before.
pub fn prepare_run_dir(layout: &RunLayout, mode: ResumeMode) -> Result<u32, RunDirError> {
    let root = layout.root();
    let io = |source| RunDirError::Io {
        path: root.display().to_string(),
        source,
    };
    if !root.exists() {
        return Ok(0);
    }
    let run_json = crate::layout::read_run_json(root);
    let empty = std::fs::read_dir(root).map_err(io)?.next().is_none();
    let Some(run_json) = run_json else {
        return if empty {
            Ok(0)
        } else {
            Err(RunDirError::NotOurs(root.display().to_string()))
        };
    };
    if mode == ResumeMode::Fresh {
        std::fs::remove_dir_all(root).map_err(io)?;
        return Ok(0);
    }
    Ok(run_json
        .get("invocation")
        .and_then(|v| v.as_u64())
        .unwrap_or(1) as u32)
}

/// The stored record of a task, if it has a readable one.
pub fn previous_record(layout: &RunLayout, id: &TaskId) -> Option<TaskRecord> {
    let text = std::fs::read_to_string(layout.status(id)).ok()?;
    match serde_json::from_str::<TaskRecord>(&text) {
        Ok(record) if &record.id == id => Some(record),
        Ok(_) => None,
        Err(e) => {
            tracing::warn!(task = %id, "ignoring an unreadable status.json: {e}");
            None
        }
    }
}

/// Whether `task` runs again, given its stored record.
pub fn decide(task: &Task, previous: Option<TaskRecord>, mode: ResumeMode) -> Decision {
    let Some(record) = previous else {
        return Decision::Run(None);
    };
    let changed = record.source_hash != task.source_hash || record.shape == Shape::Invalid;
    let keep = !changed
        && match mode {
            ResumeMode::Resume => {
                record.status.is_final() && record.status != TaskStatus::Cancelled
            }
            ResumeMode::RerunFailed => record.status == TaskStatus::Passed,
            ResumeMode::Fresh => false,
        };
    if keep {
        Decision::Keep(record)
    } else {
        Decision::Run(Some(record))
    }
}
