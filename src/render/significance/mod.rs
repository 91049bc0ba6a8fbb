//! Whether two runs differ beyond noise, over the tasks both have: without repetitions
//! the 2×2 table, the exact McNemar test and Newcombe's interval; with them (`--repeat`
//! in either run) each task's change in pass rate, a sign-flip permutation test and a
//! paired t interval, the tasks whose change is beyond their own run-to-run variation
//! (Fisher's exact test on their repetitions), and the flaky tasks apart. The verdict is
//! said in words; a test that could not reach α whatever happened says "too few".

use serde::Serialize;

use super::repeats::Rate;
use crate::stats::{
    Interval, PairedTable, fisher_exact, mcnemar_exact, newcombe, paired_t_interval, sign_flip_test,
};
use crate::task::TaskId;

/// What the statistics conclude.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Verdict {
    /// B passes significantly less than A.
    SignificantRegression,
    /// B passes significantly more.
    SignificantImprovement,
    /// The change is within what noise gives.
    NoSignificantChange,
    /// No task's result changed.
    NoChange,
    /// Too few tasks changed (or are shared) for any outcome to reach α.
    TooFewToTell,
}

/// A task whose change is beyond its own run-to-run variation.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct BeyondNoise {
    /// The task.
    pub(crate) id: TaskId,
    /// In A.
    pub(crate) a: Rate,
    /// In B.
    pub(crate) b: Rate,
    /// Fisher's exact p on its repetitions, Holm-adjusted for the number of tasks that
    /// changed.
    pub(crate) p_value: f64,
}

/// The statistics of a comparison.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct Significance {
    /// The conclusion.
    pub(crate) verdict: Verdict,
    /// The level it was tested at.
    pub(crate) alpha: f64,
    /// Tasks in both runs judged in every run (the paired ones).
    pub(crate) tasks: usize,
    /// Tasks in both runs left out: not judged in some run (an infrastructure error,
    /// cancelled, unfinished), which says nothing of the agent.
    pub(crate) left_out: usize,
    /// A's pass rate over them (with repetitions, the mean per-task rate).
    pub(crate) pass_rate_a: f64,
    /// B's.
    pub(crate) pass_rate_b: f64,
    /// B − A.
    pub(crate) change: f64,
    /// Its (1 − α) interval; null when it cannot be computed (with repetitions: fewer
    /// than 3 tasks, or every task changed alike).
    pub(crate) change_ci: Option<Interval>,
    /// `mcnemar_exact` or `sign_flip_permutation`.
    pub(crate) test: &'static str,
    /// The test's two-sided p.
    pub(crate) p_value: f64,
    /// Tasks whose result fell.
    pub(crate) regressed: usize,
    /// Tasks whose result rose.
    pub(crate) fixed: usize,
    /// Without repetitions: the tasks by where they passed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) table: Option<PairedTable>,
    /// With repetitions: tasks that passed in some repetitions and not in others, in
    /// either run (their change alone is not a regression).
    pub(crate) flaky: Vec<TaskId>,
    /// With repetitions: tasks whose change is beyond their own run-to-run variation
    /// (Fisher's exact test, Holm-corrected over the tasks that changed).
    pub(crate) beyond_noise: Vec<BeyondNoise>,
}

/// The statistics of the tasks `paired` both runs have and judged (their runs that passed,
/// failed or timed out), at level `alpha`; `left_out` tasks both runs have were judged in
/// no run of one side (an infrastructure error, cancelled, unfinished), which says
/// nothing of the agent.
pub(crate) fn significance(
    paired: &[(TaskId, Rate, Rate)],
    left_out: usize,
    alpha: f64,
) -> Significance {
    let repeated = paired.iter().any(|(_, a, b)| a.runs > 1 || b.runs > 1);
    let changes: Vec<f64> = paired
        .iter()
        .map(|(_, a, b)| b.pass_rate - a.pass_rate)
        .collect();
    let n = paired.len().max(1) as f64;
    let pass_rate_a = paired.iter().map(|(_, a, _)| a.pass_rate).sum::<f64>() / n;
    let pass_rate_b = paired.iter().map(|(_, _, b)| b.pass_rate).sum::<f64>() / n;
    let regressed = changes.iter().filter(|d| **d < 0.0).count();
    let fixed = changes.iter().filter(|d| **d > 0.0).count();
    let (test, p_value, change_ci, table) = if repeated {
        repeated_test(&changes, alpha)
    } else {
        single_test(paired, alpha)
    };
    let change = pass_rate_b - pass_rate_a;
    let verdict = verdict(paired.is_empty(), regressed + fixed, p_value, change, alpha);
    let beyond_noise = if repeated {
        beyond_noise(paired, alpha)
    } else {
        Vec::new()
    };
    Significance {
        verdict,
        alpha,
        tasks: paired.len(),
        left_out,
        pass_rate_a,
        pass_rate_b,
        change,
        change_ci,
        test,
        p_value,
        regressed,
        fixed,
        table,
        flaky: flaky_tasks(paired, &beyond_noise),
        beyond_noise,
    }
}

