//! One proportion and one 2×2 table: Wilson's score interval for a pass rate (Wilson 1927,
//! without continuity correction) and Fisher's exact test, two-sided as R's and SciPy's:
//! the tables as likely as the observed one or less.

use statrs::distribution::{Discrete, Hypergeometric};

use super::Interval;

/// Wilson's 95% score interval for `passed` of `n` (`passed` may be a mean rate times
/// `n`); `None` when `n` is 0.
pub(crate) fn wilson(passed: f64, n: f64) -> Option<Interval> {
    wilson_at(passed, n, 0.95)
}

/// Wilson's score interval at `level` (0.95 for 95%).
pub(crate) fn wilson_at(passed: f64, n: f64, level: f64) -> Option<Interval> {
    if n <= 0.0 {
        return None;
    }
    let z = super::z_of(level);
    let p = passed / n;
    let z2 = z * z;
    let centre = (p + z2 / (2.0 * n)) / (1.0 + z2 / n);
    let half = z / (1.0 + z2 / n) * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    Some(Interval {
        low: (centre - half).max(0.0),
        high: (centre + half).min(1.0),
    })
}

/// Fisher's exact two-sided p for the table `[[a, b], [c, d]]`.
pub(crate) fn fisher_exact(a: u64, b: u64, c: u64, d: u64) -> f64 {
    let n = a + b + c + d;
    let (row1, col1) = (a + b, a + c);
    if n == 0 || row1 == 0 || col1 == 0 || row1 == n || col1 == n {
        return 1.0;
    }
    // `a` follows the hypergeometric law: `col1` drawn from `n`, of which `row1` count.
    let Ok(law) = Hypergeometric::new(n, row1, col1) else {
        return 1.0;
    };
    let observed = law.pmf(a);
    let low = col1.saturating_sub(n - row1);
    let high = row1.min(col1);
    // SciPy's relative tolerance: tables equally likely up to rounding count as as extreme.
    let p: f64 = (low..=high)
        .map(|x| law.pmf(x))
        .filter(|&q| q <= observed * (1.0 + 1e-7))
        .sum();
    p.min(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(x: f64, y: f64, tol: f64) -> bool {
        (x - y).abs() <= tol
    }

    #[test]
    fn wilson_of_nothing_is_none_and_the_bounds_stay_in_0_1() {
        assert_eq!(wilson(0.0, 0.0), None);
        let all = wilson(5.0, 5.0).unwrap();
        assert!(close(all.high, 1.0, 1e-12) && all.low > 0.5);
        let none = wilson(0.0, 5.0).unwrap();
        assert!(close(none.low, 0.0, 1e-12) && none.high < 0.5);
    }

    #[test]
    fn fisher_of_a_table_with_an_empty_margin_is_one() {
        assert_eq!(fisher_exact(0, 0, 3, 4), 1.0);
        assert_eq!(fisher_exact(3, 0, 4, 0), 1.0);
    }
}
