//! The numbers a record holds, checked as they are read back: a `status.json` or a
//! trajectory edited by hand (or by a task that reached its run folder) is input like
//! any other. Seconds and dollars are finite and not negative, a score is from 0 to 1;
//! a record with another number is unreadable, said as such, never shown as `inf s` or a
//! negative cost.

use serde::{Deserialize, Deserializer};

/// The most seconds a duration can be (about 31 years).
const MAX_SECONDS: f64 = 1e9;
/// The most dollars a cost can be.
const MAX_COST: f64 = 1e9;

fn within<'de, D: Deserializer<'de>>(
    value: f64,
    low: f64,
    high: f64,
    what: &str,
) -> Result<f64, D::Error> {
    if value.is_finite() && (low..=high).contains(&value) {
        Ok(value)
    } else {
        // `1e308`, not its 309 digits.
        let shown = if value.is_finite() && value.abs() < 1e15 {
            value.to_string()
        } else {
            format!("{value:e}")
        };
        Err(serde::de::Error::custom(format!(
            "{what} {shown} is not a number from {low} to {high}"
        )))
    }
}

/// Seconds: finite, from 0 to [`MAX_SECONDS`].
pub(crate) fn seconds<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    within::<D>(f64::deserialize(d)?, 0.0, MAX_SECONDS, "a duration of")
}

/// A cost in dollars, when known: finite, from 0 to [`MAX_COST`].
pub(crate) fn cost<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    Option::<f64>::deserialize(d)?
        .map(|c| within::<D>(c, 0.0, MAX_COST, "a cost of"))
        .transpose()
}

/// A score, when given: from 0 to 1.
pub(crate) fn score<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    Option::<f64>::deserialize(d)?
        .map(|s| within::<D>(s, 0.0, 1.0, "a score of"))
        .transpose()
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;

    #[derive(Debug, Deserialize)]
    struct Numbers {
        #[serde(deserialize_with = "super::seconds")]
        duration_s: f64,
        #[serde(default, deserialize_with = "super::cost")]
        cost_usd: Option<f64>,
        #[serde(default, deserialize_with = "super::score")]
        score: Option<f64>,
    }

    fn read(json: &str) -> Result<Numbers, String> {
        serde_json::from_str(json).map_err(|e| e.to_string())
    }

    #[test]
    fn numbers_out_of_their_range_make_the_record_unreadable() {
        let ok = read(r#"{"duration_s": 1.5, "cost_usd": 0.02, "score": 0.5}"#).unwrap();
        assert_eq!(
            (ok.duration_s, ok.cost_usd, ok.score),
            (1.5, Some(0.02), Some(0.5))
        );
        let unknown = read(r#"{"duration_s": 0, "cost_usd": null}"#).unwrap();
        assert_eq!(unknown.cost_usd, None);
        for (json, said) in [
            (r#"{"duration_s": 1e308}"#, "a duration of 1e308"),
            (r#"{"duration_s": -1}"#, "a duration of -1"),
            (
                r#"{"duration_s": 1, "cost_usd": -1e308}"#,
                "a cost of -1e308",
            ),
            (r#"{"duration_s": 1, "score": 1.5}"#, "a score of 1.5"),
        ] {
            let e = read(json).unwrap_err();
            assert!(e.contains(said), "{json}: {e}");
        }
    }
}