/// The test, p, interval and table of one of the two cases.
type Tested = (&'static str, f64, Option<Interval>, Option<PairedTable>);

/// With repetitions: the sign-flip permutation test and the paired t interval.
fn repeated_test(changes: &[f64], alpha: f64) -> Tested {
    let p = sign_flip_test(changes);
    // A change in pass rate lies in [−1, 1] whatever a t interval of few tasks says.
    // Fewer than 3 tasks, or all changed alike, give no interval worth showing.
    let varied = changes.iter().any(|d| *d != changes[0]);
    let ci = paired_t_interval(changes, 1.0 - alpha)
        .filter(|_| changes.len() >= 3 && varied)
        .map(|ci| Interval {
            low: ci.low.max(-1.0),
            high: ci.high.min(1.0),
        });
    ("sign_flip_permutation", p, ci, None)
}

/// Without repetitions: the 2×2 table, the exact McNemar test and Newcombe's interval.
fn single_test(paired: &[(TaskId, Rate, Rate)], alpha: f64) -> Tested {
    let t = table(paired);
    (
        "mcnemar_exact",
        mcnemar_exact(&t),
        newcombe(&t, 1.0 - alpha),
        Some(t),
    )
}

/// The conclusion from whether any task is paired, how many `moved`, p and the change.
fn verdict(no_tasks: bool, moved: usize, p_value: f64, change: f64, alpha: f64) -> Verdict {
    // Either test's smallest p comes when every changed task moved the same way: two
    // of the 2^m sign patterns.
    if no_tasks {
        Verdict::TooFewToTell
    } else if moved == 0 {
        Verdict::NoChange
    } else if !reachable(moved, alpha) {
        Verdict::TooFewToTell
    } else if p_value >= alpha {
        Verdict::NoSignificantChange
    } else if change < 0.0 {
        Verdict::SignificantRegression
    } else if change > 0.0 {
        Verdict::SignificantImprovement
    } else {
        Verdict::NoSignificantChange
    }
}

/// The flaky tasks of either run, but for those whose change is beyond noise.
fn flaky_tasks(paired: &[(TaskId, Rate, Rate)], beyond_noise: &[BeyondNoise]) -> Vec<TaskId> {
    paired
        .iter()
        .filter(|(_, a, b)| flaky(a) || flaky(b))
        .filter(|(id, _, _)| !beyond_noise.iter().any(|t| &t.id == id))
        .map(|(id, _, _)| id.clone())
        .collect()
}

/// True when `moved` changed tasks can give a p below `alpha` at all: either test's
/// smallest p comes when every one moved the same way, two of the 2^m sign patterns.
pub(super) fn reachable(moved: usize, alpha: f64) -> bool {
    2.0 * 0.5f64.powi(moved.min(1000) as i32) < alpha
}

/// The tasks whose change is beyond their own run-to-run variation: Fisher's exact test on
/// each changed task's repetitions, Holm's step-down adjustment over them all (so that
/// many tasks do not list some by chance).
fn beyond_noise(paired: &[(TaskId, Rate, Rate)], alpha: f64) -> Vec<BeyondNoise> {
    let mut tested: Vec<(&TaskId, &Rate, &Rate, f64)> = paired
        .iter()
        .filter(|(_, a, b)| a.pass_rate != b.pass_rate)
        .map(|(id, a, b)| {
            let p = fisher_exact(
                a.passed.into(),
                a.runs.saturating_sub(a.passed).into(),
                b.passed.into(),
                b.runs.saturating_sub(b.passed).into(),
            );
            (id, a, b, p)
        })
        .collect();
    tested.sort_by(|x, y| x.3.total_cmp(&y.3).then_with(|| x.0.cmp(y.0)));
    let m = tested.len();
    let mut adjusted = 0.0f64;
    let mut out = Vec::new();
    for (i, (id, a, b, p)) in tested.into_iter().enumerate() {
        adjusted = adjusted.max(((m - i) as f64 * p).min(1.0));
        if adjusted >= alpha {
            break;
        }
        out.push(BeyondNoise {
            id: id.clone(),
            a: a.clone(),
            b: b.clone(),
            p_value: adjusted,
        });
    }
    out.sort_by(|x, y| x.id.cmp(&y.id));
    out
}

fn flaky(r: &Rate) -> bool {
    r.passed > 0 && r.passed < r.runs
}

fn table(paired: &[(TaskId, Rate, Rate)]) -> PairedTable {
    let mut t = PairedTable::default();
    for (_, a, b) in paired {
        *match (a.passed == a.runs, b.passed == b.runs) {
            (true, true) => &mut t.both,
            (true, false) => &mut t.only_a,
            (false, true) => &mut t.only_b,
            (false, false) => &mut t.neither,
        } += 1;
    }
    t
}

mod words;

pub(crate) use words::points;

#[cfg(test)]
mod tests;
