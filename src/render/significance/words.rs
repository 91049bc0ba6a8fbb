//! The statistics of a comparison said in words: the verdict's sentence, how it was
//! found, a change in points and a p on its side of α, as every report says them.

use super::{Significance, Verdict, reachable};

impl Significance {
    /// How the p and the interval were found, in one sentence.
    pub(crate) fn method(&self) -> String {
        if self.tasks == 0 {
            return "No task both runs have was judged in both: nothing to test".to_string();
        }
        let interval = |name: &str| match self.change_ci {
            Some(ci) => format!(
                "; the change's {} interval ({name}) is {} to {} points",
                level(self.alpha),
                signed(ci.low * 100.0),
                signed(ci.high * 100.0)
            ),
            None => String::new(),
        };
        match &self.table {
            Some(t) => format!(
                "Exact McNemar test on the {} that changed: {}{}",
                crate::text::plural(t.discordant() as usize, "task"),
                p_text(self.p_value, self.alpha),
                interval("Newcombe's")
            ),
            None => format!(
                "Per-task pass rates over repetitions: a sign-flip permutation test on the {} both runs have: {}{}",
                crate::text::plural(self.tasks, "task"),
                p_text(self.p_value, self.alpha),
                interval("a paired t interval")
            ),
        }
    }

    /// The verdict in one sentence: `Pass rate 61.0% → 54.0% (−7.0 points, 95% CI −12.1
    /// to −1.9), 9 tasks regressed, 2 fixed; McNemar p = 0.03: a significant regression
    /// at α = 0.05.` `shared_only` says the rates are over the tasks both runs have.
    pub(crate) fn sentence(&self, shared_only: bool) -> String {
        let left_out = self.left_out_text();
        if self.tasks == 0 {
            return format!(
                "No task both runs have was judged in both{left_out}, so there is nothing to tell."
            );
        }
        let mut s = String::new();
        if shared_only || self.left_out > 0 {
            s.push_str(&format!(
                "On the {} both runs have and judged{left_out}: ",
                crate::text::plural(self.tasks, "task")
            ));
        }
        let first = s.is_empty();
        s.push_str(&self.rates_text(first));
        s.push_str(&self.moved_text());
        s.push_str(&self.conclusion());
        s.push('.');
        s
    }

    /// The sentence's note of the tasks left out, when there are any.
    fn left_out_text(&self) -> String {
        match self.left_out {
            0 => String::new(),
            n => format!(
                " ({} left out: an infrastructure error, cancelled or unfinished in a run)",
                crate::text::plural(n, "task")
            ),
        }
    }

    /// The sentence's pass rates, the change and its interval; `first` capitalises it.
    fn rates_text(&self, first: bool) -> String {
        // A too-small sample's interval rests on approximations that do not hold.
        let ci = self
            .change_ci
            .filter(|_| self.verdict != Verdict::TooFewToTell)
            .map(|ci| {
                format!(
                    ", {} CI {} to {}",
                    level(self.alpha),
                    signed(ci.low * 100.0),
                    signed(ci.high * 100.0)
                )
            })
            .unwrap_or_default();
        format!(
            "{}ass rate {:.1}% → {:.1}% ({} points{ci}), ",
            match (self.table.is_none(), first) {
                (true, true) => "Mean per-task p",
                (true, false) => "mean per-task p",
                (false, true) => "P",
                (false, false) => "p",
            },
            self.pass_rate_a * 100.0,
            self.pass_rate_b * 100.0,
            signed(self.change * 100.0),
        )
    }

    /// The sentence's count of the tasks that fell and rose, and of the flaky ones.
    fn moved_text(&self) -> String {
        let (fell, rose) = if self.table.is_none() {
            ("fell", "rose")
        } else {
            ("regressed", "fixed")
        };
        let mut s = format!(
            "{} {fell}, {} {rose}",
            crate::text::plural(self.regressed, "task"),
            self.fixed
        );
        if !self.flaky.is_empty() {
            s.push_str(&format!(
                " ({} flaky)",
                crate::text::plural(self.flaky.len(), "task")
            ));
        }
        s
    }

    /// The sentence's conclusion: the test, its p and the verdict at α.
    fn conclusion(&self) -> String {
        let alpha = format!("α = {}", self.alpha);
        let test = if self.table.is_none() {
            "sign-flip permutation"
        } else {
            "McNemar"
        };
        let p = p_text(self.p_value, self.alpha);
        match self.verdict {
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
            Verdict::TooFewToTell => format!(
                "; too few tasks changed to tell a change from noise at {alpha} (at least {} must change)",
                needed(self.alpha)
            ),
        }
    }
}

/// The interval's level for `alpha`: `95%` at 0.05, `99%` at 0.01.
fn level(alpha: f64) -> String {
    format!("{}%", ((1.0 - alpha) * 100.0 * 1e6).round() / 1e6)
}

/// The fewest changed tasks with which the tests can reach `alpha`.
fn needed(alpha: f64) -> usize {
    (1..1000).find(|m| reachable(*m, alpha)).unwrap_or(1000)
}

/// `+7.0` / `−7.0` (a true minus sign); `0.0` without a sign.
/// A change of pass rate, `b − a` as a fraction, in percentage points as every report
/// says one: `−12.5 points`.
pub(crate) fn points(change: f64) -> String {
    format!("{} points", signed(change * 100.0))
}

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

/// `p = 0.03`, `p = 0.004`, `p = 1`, with as many decimals as keep it on its side of
/// `alpha` (0.049 at α = 0.05 is not shown as 0.05), `p < 0.000001` below that.
pub(super) fn p_text(p: f64, alpha: f64) -> String {
    // Two decimals would say 1.00.
    if p >= 0.995 {
        return "p = 1".to_string();
    }
    for decimals in 2..=6 {
        let shown = format!("{p:.decimals$}");
        let value: f64 = shown.parse().unwrap_or(p);
        if value > 0.0 && (value < alpha) == (p < alpha) && (value != alpha || p == alpha) {
            return format!("p = {shown}");
        }
    }
    "p < 0.000001".to_string()
}
