//! A task's result as the run-level files (`summary.*`, `tasks_status.json`, `report.*`,
//! `junit.xml`) read it: what a runner holds of each task until the end of a run, a
//! third of a whole record's size. The task file, inputs, request, warnings, times and
//! per-round and LLM counts stay in the task's own `status.json`.

use super::{AttemptRecord, Complete, SessionType, TaskRecord, TaskStatus};
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
    /// Every attempt, oldest first.
    pub(crate) attempts: Vec<AttemptRecord>,
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
            attempts: record.attempts.clone(),
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
        self.attempts.len() as u32
    }
}
