//! The record of a task of the batch that has no result in a run dir: counted as an
//! `error` with why, so that nothing drops out of the denominator; and a run dir's whole
//! batch read back that way, as `report` and `compare` count it.

use std::path::Path;

use crate::record::{SessionType, ShapeName, TaskRecord, TaskStatus};
use crate::rundir::{RunLayout, StoredTask, Unreadable, load_batch};
use crate::task::TaskId;

/// What a task of a run cut short says when it never started.
const NOT_STARTED: &str = "not started: the runner stopped (killed, or its machine went down) before this task began; running the run (or its shard) again resumes it";

/// Every task of a run dir's batch, read where no runner works any more.
pub(super) struct Batch {
    /// The records found, those not final marked interrupted.
    pub(super) stored: Vec<StoredTask>,
    /// A record for each task of the batch with none, saying why (sorted by id).
    pub(super) absent: Vec<TaskRecord>,
    /// The `status.json` files that could not be read or do not count.
    pub(super) unreadable: Vec<Unreadable>,
}

/// How a run dir's last run ended, as its `run.json` says: what a task of its batch with
/// no record means.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Ended {
    /// It never wrote its end (killed, or its machine went down; no runner works there
    /// any more): the task never started, and a resume runs it.
    Killed,
    /// It stopped before the task started (a signal, `--fail-fast`, a budget), for this
    /// reason: the task was cancelled before it began (no folder is written for it).
    Stopped(String),
    /// It ran to its end: the task's result is lost.
    Finished,
}

impl Ended {
    /// How the run of the `run.json` `run` ended.
    pub(super) fn of(run: &serde_json::Value) -> Self {
        match run["state"].as_str() {
            Some("running") => Self::Killed,
            Some("interrupted" | "stopped") => Self::Stopped(
                run["stopped"]
                    .as_str()
                    .unwrap_or("the run stopped")
                    .to_string(),
            ),
            _ => Self::Finished,
        }
    }

    /// The record of the task `id` (repetition `repeat`) of a run that ended so, with no
    /// record of its own; `why_lost` says why when its result was lost.
    pub(super) fn absent(
        &self,
        id: &TaskId,
        repeat: Option<u32>,
        why_lost: impl FnOnce() -> String,
    ) -> TaskRecord {
        match self {
            Self::Killed => {
                let mut record = missing(id, repeat, NOT_STARTED.to_string());
                record.status = TaskStatus::Pending;
                record
            }
            Self::Stopped(reason) => {
                let mut record = missing(id, repeat, format!("not started: {reason}"));
                record.status = TaskStatus::Cancelled;
                record
            }
            Self::Finished => missing(id, repeat, why_lost()),
        }
    }
}

/// The batch of the run dir at `run_dir`, whose last run ended as `ended` says.
pub(super) fn whole_batch(run_dir: &Path, ended: &Ended) -> Batch {
    let layout = RunLayout::new(run_dir);
    let (mut stored, unreadable, selection) = load_batch(run_dir);
    for task in &mut stored {
        mark_interrupted(&mut task.record);
    }
    let found = answered(stored.iter().map(|t| &t.record));
    let absent = selection
        .iter()
        .flat_map(|s| s.members().map(move |id| (id, s.repetition(id))))
        .filter(|(id, _)| !found.contains(id))
        .map(|(id, repeat)| ended.absent(id, repeat, || why_missing(&layout, id, &unreadable)))
        .collect();
    Batch {
        stored,
        absent,
        unreadable,
    }
}

/// Why the task `id` of the batch has no result in the run dir at `layout`.
fn why_missing(layout: &RunLayout, id: &TaskId, unreadable: &[Unreadable]) -> String {
    let status = layout.task(id).status();
    if let Some(bad) = unreadable.iter().find(|u| u.path == status) {
        return format!("missing: its status.json does not count: {}", bad.why);
    }
    if let Some(link) = layout.linked_part(id) {
        return format!(
            "missing: {} is a symbolic link out of the run folder, not followed",
            link.display()
        );
    }
    "missing: the run dir has no result for this task (it never finished, or its status.json is gone)".to_string()
}

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
