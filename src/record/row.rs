//! A task's result as the run-level files (`summary.*`, `tasks_status.json`, `report.*`,
//! `junit.xml`) read it: what a runner holds of each task until the end of a run, a
//! small part of a whole record. The task file, inputs, request, warnings, times, each
//! attempt's record and per-round and LLM counts stay in the task's own `status.json`.

use std::cmp::Ordering;
use std::collections::BTreeSet;

use super::{AttemptStatus, Complete, SessionType, TaskRecord, TaskStatus};
use crate::task::TaskId;
use crate::units::Usage;

/// What the run-level files read of one task's record.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct TaskRow {
    /// Task id.
    pub(crate) id: TaskId,
    /// The session type that ran it.
    pub(crate) session: SessionType,
    /// Where the task stands.
    pub(crate) status: TaskStatus,
    /// The evaluation's verdict, when there was an evaluation.
    pub(crate) complete: Option<Complete>,
    /// Why it did not pass, in one line.
    pub(crate) error: Option<String>,
    /// Attempts so far.
    pub(crate) attempts: u32,
    /// Why each attempt before the latest did not pass, oldest first, but those the
    /// runner's own stop cut short (interrupted, cancelled), which say nothing of the
    /// task: a task that passed in the end was flaky in these.
    pub(crate) earlier_failures: Box<[Box<str>]>,
    /// Wall-clock seconds of the latest attempt.
    pub(crate) duration_s: f64,
    /// Rounds run.
    pub(crate) rounds: u32,
    /// Steps run.
    pub(crate) steps: u32,
    /// Tokens used.
    pub(crate) usage: Usage,
    /// Cost in USD; absent when unknown.
    pub(crate) cost_usd: Option<f64>,
    /// Tags from the task file.
    pub(crate) tags: Vec<String>,
    /// With `--repeat K`: which repetition this is.
    pub(crate) repeat: Option<u32>,
}

impl TaskRow {
    /// The row of `record`.
    pub(crate) fn of(record: &TaskRecord) -> Self {
        Self {
            id: record.id.clone(),
            session: record.session,
            status: record.status,
            complete: record.complete,
            error: record.error.clone(),
            attempts: record.attempt_count(),
            earlier_failures: record.attempts[..record.attempts.len().saturating_sub(1)]
                .iter()
                .filter(|a| {
                    !matches!(
                        a.status,
                        AttemptStatus::Interrupted | AttemptStatus::Cancelled
                    )
                })
                .map(|a| match &a.error {
                    Some(e) => e.as_str().into(),
                    None => a.status.to_string().into(),
                })
                .collect(),
            duration_s: record.duration_s,
            rounds: record.rounds,
            steps: record.steps,
            usage: record.usage,
            cost_usd: record.cost_usd,
            tags: record.tags.clone(),
            repeat: record.repeat,
        }
    }

    /// The task this is a repetition of (its own id when not repeated).
    pub(crate) fn base_id(&self) -> TaskId {
        self.id.base(self.repeat)
    }

    /// The attempts so far, counted.
    pub(crate) fn attempt_count(&self) -> u32 {
        self.attempts
    }
}

/// Rows by task id, each kept once (its id is the row's own, not copied into a key).
#[derive(Debug, Default)]
pub(crate) struct Rows(BTreeSet<ById>);

impl Rows {
    /// Keeps `row`, in place of the row of its task held before.
    pub(crate) fn insert(&mut self, row: TaskRow) {
        self.0.replace(ById(row));
    }

    /// The rows, by id.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &TaskRow> {
        self.0.iter().map(|r| &r.0)
    }
}

/// A row ordered and compared by its id alone.
#[derive(Debug)]
struct ById(TaskRow);

impl PartialEq for ById {
    fn eq(&self, other: &Self) -> bool {
        self.0.id == other.0.id
    }
}

impl Eq for ById {}

impl PartialOrd for ById {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for ById {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.id.cmp(&other.0.id)
    }
}
