//! How long to wait before trying again: exponential backoff with jitter (shared by LLM
//! calls and task retries), and for LLM calls, which failures are worth a retry and what
//! the server's `Retry-After` asks for.

use std::time::Duration;

use reqwest::header::HeaderMap;

/// Backoff delays.
#[derive(Clone, Copy, Debug)]
pub struct Backoff {
    /// The first delay.
    pub base: Duration,
    /// The longest delay.
    pub max: Duration,
}

impl Backoff {
    /// The delay before retry number `retry` (1-based): `base * 2^(retry-1)`, capped,
    /// then jittered into its upper half so that parallel tasks spread out.
    pub fn delay(&self, retry: u32) -> Duration {
        let exp = self
            .base
            .saturating_mul(1u32 << retry.saturating_sub(1).min(16));
        let capped = exp.min(self.max);
        let half = capped / 2;
        half + half.mul_f64(fastrand::f64())
    }

    /// The delay before retry `retry`, honouring a server's `Retry-After` when given.
    pub fn delay_with_hint(&self, retry: u32, retry_after: Option<Duration>) -> Duration {
        match retry_after {
            Some(hint) => hint.min(self.max),
            None => self.delay(retry),
        }
    }
}

/// Statuses worth retrying.
pub(crate) fn retryable_status(status: u16) -> bool {
    matches!(status, 408 | 409 | 425 | 429) || status >= 500
}

/// The server's requested wait: `retry-after-ms`, or `Retry-After` in seconds.
/// (An HTTP-date `Retry-After` falls back to the backoff.)
pub(crate) fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let text = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
    };
    if let Some(ms) = text("retry-after-ms").and_then(|t| t.parse::<f64>().ok()) {
        return Some(Duration::from_secs_f64(ms.max(0.0) / 1000.0));
    }
    text("retry-after")
        .and_then(|t| t.parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s >= 0.0)
        .map(Duration::from_secs_f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_within_jitter_and_cap() {
        let b = Backoff {
            base: Duration::from_secs(1),
            max: Duration::from_secs(10),
        };
        for _ in 0..100 {
            let d1 = b.delay(1);
            assert!(
                d1 >= Duration::from_millis(500) && d1 <= Duration::from_secs(1),
                "{d1:?}"
            );
            let d3 = b.delay(3);
            assert!(
                d3 >= Duration::from_secs(2) && d3 <= Duration::from_secs(4),
                "{d3:?}"
            );
            let d9 = b.delay(9);
            assert!(
                d9 >= Duration::from_secs(5) && d9 <= Duration::from_secs(10),
                "{d9:?}"
            );
        }
        assert_eq!(
            b.delay_with_hint(1, Some(Duration::from_secs(3))),
            Duration::from_secs(3)
        );
        assert_eq!(
            b.delay_with_hint(1, Some(Duration::from_secs(300))),
            Duration::from_secs(10)
        );
    }

    #[test]
    fn retry_after_headers() {
        let mut h = HeaderMap::new();
        assert_eq!(retry_after(&h), None);
        h.insert("retry-after", "2".parse().unwrap());
        assert_eq!(retry_after(&h), Some(Duration::from_secs(2)));
        h.insert("retry-after-ms", "250".parse().unwrap());
        assert_eq!(retry_after(&h), Some(Duration::from_millis(250)));
        let mut d = HeaderMap::new();
        d.insert(
            "retry-after",
            "Wed, 21 Oct 2015 07:28:00 GMT".parse().unwrap(),
        );
        assert_eq!(retry_after(&d), None);
    }

    #[test]
    fn which_statuses_are_retried() {
        for s in [408, 409, 429, 500, 502, 503, 504] {
            assert!(retryable_status(s), "{s}");
        }
        for s in [400, 401, 403, 404, 422] {
            assert!(!retryable_status(s), "{s}");
        }
    }
}
