//! Durations: parsed from text (`90s`, `10m`, a number of seconds), written back in
//! the same human form, and measured seconds rounded as every `duration_s` field is.

use std::time::Duration;

/// The longest duration any limit may be: a year. Longer values are mistakes, and values
/// past what a clock can add would overflow it.
pub(crate) const MAX_DURATION: Duration = Duration::from_secs(365 * 24 * 3600);

/// What is wrong with a number of seconds as a limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum DurationError {
    /// Zero, negative or not a number.
    #[error("is not a positive duration")]
    NotPositive,
    /// Over [`MAX_DURATION`].
    #[error("is longer than a year")]
    TooLong,
}

/// A text that is not a duration a limit may be.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ParseDurationError {
    /// A number of seconds that cannot be a limit.
    #[error("{text:?} {reason}")]
    Seconds {
        /// The text given.
        text: String,
        /// What is wrong with it.
        reason: DurationError,
    },
    /// Not a duration at all.
    #[error("{text:?} is not a duration ({source}); write e.g. 90s, 10m or 1h")]
    Syntax {
        /// The text given.
        text: String,
        /// What humantime said.
        source: humantime::DurationError,
    },
}

/// A duration: `90s`, `10m`, `1h 30m`, `500ms`, or a plain number of seconds.
pub(crate) fn parse_duration(text: &str) -> Result<Duration, ParseDurationError> {
    let t = text.trim();
    let wrong = |reason| ParseDurationError::Seconds {
        text: t.to_string(),
        reason,
    };
    let parsed = match t.parse::<f64>() {
        Ok(secs) => return duration_from_seconds(secs).map_err(wrong),
        Err(_) => humantime::parse_duration(t).map_err(|source| ParseDurationError::Syntax {
            text: t.to_string(),
            source,
        }),
    }?;
    if parsed.is_zero() {
        return Err(wrong(DurationError::NotPositive));
    }
    if parsed > MAX_DURATION {
        return Err(wrong(DurationError::TooLong));
    }
    Ok(parsed)
}

/// A positive number of seconds, at most [`MAX_DURATION`], as a duration; the error
/// says what is wrong with the number.
pub(crate) fn duration_from_seconds(secs: f64) -> Result<Duration, DurationError> {
    if !(secs.is_finite() && secs > 0.0) {
        return Err(DurationError::NotPositive);
    }
    match Duration::try_from_secs_f64(secs) {
        Ok(d) if !d.is_zero() && d <= MAX_DURATION => Ok(d),
        Ok(d) if d.is_zero() => Err(DurationError::NotPositive),
        _ => Err(DurationError::TooLong),
    }
}

/// Serializes a duration as `90s`, `10m`.
pub(crate) fn as_human<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(&humantime::format_duration(*d))
}

/// Seconds as a float rounded to milliseconds, the form every `duration_s` field uses.
pub(crate) fn seconds(d: Duration) -> f64 {
    (d.as_secs_f64() * 1000.0).round() / 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("90s").unwrap(), Duration::from_secs(90));
        assert_eq!(parse_duration("10m").unwrap(), Duration::from_secs(600));
        assert_eq!(parse_duration("1h 30m").unwrap(), Duration::from_secs(5400));
        assert_eq!(parse_duration("2.5").unwrap(), Duration::from_millis(2500));
        assert!(parse_duration("0").is_err());
        assert!(
            parse_duration("soon")
                .unwrap_err()
                .to_string()
                .contains("write e.g. 90s")
        );
    }

    #[test]
    fn no_number_overflows_a_duration() {
        for text in [
            "1e308",
            "18446744073709551615",
            "3.2e7",
            "1000000000 years",
            "inf",
            "NaN",
        ] {
            assert!(parse_duration(text).is_err(), "{text}");
        }
        assert!(duration_from_seconds(1e-12).is_err());
        assert_eq!(duration_from_seconds(0.5), Ok(Duration::from_millis(500)));
    }

    #[test]
    fn seconds_round_to_millis() {
        assert_eq!(seconds(Duration::from_micros(1_234_567)), 1.235);
    }
}
