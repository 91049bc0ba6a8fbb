//! A task's result as the run-level files (`summary.*`, `tasks_status.json`, `report.*`,
//! `junit.xml`) read it: what a runner holds of each task until the end of a run, a
//! small part of a whole record. The task file, inputs, request, warnings, times, each
//! attempt's record and per-round and LLM counts stay in the task's own `status.json`.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

use super::{AttemptStatus, Complete, JudgeOpinion, SessionType, TaskRecord, TaskStatus};
use crate::task::TaskId;
use crate::units::Usage;

/// What the run-level files read of one task's record.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
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
    /// With `--eval both`: the LLM judge's verdict beside the checks'.
    pub(crate) judge: Option<JudgeOpinion>,
    /// The evaluator's score from 0 to 1, where it gives one (OSWorld's).
    #[serde(deserialize_with = "super::checked::score")]
    pub(crate) score: Option<f64>,
    /// The benchmark domain it belongs to (OSWorld's).
    pub(crate) domain: Option<String>,
    /// Attempts so far.
    pub(crate) attempts: u32,
    /// Why each attempt before the latest did not pass, oldest first, but those the
    /// runner's own stop cut short (interrupted, cancelled), which say nothing of the
    /// task: a task that passed in the end was flaky in these.
    pub(crate) earlier_failures: Box<[Box<str>]>,
    /// Wall-clock seconds of the latest attempt.
    #[serde(deserialize_with = "super::checked::seconds")]
    pub(crate) duration_s: f64,
    /// Rounds run.
    pub(crate) rounds: u32,
    /// Steps run.
    pub(crate) steps: u32,
    /// Tokens used.
    pub(crate) usage: Usage,
    /// Cost in USD; absent when unknown.
    #[serde(deserialize_with = "super::checked::cost")]
    pub(crate) cost_usd: Option<f64>,
    /// Tags from the task file.
    pub(crate) tags: Vec<String>,
    /// With `--repeat K`: which repetition this is.
    pub(crate) repeat: Option<u32>,
    /// Experience records and demonstrations its agents were given.
    pub(crate) given: u32,
    /// Experience records it saved.
    pub(crate) saved: u32,
    /// It was to save experience and could not.
    pub(crate) not_saved: bool,
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
            judge: record.judge.clone(),
            score: record.score,
            domain: record.domain.clone(),
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
            given: record
                .experience
                .as_ref()
                .map_or(0, |x| x.given.len() as u32),
            saved: record
                .experience
                .as_ref()
                .map_or(0, |x| x.saved.len() as u32),
            not_saved: record
                .experience
                .as_ref()
                .is_some_and(|x| x.not_saved.is_some()),
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

/// Rows that can be gone through more than once, by id: held in memory, or read back
/// from where a run keeps them (each pass reads them again). Passes may go on side by
/// side, on several threads.
pub(crate) trait RowSource: Sync {
    /// The rows, by id.
    fn rows(&self) -> Box<dyn Iterator<Item = Cow<'_, TaskRow>> + '_>;
}

impl RowSource for Vec<TaskRow> {
    fn rows(&self) -> Box<dyn Iterator<Item = Cow<'_, TaskRow>> + '_> {
        Box::new(self.iter().map(Cow::Borrowed))
    }
}
