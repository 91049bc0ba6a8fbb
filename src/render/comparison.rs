//! The comparison of two runs, task by task: each task has a pass rate (1 of 1, or k of
//! K with `--repeat`); a drop is a regression, a rise a fix; tasks only in B are new,
//! only in A missing. Totals show the pass rate, cost, tokens and task time of both, and
//! each run's judge agreement (`--eval both`); the statistics of the tasks both have
//! (`render::significance`) say whether the change is beyond noise, first, in words.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;

use super::agreement::{Agreement, AgreementCount};
use super::repeats::{Rate, TaskRate, has_repeats, rates};
use super::significance::{Significance, Verdict, significance};
use crate::record::TaskRow;
use crate::task::TaskId;

/// One run, in totals.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct Side {
    /// The run dir.
    pub(crate) dir: String,
    /// Tasks (not repetitions).
    pub(crate) tasks: usize,
    /// Mean per-task pass rate.
    pub(crate) pass_rate: f64,
    /// Total cost; null when unknown.
    pub(crate) cost_usd: Option<f64>,
    /// Total tokens.
    pub(crate) tokens: u64,
    /// Sum of task durations.
    pub(crate) task_seconds: f64,
    /// True when the run has repeats.
    pub(crate) repeats: bool,
    /// The judge's agreement with the checks, when the run had `--eval both`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) judge_agreement: Option<Agreement>,
    /// The mean score of the tasks an evaluator scored (OSWorld's), when some were.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) mean_score: Option<f64>,
    /// Tasks this machine could not run (counted apart: not in the pass rate).
    #[serde(skip_serializing_if = "is_zero")]
    pub(crate) unsupported: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// One task that changed.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct Change {
    /// The task.
    pub(crate) id: TaskId,
    /// In A.
    pub(crate) a: Option<Rate>,
    /// In B.
    pub(crate) b: Option<Rate>,
    /// Why it did not pass in B (the last repetition that did not).
    pub(crate) reason: Option<String>,
}

/// When `compare` exits 1 (`--fail-on`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum FailOn {
    /// Any task whose pass rate dropped.
    #[default]
    Any,
    /// A regression the statistics call significant at `--alpha`.
    Significant,
    /// Never (the comparison is for reading).
    Never,
}

/// A `--fail-on` that is none of the rules.
#[derive(Debug, thiserror::Error)]
#[error("unknown `{0}` (use any, significant or never)")]
pub(crate) struct UnknownFailOn(String);

impl std::str::FromStr for FailOn {
    type Err = UnknownFailOn;

    fn from_str(s: &str) -> Result<Self, UnknownFailOn> {
        match s {
            "any" => Ok(Self::Any),
            "significant" => Ok(Self::Significant),
            "never" => Ok(Self::Never),
            other => Err(UnknownFailOn(other.to_string())),
        }
    }
}

/// The comparison of two runs.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct Comparison {
    /// The statistics' conclusion in one sentence.
    pub(crate) verdict: String,
    /// The statistics of the tasks both runs have.
    pub(crate) statistics: Significance,
    /// The baseline.
    pub(crate) a: Side,
    /// The candidate.
    pub(crate) b: Side,
    /// Tasks whose pass rate dropped.
    pub(crate) regressions: Vec<Change>,
    /// Tasks whose pass rate rose.
    pub(crate) fixes: Vec<Change>,
    /// Tasks only in B.
    pub(crate) new: Vec<Change>,
    /// Tasks only in A.
    pub(crate) missing: Vec<Change>,
    /// Tasks in both with the same pass rate.
    pub(crate) unchanged: usize,
    /// True when tasks missing from B do not fail the gate (`--allow-missing`).
    pub(crate) allow_missing: bool,
    /// What the page's pictures draw (not in the JSON).
    #[serde(skip)]
    pub(crate) pictures: Pictures,
}

/// What the comparison page draws.
#[derive(Clone, Debug, Default)]
pub(crate) struct Pictures {
    /// Each run's counts.
    pub(crate) a: crate::render::html::ChartCounts,
    pub(crate) b: crate::render::html::ChartCounts,
    /// The runs beside B (name, pass rate), oldest first.
    pub(crate) series: Vec<(String, f64)>,
}

impl Comparison {
    /// True when some task regressed.
    pub(crate) fn regressed(&self) -> bool {
        !self.regressions.is_empty()
    }

    /// True when the comparison fails under `on`: a regression as `on` says, or (unless
    /// `--allow-missing`) a task of A that B does not have, for a B that lost tasks (an
    /// unmerged shard, a run that stopped) is no evidence that they still pass.
    pub(crate) fn fails(&self, on: FailOn) -> bool {
        let missing = !self.allow_missing && !self.missing.is_empty();
        match on {
            FailOn::Any => self.regressed() || missing,
            FailOn::Significant => {
                self.statistics.verdict == Verdict::SignificantRegression || missing
            }
            FailOn::Never => false,
        }
    }

    /// The line said before anything else when B lacks tasks of A: how many, how many of
    /// them passed in A, and what the gate does with them.
    pub(crate) fn missing_line(&self) -> Option<String> {
        if self.missing.is_empty() {
            return None;
        }
        let n = self.missing.len();
        let passed = self
            .missing
            .iter()
            .filter(|c| c.a.as_ref().is_some_and(|r| r.passed > 0))
            .count();
        let tasks = if n == 1 { "task" } else { "tasks" };
        let gate = if self.allow_missing {
            "accepted with --allow-missing"
        } else {
            "the gate fails on them (--allow-missing accepts a partial B)"
        };
        Some(format!(
            "{n} {tasks} of A missing from B ({passed} passed in A): {gate}."
        ))
    }
}

