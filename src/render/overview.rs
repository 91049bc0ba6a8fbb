//! What the run-level files say of a run as a whole, counted once for all of them: the
//! totals, and for a run with repetitions each task's rates. One pass over the rows
//! (two with repetitions) instead of one or more in each file.

use super::repeats::{TaskRate, rates};
use super::summary::{Totals, totals};
use crate::record::RowSource;

/// A run as a whole.
pub(crate) struct Overview {
    /// Counts over every task.
    pub(crate) totals: Totals,
    /// Each task's results over its repetitions, when the run has any.
    pub(crate) rates: Option<Vec<TaskRate>>,
}

impl Overview {
    /// The overview of `records`.
    pub(crate) fn of(records: &dyn RowSource) -> Self {
        let mut repeated = false;
        let totals = totals(records.rows().inspect(|r| repeated |= r.repeat.is_some()));
        Self {
            totals,
            rates: repeated.then(|| rates(records.rows())),
        }
    }
}
