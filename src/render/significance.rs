//! Whether two runs differ beyond noise, over the tasks both have: without repetitions
//! the 2×2 table, the exact McNemar test and Newcombe's interval; with them (`--repeat`
//! in either run) each task's change in pass rate, a sign-flip permutation test and a
//! paired t interval, the tasks whose change is beyond their own run-to-run variation
//! (Fisher's exact test on their repetitions), and the flaky tasks apart. The verdict is
//! said in words; a test that could not reach α whatever happened says "too few".

use serde::Serialize;

use super::comparison::Rate;
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
    /// Fisher's exact p on its repetitions.
    pub(crate) p_value: f64,
}

/// The statistics of a comparison.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct Significance {
    /// The conclusion.
    pub(crate) verdict: Verdict,
    /// The level it was tested at.
    pub(crate) alpha: f64,
    /// Tasks in both runs (the paired ones).
    pub(crate) tasks: usize,
    /// A's pass rate over them (with repetitions, the mean per-task rate).
    pub(crate) pass_rate_a: f64,
    /// B's.
    pub(crate) pass_rate_b: f64,
    /// B − A.
    pub(crate) change: f64,
    /// Its 95% interval; null when it cannot be computed (fewer than 2 tasks with
    /// repetitions).
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
    /// With repetitions: tasks whose change is beyond their own run-to-run variation.
    pub(crate) beyond_noise: Vec<BeyondNoise>,
}

/// The statistics of the tasks `paired` both runs have, at level `alpha`.
pub(crate) fn significance(paired: &[(TaskId, Rate, Rate)], alpha: f64) -> Significance {
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
        let p = sign_flip_test(&changes);
        // A change in pass rate lies in [−1, 1] whatever a t interval of few tasks says.
        let ci = paired_t_interval(&changes).map(|ci| Interval {
            low: ci.low.max(-1.0),
            high: ci.high.min(1.0),
        });
        ("sign_flip_permutation", p, ci, None)
    } else {
        let t = table(paired);
        ("mcnemar_exact", mcnemar_exact(&t), newcombe(&t), Some(t))
    };
    let change = pass_rate_b - pass_rate_a;
    // Either test's smallest p comes when every changed task moved the same way: two
    // of the 2^m sign patterns.
    let moved = (regressed + fixed) as i32;
    let smallest_p = 2.0 * 0.5f64.powi(moved.min(60));
    let verdict = if paired.is_empty() {
        Verdict::TooFewToTell
    } else if moved == 0 {
        Verdict::NoChange
    } else if smallest_p > alpha {
        Verdict::TooFewToTell
    } else if p_value >= alpha {
        Verdict::NoSignificantChange
    } else if change < 0.0 {
        Verdict::SignificantRegression
    } else if change > 0.0 {
        Verdict::SignificantImprovement
    } else {
        Verdict::NoSignificantChange
    };
    let flaky = paired
        .iter()
        .filter(|(_, a, b)| flaky(a) || flaky(b))
        .map(|(id, _, _)| id.clone())
        .collect();
    let beyond_noise = paired
        .iter()
        .filter(|(_, a, b)| repeated && (a.runs > 1 || b.runs > 1) && a.pass_rate != b.pass_rate)
        .filter_map(|(id, a, b)| {
            let p = fisher_exact(
                a.passed.into(),
                (a.runs - a.passed).into(),
                b.passed.into(),
                (b.runs - b.passed).into(),
            );
            (p < alpha).then(|| BeyondNoise {
                id: id.clone(),
                a: a.clone(),
                b: b.clone(),
                p_value: p,
            })
        })
        .collect();
    Significance {
        verdict,
        alpha,
        tasks: paired.len(),
        pass_rate_a,
        pass_rate_b,
        change,
        change_ci,
        test,
        p_value,
        regressed,
        fixed,
        table,
        flaky,
        beyond_noise,
    }
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

