//! How long to wait before trying again: exponential backoff with jitter, shared by LLM
//! calls and task retries.

use std::time::Duration;

/// Backoff delays.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Backoff {
    /// The first delay.
    pub(crate) base: Duration,
    /// The longest delay.
    pub(crate) max: Duration,
}

impl Backoff {
    /// The delay before retry number `retry` (1-based): `base * 2^(retry-1)`, capped,
    /// then jittered into its upper half so that parallel tasks spread out.
    pub(crate) fn delay(&self, retry: u32) -> Duration {
        let exp = self
            .base
            .saturating_mul(1u32 << retry.saturating_sub(1).min(16));
        let capped = exp.min(self.max);
        let half = capped / 2;
        half + half.mul_f64(fastrand::f64())
    }

    /// The delay before retry `retry`, honouring a server's `Retry-After` when given.
    pub(crate) fn delay_with_hint(&self, retry: u32, retry_after: Option<Duration>) -> Duration {
        match retry_after {
            Some(hint) => hint.min(self.max),
            None => self.delay(retry),
        }
    }
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
}
