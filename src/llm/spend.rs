//! The run's LLM spend so far, shared by every task: `--max-cost` stops scheduling once
//! it reaches the budget.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::units::Cost;

/// Spend in micro-dollars, updated after every priced call.
#[derive(Debug, Default)]
pub(crate) struct Spend {
    micros: AtomicU64,
}

impl Spend {
    /// Adds a call's cost (an unknown cost adds nothing; the run refuses --max-cost
    /// without a price, so that cannot happen with a budget).
    pub(crate) fn add(&self, cost: Cost) {
        if let Some(usd) = cost.usd() {
            self.micros
                .fetch_add((usd * 1e6).round() as u64, Ordering::Relaxed);
        }
    }

    /// USD spent so far.
    pub(crate) fn usd(&self) -> f64 {
        self.micros.load(Ordering::Relaxed) as f64 / 1e6
    }
}
