//! A task's result as the run-level files (`summary.*`, `tasks_status.json`, `report.*`,
//! `junit.xml`) read it: what a runner holds of each task until the end of a run, a
//! small part of a whole record. The task file, inputs, request, warnings, times, each
//! attempt's record and per-round and LLM counts stay in the task's own `status.json`.

use std::collections::BTreeMap;
use std::sync::Arc;

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

/// Rows by task id. A run's rows have their places in its selection (every task id of
/// the batch, sorted), so a row costs a pointer and itself: no key, no tree node.
#[derive(Debug, Default)]
pub(crate) struct Rows {
    /// The ids rows are placed by, sorted.
    ids: Arc<[TaskId]>,
    /// The row of each of `ids`, once there is one.
    placed: Vec<Option<Box<TaskRow>>>,
    /// Rows whose id is not among `ids` (none in a run; kept all the same).
    others: BTreeMap<TaskId, TaskRow>,
}

impl Rows {
    /// Rows placed by `ids`, which must be sorted (the rows already held stay).
    pub(crate) fn place_by(&mut self, ids: Arc<[TaskId]>) {
        debug_assert!(ids.is_sorted(), "rows are placed by sorted ids");
        let held = std::mem::replace(
            self,
            Rows {
                placed: vec![None; ids.len()],
                ids,
                others: BTreeMap::new(),
            },
        );
        for row in held.into_rows() {
            self.insert(row);
        }
    }

    /// The rows, taken.
    fn into_rows(self) -> impl Iterator<Item = TaskRow> {
        let placed = self.placed.into_iter().flatten().map(|row| *row);
        placed.chain(self.others.into_values())
    }

    /// Keeps `row`, in place of the row of its task held before.
    pub(crate) fn insert(&mut self, row: TaskRow) {
        match self.ids.binary_search(&row.id) {
            Ok(i) => self.placed[i] = Some(Box::new(row)),
            Err(_) => {
                self.others.insert(row.id.clone(), row);
            }
        }
    }

    /// The rows, by id.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &TaskRow> {
        let mut placed = self.placed.iter().flatten().map(|r| &**r).peekable();
        let mut others = self.others.values().peekable();
        std::iter::from_fn(move || match (placed.peek(), others.peek()) {
            (Some(a), Some(b)) if b.id < a.id => others.next(),
            (Some(_), _) => placed.next(),
            (None, _) => others.next(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{SessionType, ShapeName};

    fn row(id: &str, steps: u32) -> TaskRow {
        let mut r = TaskRecord::new(
            TaskId::parse(id).unwrap(),
            String::new(),
            String::new(),
            ShapeName::RecordedPlan,
            SessionType::FollowerSession,
            "r".to_string(),
        );
        r.steps = steps;
        TaskRow::of(&r)
    }

    #[test]
    fn rows_come_out_by_id_once_each_whether_placed_or_not() {
        let mut rows = Rows::default();
        rows.insert(row("early", 1));
        let ids: Vec<TaskId> = ["b", "d", "f"].map(|i| TaskId::parse(i).unwrap()).into();
        rows.place_by(ids.into());
        for (id, steps) in [("f", 1), ("a", 1), ("d", 1), ("g", 1), ("d", 2), ("c", 1)] {
            rows.insert(row(id, steps));
        }
        let out: Vec<(&str, u32)> = rows.iter().map(|r| (r.id.as_str(), r.steps)).collect();
        assert_eq!(
            out,
            [
                ("a", 1),
                ("c", 1),
                ("d", 2),
                ("early", 1),
                ("f", 1),
                ("g", 1)
            ]
        );
        assert!(rows.others.len() == 4 && rows.placed[0].is_none());
    }
}