impl Significance {
    /// How the p and the interval were found, in one sentence.
    pub(crate) fn method(&self) -> String {
        match &self.table {
            Some(t) => format!(
                "Exact McNemar test on the {} that changed: p = {:.4}; the change's 95% interval is Newcombe's",
                crate::text::plural(t.discordant() as usize, "task"),
                self.p_value
            ),
            None => format!(
                "Per-task pass rates over repetitions: a sign-flip permutation test on the {} both runs have: p = {:.4}; the change's 95% interval is a paired t interval",
                crate::text::plural(self.tasks, "task"),
                self.p_value
            ),
        }
    }

    /// The verdict in one sentence: `pass rate 61.0% → 54.0% (−7.0 points, 95% CI −12.1
    /// to −1.9), 9 tasks regressed, 2 fixed; McNemar p = 0.03: a significant regression
    /// at α = 0.05`. `shared_only` says the rates are over the tasks both runs have.
    pub(crate) fn sentence(&self, shared_only: bool) -> String {
        let repeated = self.table.is_none();
        let mut s = String::new();
        if shared_only {
            s.push_str(&format!(
                "on the {} both runs have: ",
                crate::text::plural(self.tasks, "task")
            ));
        }
        let ci = self
            .change_ci
            .map(|ci| {
                format!(
                    ", 95% CI {} to {}",
                    signed(ci.low * 100.0),
                    signed(ci.high * 100.0)
                )
            })
            .unwrap_or_default();
        s.push_str(&format!(
            "{}pass rate {:.1}% → {:.1}% ({} points{ci}), ",
            if repeated { "mean per-task " } else { "" },
            self.pass_rate_a * 100.0,
            self.pass_rate_b * 100.0,
            signed(self.change * 100.0),
        ));
        let (fell, rose) = if repeated {
            ("fell", "rose")
        } else {
            ("regressed", "fixed")
        };
        s.push_str(&format!(
            "{} {fell}, {} {rose}",
            crate::text::plural(self.regressed, "task"),
            self.fixed
        ));
        if !self.flaky.is_empty() {
            s.push_str(&format!(
                " ({} flaky, listed apart)",
                crate::text::plural(self.flaky.len(), "task")
            ));
        }
        let alpha = format!("α = {}", shown_alpha(self.alpha));
        let test = if repeated {
            "sign-flip permutation"
        } else {
            "McNemar"
        };
        let p = p_text(self.p_value);
        let conclusion = match self.verdict {
            Verdict::SignificantRegression => {
                format!("; {test} {p}: a significant regression at {alpha}")
            }
            Verdict::SignificantImprovement => {
                format!("; {test} {p}: a significant improvement at {alpha}")
            }
            Verdict::NoSignificantChange => {
                format!("; {test} {p}: no significant change at {alpha}")
            }
            Verdict::NoChange => "; no task's result changed".to_string(),
            Verdict::TooFewToTell if self.tasks == 0 => {
                "; no task is in both runs, so there is nothing to tell".to_string()
            }
            Verdict::TooFewToTell => format!(
                "; too few tasks changed to tell a change from noise at {alpha} (at least {} must change)",
                needed(self.alpha)
            ),
        };
        s.push_str(&conclusion);
        s
    }
}

/// The fewest changed tasks with which the tests can reach `alpha`.
fn needed(alpha: f64) -> u32 {
    (1..=60)
        .find(|m| 2.0 * 0.5f64.powi(*m) <= alpha)
        .unwrap_or(60) as u32
}

/// `+7.0` / `−7.0` (a true minus sign); `0.0` without a sign.
fn signed(x: f64) -> String {
    let text = format!("{:.1}", x.abs());
    if text == "0.0" {
        return text;
    }
    if x < 0.0 {
        format!("−{text}")
    } else {
        format!("+{text}")
    }
}

/// `p = 0.03`, `p = 0.004`, `p < 0.001`, `p = 1`.
fn p_text(p: f64) -> String {
    if p < 0.001 {
        "p < 0.001".to_string()
    } else if p >= 0.9995 {
        "p = 1".to_string()
    } else if p < 0.01 {
        format!("p = {p:.3}")
    } else {
        format!("p = {p:.2}")
    }
}

/// α as given: `0.05`, `0.1`, `0.001`.
fn shown_alpha(alpha: f64) -> String {
    let text = format!("{alpha:.6}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}
