//! The statistics that tell a change from noise, each written once and named in the
//! README: Wilson's interval for a pass rate, the exact McNemar test and Newcombe's
//! interval for two runs of the same tasks, Fisher's exact test for one task's repetitions,
//! a sign-flip permutation test and a paired t interval over per-task pass rates, and
//! Cohen's κ for a judge's agreement with the checks. A leaf: numbers in, numbers out;
//! the distributions come from `statrs`.

mod agreement;
mod binomial;
mod paired;
mod resample;

pub(crate) use agreement::cohen_kappa;
pub(crate) use binomial::{fisher_exact, wilson};
pub(crate) use paired::{PairedTable, mcnemar_exact, newcombe};
pub(crate) use resample::{paired_t_interval, sign_flip_test};

/// The two-sided normal quantile of an interval at `level` (1.96 for 0.95).
pub(crate) fn z_of(level: f64) -> f64 {
    use statrs::distribution::{ContinuousCDF, Normal};
    Normal::standard().inverse_cdf(1.0 - (1.0 - level) / 2.0)
}

/// A confidence interval.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub(crate) struct Interval {
    /// The lower bound.
    pub(crate) low: f64,
    /// The upper bound.
    pub(crate) high: f64,
}

impl Interval {
    /// Both bounds to four decimal places, as the data files write rates.
    pub(crate) fn rounded(self) -> Self {
        let round = |x: f64| (x * 10_000.0).round() / 10_000.0;
        Self {
            low: round(self.low),
            high: round(self.high),
        }
    }

    /// As percentages: `42.1% to 61.3%`.
    pub(crate) fn percent(&self) -> String {
        format!("{:.1}% to {:.1}%", self.low * 100.0, self.high * 100.0)
    }
}

#[cfg(test)]
mod tests {
    //! Every statistic against the values SciPy and statsmodels give for the same cases
    //! (tests/data/stats-reference.json, made and checked by scripts/stats-reference.py).

    use serde_json::Value;

    use super::*;

    fn reference(kind: &str) -> Vec<Value> {
        let all: Value =
            serde_json::from_str(include_str!("../../tests/data/stats-reference.json")).unwrap();
        all[kind].as_array().unwrap().clone()
    }

    fn num(v: &Value) -> f64 {
        v.as_f64().unwrap()
    }

    fn table(case: &Value) -> [u64; 4] {
        let t = &case["table"];
        [&t[0][0], &t[0][1], &t[1][0], &t[1][1]].map(|v| v.as_u64().unwrap())
    }

    fn changes(case: &Value) -> Vec<f64> {
        case["changes"]
            .as_array()
            .unwrap()
            .iter()
            .map(num)
            .collect()
    }

    fn assert_close(ours: f64, theirs: f64, case: &Value) {
        assert!((ours - theirs).abs() < 1e-9, "{ours} ≠ {theirs} for {case}");
    }

    #[test]
    fn wilson_agrees_with_statsmodels() {
        for case in reference("wilson") {
            let ci = wilson(num(&case["passed"]), num(&case["n"])).unwrap();
            assert_close(ci.low, num(&case["expected"]["low"]), &case);
            assert_close(ci.high, num(&case["expected"]["high"]), &case);
        }
    }

    #[test]
    fn mcnemar_agrees_with_statsmodels() {
        for case in reference("mcnemar") {
            let [both, only_a, only_b, neither] = table(&case);
            let t = PairedTable {
                both,
                only_a,
                only_b,
                neither,
            };
            assert_close(mcnemar_exact(&t), num(&case["expected"]["p"]), &case);
        }
    }

    #[test]
    fn fisher_agrees_with_scipy() {
        for case in reference("fisher") {
            let [a, b, c, d] = table(&case);
            assert_close(fisher_exact(a, b, c, d), num(&case["expected"]["p"]), &case);
        }
    }

    #[test]
    fn kappa_agrees_with_statsmodels() {
        for case in reference("kappa") {
            let [a, b, c, d] = table(&case);
            let k = cohen_kappa(a, b, c, d).unwrap().kappa.unwrap();
            assert_close(k, num(&case["expected"]["kappa"]), &case);
        }
    }

    #[test]
    fn the_sign_flip_test_agrees_with_scipys_exact_permutation_test() {
        for case in reference("sign_flip") {
            assert_close(
                sign_flip_test(&changes(&case)),
                num(&case["expected"]["p"]),
                &case,
            );
        }
    }

    #[test]
    fn the_t_interval_agrees_with_scipy() {
        for case in reference("t_interval") {
            let ci = paired_t_interval(&changes(&case), 0.95).unwrap();
            assert_close(ci.low, num(&case["expected"]["low"]), &case);
            assert_close(ci.high, num(&case["expected"]["high"]), &case);
        }
    }
}
