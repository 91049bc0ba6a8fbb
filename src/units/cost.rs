//! Token counts and what they cost.

use serde::{Deserialize, Serialize};

/// Token counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Usage {
    /// Tokens sent.
    pub(crate) prompt_tokens: u64,
    /// Tokens received.
    pub(crate) completion_tokens: u64,
}

impl Usage {
    /// Adds another count to this one.
    pub(crate) fn add(&mut self, other: Usage) {
        self.prompt_tokens += other.prompt_tokens;
        self.completion_tokens += other.completion_tokens;
    }

    /// Prompt plus completion.
    pub(crate) fn total(&self) -> u64 {
        self.prompt_tokens + self.completion_tokens
    }
}

/// Accumulated LLM cost. Once one call has no known price the total is unknown, and
/// says so rather than pretending to be 0.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Cost {
    usd: f64,
    unknown: bool,
}

impl Cost {
    /// A known amount.
    pub(crate) fn known(usd: f64) -> Self {
        Self {
            usd,
            unknown: false,
        }
    }

    /// An amount that cannot be priced.
    pub(crate) fn unknown() -> Self {
        Self {
            usd: 0.0,
            unknown: true,
        }
    }

    /// Adds another cost.
    pub(crate) fn add(&mut self, other: Cost) {
        self.usd += other.usd;
        self.unknown |= other.unknown;
    }

    /// The total in USD, or `None` when some part is unknown.
    pub(crate) fn usd(&self) -> Option<f64> {
        (!self.unknown).then_some(self.usd)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_cost_is_contagious() {
        let mut c = Cost::known(0.5);
        c.add(Cost::known(0.25));
        assert_eq!(c.usd(), Some(0.75));
        c.add(Cost::unknown());
        assert_eq!(c.usd(), None);
        assert_eq!(Cost::default().usd(), Some(0.0));
    }
}
