//! The run-level files built from the per-task records: `summary.json`, `summary.csv`
//! and UFO's `tasks_status.json`. They are derived data: rebuilt from the records, so
//! they always agree with the tasks' own `status.json` files.

use std::borrow::Borrow;

use serde::Serialize;

use super::totals::Totals;
use crate::record::{RowSource, TaskRow, TaskStatus};

/// One row of `summary.csv` (design.md §5 column order).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub(crate) struct SummaryRow {
    /// Task id.
    pub(crate) id: String,
    /// Session type.
    pub(crate) session: String,
    /// Final status.
    pub(crate) status: TaskStatus,
    /// Evaluation verdict, when evaluated.
    pub(crate) complete: Option<String>,
    /// Attempts made.
    pub(crate) attempts: u32,
    /// Rounds run.
    pub(crate) rounds: u32,
    /// Steps run.
    pub(crate) steps: u32,
    /// Seconds of the last attempt.
    pub(crate) duration_s: f64,
    /// Prompt tokens.
    pub(crate) prompt_tokens: u64,
    /// Completion tokens.
    pub(crate) completion_tokens: u64,
    /// Cost in USD; empty when unknown.
    pub(crate) cost_usd: Option<f64>,
    /// Why it did not pass.
    pub(crate) error: Option<String>,
    /// The evaluator's score from 0 to 1, where it gives one (OSWorld's).
    pub(crate) score: Option<f64>,
}

impl SummaryRow {
    /// The row of one record.
    pub(crate) fn of(r: &TaskRow) -> Self {
        Self {
            id: r.id.to_string(),
            session: r.session.as_str().to_string(),
            status: r.status,
            complete: r.complete.map(|c| c.to_string()),
            attempts: r.attempt_count(),
            rounds: r.rounds,
            steps: r.steps,
            duration_s: r.duration_s,
            prompt_tokens: r.usage.prompt_tokens,
            completion_tokens: r.usage.completion_tokens,
            cost_usd: r.cost_usd,
            error: r.error.clone(),
            score: r.score,
        }
    }
}

/// `summary.json`: totals, then one row per task.
pub(crate) fn summary_json<'a>(
    records: &'a dyn RowSource,
    overview: &'a super::overview::Overview,
) -> SummaryJson<'a> {
    let repeats = overview.rates.as_deref().map(|tasks| Repeats {
        totals: super::repeats::repeat_totals(tasks),
        tasks,
    });
    SummaryJson {
        totals: overview.totals.clone(),
        tasks: Rows(records),
        repeats,
        judge_agreement: overview.agreement.as_ref(),
        experience: overview.experience.as_ref(),
        domains: overview.domains.as_deref(),
    }
}

/// `summary.json`, serialized as it is written: a row is made for each task as the
/// file is written, not all of them first (at a million tasks, a tree of them all
/// would be the runner's largest allocation).
#[derive(Serialize)]
pub(crate) struct SummaryJson<'a> {
    totals: Totals,
    tasks: Rows<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    repeats: Option<Repeats<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    judge_agreement: Option<&'a super::agreement::Agreement>,
    #[serde(skip_serializing_if = "Option::is_none")]
    experience: Option<&'a super::experience::ExperienceCount>,
    /// An OSWorld run's counts by domain.
    #[serde(skip_serializing_if = "Option::is_none")]
    domains: Option<&'a [super::domains::DomainCount]>,
}

/// The `tasks` of `summary.json`: a row per record, made while serializing.
struct Rows<'a>(&'a dyn RowSource);

impl Serialize for Rows<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.0.rows().map(|r| SummaryRow::of(&r)))
    }
}

/// The `repeats` of `summary.json`, for `--repeat` runs.
#[derive(Serialize)]
struct Repeats<'a> {
    totals: super::repeats::RepeatTotals,
    tasks: &'a [super::repeats::TaskRate],
}

/// Writes `summary.csv` to `out`, a row at a time (with a header even when there are no
/// tasks).
pub(crate) fn write_summary_csv(
    out: &mut dyn std::io::Write,
    records: impl IntoIterator<Item = impl Borrow<TaskRow>>,
) -> Result<(), csv::Error> {
    let mut records = records.into_iter().peekable();
    if records.peek().is_none() {
        out.write_all(b"id,session,status,complete,attempts,rounds,steps,duration_s,prompt_tokens,completion_tokens,cost_usd,error,score\n")?;
        return Ok(());
    }
    let mut writer = csv::Writer::from_writer(out);
    for r in records {
        let mut row = SummaryRow::of(r.borrow());
        // Control codes are shown, not obeyed, by a terminal that `cat`s the file.
        if let Some(error) = &mut row.error
            && let std::borrow::Cow::Owned(shown) = crate::text::printable(error)
        {
            *error = shown;
        }
        writer.serialize(row)?;
    }
    writer.flush()?;
    Ok(())
}

/// UFO's `tasks_status.json`: `{task_id: true}` once a task is done; written a task
/// at a time.
pub(crate) fn tasks_status(records: &dyn RowSource) -> TasksStatus<'_> {
    TasksStatus(records)
}

/// `tasks_status.json` as it is serialized (see [`tasks_status`]).
pub(crate) struct TasksStatus<'a>(&'a dyn RowSource);

impl Serialize for TasksStatus<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(
            self.0
                .rows()
                .map(|r| (r.id.as_str().to_owned(), r.status.is_done())),
        )
    }
}
