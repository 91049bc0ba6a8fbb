//! Per-task pass rates of two runs with repetitions: a sign-flip permutation test of the
//! mean change (each task's change may as well have had the other sign if the runs are
//! alike; exact up to 20 changed tasks, else seeded random draws: 200,000, fewer for
//! thousands of changed tasks so that a test costs about 2·10^8 sign flips, but never
//! fewer than 20,000), and the paired t interval of the mean change.

use statrs::distribution::{ContinuousCDF, StudentsT};

use super::Interval;

/// Tasks with a change up to which every sign pattern is enumerated.
const EXACT_UP_TO: usize = 20;
/// Random sign patterns drawn beyond that, at most and at least.
const DRAWS: (usize, usize) = (200_000, 20_000);
/// Sign flips a drawn test may cost.
const FLIPS: usize = 200_000_000;

/// The two-sided p of the mean of `changes` under sign flips (1 when all are 0).
pub(crate) fn sign_flip_test(changes: &[f64]) -> f64 {
    let moved: Vec<f64> = changes.iter().copied().filter(|d| *d != 0.0).collect();
    if moved.is_empty() {
        return 1.0;
    }
    let observed: f64 = moved.iter().sum::<f64>().abs();
    // Sums equal up to rounding count as as extreme.
    let tolerance = 1e-9 * (1.0 + observed);
    let extreme = |signs: &mut dyn FnMut(usize) -> bool| {
        let sum: f64 = moved
            .iter()
            .enumerate()
            .map(|(i, d)| if signs(i) { -d } else { *d })
            .sum();
        sum.abs() >= observed - tolerance
    };
    if moved.len() <= EXACT_UP_TO {
        let patterns = 1u64 << moved.len();
        let hits = (0..patterns)
            .filter(|bits| extreme(&mut |i| bits >> i & 1 == 1))
            .count();
        return hits as f64 / patterns as f64;
    }
    let draws = (FLIPS / moved.len()).clamp(DRAWS.1, DRAWS.0);
    let mut rng = fastrand::Rng::with_seed(0x5eed);
    let hits = (0..draws).filter(|_| extreme(&mut |_| rng.bool())).count();
    // The observed pattern counts as one of the draws (a p of 0 cannot be claimed).
    (hits as f64 + 1.0) / (draws as f64 + 1.0)
}

/// The t interval at `level` (0.95 for 95%) of the mean of `changes`; `None` with fewer
/// than 2.
pub(crate) fn paired_t_interval(changes: &[f64], level: f64) -> Option<Interval> {
    let n = changes.len();
    if n < 2 {
        return None;
    }
    let mean = changes.iter().sum::<f64>() / n as f64;
    let variance = changes.iter().map(|d| (d - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    let t = StudentsT::new(0.0, 1.0, (n - 1) as f64)
        .ok()?
        .inverse_cdf(1.0 - (1.0 - level) / 2.0);
    let half = t * (variance / n as f64).sqrt();
    Some(Interval {
        low: mean - half,
        high: mean + half,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_change_gives_one_and_a_single_change_gives_one() {
        assert_eq!(sign_flip_test(&[0.0, 0.0]), 1.0);
        assert_eq!(sign_flip_test(&[0.4]), 1.0);
        assert_eq!(paired_t_interval(&[0.4], 0.95), None);
    }

    #[test]
    fn on_plus_minus_one_the_sign_flip_test_is_the_exact_mcnemar_test() {
        // 7 regressed, 1 fixed: the binomial two-sided p is 2 × 9/256.
        let mut changes = vec![-1.0; 7];
        changes.push(1.0);
        changes.extend([0.0; 5]);
        assert!((sign_flip_test(&changes) - 18.0 / 256.0).abs() < 1e-12);
    }

    #[test]
    fn beyond_20_changes_the_drawn_p_is_close_to_the_exact_one() {
        // 22 regressed, 8 fixed: the exact McNemar p is 2 × P(X ≤ 8), X ~ B(30, 1/2).
        let mut changes = vec![-1.0; 22];
        changes.extend([1.0; 8]);
        let exact: f64 = 2.0 * (0..=8u64).map(|k| binomial(30, k)).sum::<f64>() / 2f64.powi(30);
        let drawn = sign_flip_test(&changes);
        assert!((drawn - exact).abs() < 0.002, "{drawn} vs {exact}");
    }

    fn binomial(n: u64, k: u64) -> f64 {
        (0..k).fold(1.0, |c, i| c * (n - i) as f64 / (i + 1) as f64)
    }
}
