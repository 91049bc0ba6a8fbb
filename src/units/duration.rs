//! Durations: parsed from text (`90s`, `10m`, a number of seconds), written back in
//! the same human form, and measured seconds rounded as every `duration_s` field is.

use std::time::Duration;

/// A duration: `90s`, `10m`, `1h 30m`, `500ms`, or a plain number of seconds.
pub(crate) fn parse_duration(text: &str) -> Result<Duration, String> {
    let t = text.trim();
    let parsed = match t.parse::<f64>() {
        Ok(secs) if secs.is_finite() && secs > 0.0 => Ok(Duration::from_secs_f64(secs)),
        Ok(_) => Err(format!("{t:?} is not a positive duration")),
        Err(_) => humantime::parse_duration(t)
            .map_err(|e| format!("{t:?} is not a duration ({e}); write e.g. 90s, 10m or 1h")),
    }?;
    if parsed.is_zero() {
        return Err(format!("{t:?} is not a positive duration"));
    }
    Ok(parsed)
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
                .contains("write e.g. 90s")
        );
    }

    #[test]
    fn seconds_round_to_millis() {
        assert_eq!(seconds(Duration::from_micros(1_234_567)), 1.235);
    }
}
