//! The tests of the comparison's statistics and of their words.

use super::words::p_text;
use super::*;

fn rate(passed: u32, runs: u32) -> Rate {
    Rate {
        passed,
        runs,
        pass_rate: f64::from(passed) / f64::from(runs),
    }
}

#[test]
fn holm_keeps_the_changes_beyond_their_own_noise() {
    let id = |s: &str| TaskId::parse(s).unwrap();
    let paired = vec![
        (id("a"), rate(10, 10), rate(0, 10)),
        (id("b"), rate(10, 10), rate(4, 10)),
        (id("c"), rate(6, 10), rate(4, 10)),
    ];
    let found: Vec<(String, f64)> = beyond_noise(&paired, 0.05)
        .into_iter()
        .map(|t| (t.id.to_string(), t.p_value))
        .collect();
    // Fisher: 1.0825e-5 (× 3), 0.010836 (× 2), 0.6563 (× 1).
    assert_eq!(found.len(), 2, "{found:?}");
    assert!((found[0].1 - 3.0 * 1.082_508_822_446_903e-5).abs() < 1e-12);
    assert!((found[1].1 - 2.0 * 0.010_835_913_312_693_5).abs() < 1e-12);
}

#[test]
fn p_is_shown_on_its_side_of_alpha() {
    assert_eq!(p_text(0.049, 0.05), "p = 0.049");
    // 0.0117 at α = 0.01 is not shown as 0.01, which would read as "at α".
    assert_eq!(p_text(0.0117, 0.01), "p = 0.012");
    assert_eq!(p_text(0.03, 0.05), "p = 0.03");
    assert_eq!(p_text(0.999, 0.05), "p = 1");
    assert_eq!(p_text(0.9951, 0.05), "p = 1");
    assert_eq!(p_text(0.994, 0.05), "p = 0.99");
}
