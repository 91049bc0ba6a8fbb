//! Two raters' agreement on the same tasks: Cohen's κ (Cohen 1960) from their 2×2 table,
//! the observed agreement corrected for the agreement their own rates would give by chance.

use serde::Serialize;

/// κ with its parts.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub(crate) struct Kappa {
    /// The share of tasks both raters judged alike.
    pub(crate) observed: f64,
    /// The share chance alone would give them, from their own rates.
    pub(crate) expected: f64,
    /// (observed − expected) / (1 − expected); `None` when chance already explains every
    /// verdict (both raters gave one and the same verdict to every task).
    pub(crate) kappa: Option<f64>,
}

/// κ of the table `[[yes_yes, yes_no], [no_yes, no_no]]` (first rater's verdict, then the
/// second's); `None` with no tasks.
pub(crate) fn cohen_kappa(yes_yes: u64, yes_no: u64, no_yes: u64, no_no: u64) -> Option<Kappa> {
    let n = (yes_yes + yes_no + no_yes + no_no) as f64;
    if n == 0.0 {
        return None;
    }
    let observed = (yes_yes + no_no) as f64 / n;
    let first_yes = (yes_yes + yes_no) as f64 / n;
    let second_yes = (yes_yes + no_yes) as f64 / n;
    let expected = first_yes * second_yes + (1.0 - first_yes) * (1.0 - second_yes);
    let kappa = (expected < 1.0).then(|| (observed - expected) / (1.0 - expected));
    Some(Kappa {
        observed,
        expected,
        kappa,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kappa_of_perfect_and_chance_agreement() {
        assert_eq!(cohen_kappa(3, 0, 0, 2).unwrap().kappa, Some(1.0));
        assert_eq!(cohen_kappa(4, 0, 0, 0).unwrap().kappa, None);
        assert_eq!(cohen_kappa(0, 0, 0, 0), None);
        // Agreeing exactly as often as chance would: κ = 0.
        assert!(cohen_kappa(1, 1, 1, 1).unwrap().kappa.unwrap().abs() < 1e-12);
    }
}