/// Compares run `a` (the baseline, in the folder `a_dir`) with run `b`, task by task.
pub(crate) fn comparison(
    a_dir: &Path,
    a: &[&TaskRow],
    b_dir: &Path,
    b: &[&TaskRow],
    alpha: f64,
) -> Comparison {
    let (ra, sa) = side(a_dir, a);
    let (rb, sb) = side(b_dir, b);
    let ma: BTreeMap<TaskId, TaskRate> = ra.into_iter().map(|r| (r.id.clone(), r)).collect();
    let mb: BTreeMap<TaskId, TaskRate> = rb.into_iter().map(|r| (r.id.clone(), r)).collect();
    let (paired, left_out) = paired(&ma, &mb, &judged(a), &judged(b));
    let mut c = Comparison {
        verdict: String::new(),
        statistics: significance(&paired, left_out, alpha),
        a: sa,
        b: sb,
        regressions: vec![],
        fixes: vec![],
        new: new_tasks(&ma, &mb),
        missing: vec![],
        unchanged: 0,
        allow_missing: false,
        pictures: Pictures::default(),
    };
    for r in a {
        c.pictures.a.add(r);
    }
    for r in b {
        c.pictures.b.add(r);
    }
    for (id, x) in &ma {
        match mb.get(id) {
            None => c.missing.push(Change {
                id: id.clone(),
                a: Some(rate(x)),
                b: None,
                reason: None,
            }),
            Some(y) => shared_change(&mut c, id, x, y),
        }
    }
    let shared_only = paired.len() + left_out != c.a.tasks || paired.len() + left_out != c.b.tasks;
    c.verdict = c.statistics.sentence(shared_only);
    c
}

/// The rates of a run's tasks over the runs that were judged (passed, failed, timeout):
/// a repetition in error leaves the task's other repetitions in.
fn judged(rows: &[&TaskRow]) -> BTreeMap<TaskId, TaskRate> {
    rates(rows.iter().copied().filter(|r| r.status.is_done()))
        .into_iter()
        .map(|r| (r.id.clone(), r))
        .collect()
}

/// The statistics' pairs: the tasks both runs have and judged, with the number of tasks
/// both have that one side judged in no run (left out).
fn paired(
    ma: &BTreeMap<TaskId, TaskRate>,
    mb: &BTreeMap<TaskId, TaskRate>,
    judged_a: &BTreeMap<TaskId, TaskRate>,
    judged_b: &BTreeMap<TaskId, TaskRate>,
) -> (Vec<(TaskId, Rate, Rate)>, usize) {
    let mut paired = Vec::new();
    let mut left_out = 0;
    for id in ma.keys().filter(|id| mb.contains_key(*id)) {
        match (judged_a.get(id), judged_b.get(id)) {
            (Some(ja), Some(jb)) => paired.push((id.clone(), rate(ja), rate(jb))),
            _ => left_out += 1,
        }
    }
    (paired, left_out)
}

/// A task both runs have, as a regression, a fix or one more unchanged.
fn shared_change(c: &mut Comparison, id: &TaskId, x: &TaskRate, y: &TaskRate) {
    let change = Change {
        id: id.clone(),
        a: Some(rate(x)),
        b: Some(rate(y)),
        reason: y.reason.clone(),
    };
    if y.pass_rate < x.pass_rate {
        c.regressions.push(change);
    } else if y.pass_rate > x.pass_rate {
        c.fixes.push(Change {
            reason: None,
            ..change
        });
    } else {
        c.unchanged += 1;
    }
}

/// The tasks only in B, with why each did not pass.
fn new_tasks(ma: &BTreeMap<TaskId, TaskRate>, mb: &BTreeMap<TaskId, TaskRate>) -> Vec<Change> {
    mb.iter()
        .filter(|(id, _)| !ma.contains_key(*id))
        .map(|(id, y)| Change {
            id: id.clone(),
            a: None,
            b: Some(rate(y)),
            reason: y.reason.clone(),
        })
        .collect()
}

/// A task's pass rate, without the rest of its rate.
fn rate(r: &TaskRate) -> Rate {
    Rate {
        passed: r.passed,
        runs: r.runs,
        pass_rate: r.pass_rate,
    }
}

fn side(dir: &Path, records: &[&TaskRow]) -> (Vec<TaskRate>, Side) {
    let unsupported = records
        .iter()
        .filter(|r| r.status == crate::record::TaskStatus::Unsupported)
        .count();
    let rates = rates(
        records
            .iter()
            .copied()
            .filter(|r| r.status != crate::record::TaskStatus::Unsupported),
    );
    let scores: Vec<f64> = records.iter().filter_map(|r| r.score).collect();
    let mean_score = (!scores.is_empty())
        .then(|| (scores.iter().sum::<f64>() / scores.len() as f64 * 1000.0).round() / 1000.0);
    let n = rates.len().max(1) as f64;
    let side = Side {
        dir: dir.display().to_string(),
        tasks: rates.len(),
        pass_rate: rates.iter().map(|r| r.pass_rate).sum::<f64>() / n,
        cost_usd: rates.iter().try_fold(0.0, |s, r| r.cost_usd.map(|c| s + c)),
        tokens: rates.iter().map(|r| r.tokens).sum(),
        task_seconds: (rates.iter().map(|r| r.duration_s).sum::<f64>() * 1000.0).round() / 1000.0,
        repeats: has_repeats(records.iter().copied()),
        judge_agreement: {
            let mut count = AgreementCount::default();
            records.iter().for_each(|r| count.add(r));
            count.finish()
        },
        mean_score,
        unsupported,
    };
    (rates, side)
}
