//! Two runs of the same tasks, each task passed or not in each: the 2×2 table, the exact
//! McNemar test on its discordant cells, and Newcombe's square-and-add interval for the
//! change in pass rate (Newcombe 1998, "Improved confidence intervals for the difference
//! between binomial proportions based on paired data", method 10: Wilson intervals of
//! both rates joined with the continuity-corrected correlation of the pairs).

use serde::Serialize;
use statrs::distribution::{Binomial, DiscreteCDF};

use super::Interval;
use super::binomial::wilson_at;

/// The tasks of two runs, by where they passed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub(crate) struct PairedTable {
    /// Passed in both.
    pub(crate) both: u64,
    /// Passed only in A (regressed).
    pub(crate) only_a: u64,
    /// Passed only in B (fixed).
    pub(crate) only_b: u64,
    /// Passed in neither.
    pub(crate) neither: u64,
}

impl PairedTable {
    /// All the tasks.
    pub(crate) fn n(&self) -> u64 {
        self.both + self.only_a + self.only_b + self.neither
    }

    /// A's pass rate.
    pub(crate) fn rate_a(&self) -> f64 {
        ratio(self.both + self.only_a, self.n())
    }

    /// B's pass rate.
    pub(crate) fn rate_b(&self) -> f64 {
        ratio(self.both + self.only_b, self.n())
    }

    /// The tasks that changed.
    pub(crate) fn discordant(&self) -> u64 {
        self.only_a + self.only_b
    }
}

fn ratio(k: u64, n: u64) -> f64 {
    if n == 0 { 0.0 } else { k as f64 / n as f64 }
}

/// The exact McNemar test's two-sided p: the discordant tasks as a fair coin's throws.
pub(crate) fn mcnemar_exact(t: &PairedTable) -> f64 {
    let m = t.discordant();
    if m == 0 {
        return 1.0;
    }
    let fewer = t.only_a.min(t.only_b);
    match Binomial::new(0.5, m) {
        Ok(law) => (2.0 * law.cdf(fewer)).min(1.0),
        Err(_) => 1.0,
    }
}

/// Newcombe's interval at `level` (0.95 for 95%) for B's pass rate minus A's; `None`
/// with no tasks.
pub(crate) fn newcombe(t: &PairedTable, level: f64) -> Option<Interval> {
    let n = t.n();
    let (pa, pb) = (t.rate_a(), t.rate_b());
    let wa = wilson_at((t.both + t.only_a) as f64, n as f64, level)?;
    let wb = wilson_at((t.both + t.only_b) as f64, n as f64, level)?;
    let phi = correlation(t);
    let change = pb - pa;
    // The lower bound joins how far B may be lower and A higher; the upper the reverse.
    let (down_b, up_a) = (pb - wb.low, wa.high - pa);
    let (up_b, down_a) = (wb.high - pb, pa - wa.low);
    let low = change - (down_b * down_b + up_a * up_a - 2.0 * phi * down_b * up_a).sqrt();
    let high = change + (up_b * up_b + down_a * down_a - 2.0 * phi * up_b * down_a).sqrt();
    Some(Interval {
        low: low.max(-1.0),
        high: high.min(1.0),
    })
}

/// The pairs' correlation with Newcombe's continuity correction: a positive association
/// is reduced by n/2 (to nothing if it is smaller), a negative one is kept.
fn correlation(t: &PairedTable) -> f64 {
    let n = t.n() as f64;
    let (both, only_a, only_b, neither) = (
        t.both as f64,
        t.only_a as f64,
        t.only_b as f64,
        t.neither as f64,
    );
    let margins = (both + only_a) * (only_b + neither) * (both + only_b) * (only_a + neither);
    if margins == 0.0 {
        return 0.0;
    }
    let association = both * neither - only_a * only_b;
    let corrected = if association > n / 2.0 {
        association - n / 2.0
    } else if association >= 0.0 {
        0.0
    } else {
        association
    };
    corrected / margins.sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn newcombe_matches_the_published_example() {
        // Fagerland, Lydersen & Laake, "Statistical Analysis of Contingency Tables"
        // (2017), §8: complete response before and after consolidation therapy (Cavo et
        // al. 2012), [[59, 6], [16, 80]]: the first measurement's rate minus the second's
        // is −0.0621, 95% CI −0.1186 to −0.0046. Here B − A is computed, so with A as the
        // second measurement (16 passed only there) the published figures come out.
        let t = PairedTable {
            both: 59,
            only_a: 16,
            only_b: 6,
            neither: 80,
        };
        let ci = newcombe(&t, 0.95).unwrap();
        assert!((t.rate_b() - t.rate_a() - -0.0621).abs() < 5e-5);
        // With A as the first measurement, the same interval, negated and swapped.
        let published = newcombe(
            &PairedTable {
                both: 59,
                only_a: 6,
                only_b: 16,
                neither: 80,
            },
            0.95,
        )
        .unwrap();
        assert!((published.low - 0.0046).abs() < 5e-5, "{published:?}");
        assert!((published.high - 0.1186).abs() < 5e-5, "{published:?}");
        assert!((ci.low - -0.1186).abs() < 5e-5 && (ci.high - -0.0046).abs() < 5e-5);
    }

    #[test]
    fn mcnemar_without_discordant_tasks_is_one() {
        let t = PairedTable {
            both: 10,
            neither: 3,
            ..Default::default()
        };
        assert_eq!(mcnemar_exact(&t), 1.0);
        let ci = newcombe(&t, 0.95).unwrap();
        assert!(ci.low < 0.0 && ci.high > 0.0);
        assert_eq!(newcombe(&PairedTable::default(), 0.95), None);
    }
}
