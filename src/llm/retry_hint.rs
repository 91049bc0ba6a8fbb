//! Which HTTP answers are worth another try, and how long the server asks us to wait.

use std::time::Duration;

use reqwest::header::HeaderMap;

/// Statuses worth retrying.
pub(crate) fn retryable_status(status: u16) -> bool {
    matches!(status, 408 | 409 | 425 | 429) || status >= 500
}

/// Answers that say the provider is at its limit rather than broken: 429, 503, 529
/// (Anthropic's overloaded), and any 5xx whose body says it is overloaded.
pub(crate) fn is_rate_limit(status: u16, body: &str) -> bool {
    matches!(status, 429 | 503 | 529)
        || (status >= 500 && body.to_ascii_lowercase().contains("overloaded"))
}

/// A refusal that no wait will turn into an answer, though it comes as a rate limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NeverServed {
    /// The account has no quota left (OpenAI's 429 `insufficient_quota`).
    NoQuota,
    /// The request alone is over the rate limit (OpenAI's "Request too large").
    TooLarge,
}

/// Whether an error answer is one of those.
pub(crate) fn never_served(status: u16, body: &str) -> Option<NeverServed> {
    let body = body.to_ascii_lowercase();
    match status {
        429 if body.contains("insufficient_quota") => Some(NeverServed::NoQuota),
        413 | 429 if body.contains("request too large") => Some(NeverServed::TooLarge),
        _ => None,
    }
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
        return Duration::try_from_secs_f64(ms.max(0.0) / 1000.0).ok();
    }
    text("retry-after")
        .and_then(|t| t.parse::<f64>().ok())
        .and_then(|s| Duration::try_from_secs_f64(s).ok())
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let mut huge = HeaderMap::new();
        huge.insert("retry-after", "1e308".parse().unwrap());
        huge.insert("retry-after-ms", "-1e400".parse().unwrap());
        assert_eq!(
            retry_after(&huge),
            Some(Duration::ZERO),
            "no panic on any number"
        );
    }

    #[test]
    fn which_answers_are_rate_limits() {
        for (s, body) in [
            (429, ""),
            (503, ""),
            (529, ""),
            (500, "Overloaded, try later"),
        ] {
            assert!(is_rate_limit(s, body), "{s} {body}");
        }
        for (s, body) in [(500, "oops"), (502, ""), (408, ""), (400, "overloaded")] {
            assert!(!is_rate_limit(s, body), "{s} {body}");
        }
    }

    #[test]
    fn refusals_that_no_wait_cures() {
        let quota = r#"{"error": {"message": "You exceeded your current quota", "type": "insufficient_quota", "code": "insufficient_quota"}}"#;
        assert_eq!(never_served(429, quota), Some(NeverServed::NoQuota));
        let large = r#"{"error": {"message": "Request too large for gpt-4o on tokens per min (TPM): Limit 30000, Requested 45000."}}"#;
        assert_eq!(never_served(429, large), Some(NeverServed::TooLarge));
        assert_eq!(never_served(429, "Rate limit reached"), None);
        assert_eq!(never_served(500, quota), None);
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
