//! Wall-clock timestamps as they appear in result files: RFC 3339, UTC, milliseconds.
//!
//! Durations inside a run are measured with `Instant`; this type is only for the
//! human- and machine-readable start/finish times written to disk.

use std::fmt;
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A point in wall-clock time, printed as `2026-11-21T10:00:00.123Z`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct Timestamp(SystemTime);

impl Timestamp {
    /// The current time.
    pub(crate) fn now() -> Self {
        Self(SystemTime::now())
    }

    /// The time elapsed from `earlier` to `self` (zero if the clock went backwards).
    pub(crate) fn since(&self, earlier: Timestamp) -> Duration {
        self.0.duration_since(earlier.0).unwrap_or_default()
    }

    /// Seconds since the Unix epoch, for compact fields and sorting.
    pub(crate) fn unix_seconds(&self) -> f64 {
        self.0
            .duration_since(SystemTime::UNIX_EPOCH)
            .map(|d| d.as_secs_f64())
            .unwrap_or_default()
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", humantime::format_rfc3339_millis(self.0))
    }
}

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        humantime::parse_rfc3339_weak(&text)
            .map(Timestamp)
            .map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_through_json() {
        let t = Timestamp::now();
        let json = serde_json::to_string(&t).unwrap();
        let back: Timestamp = serde_json::from_str(&json).unwrap();
        // Millisecond precision on disk.
        assert!(
            back.since(t) < Duration::from_millis(1) && t.since(back) < Duration::from_millis(1)
        );
        assert!(json.ends_with("Z\""), "{json}");
    }
}
