//! What the run-level files say of a run as a whole, counted once for all of them: the
//! totals, and for a run with repetitions each task's rates. One pass over the rows
//! (two with repetitions) instead of one or more in each file, with the judge's agreement
//! with the checks (`--eval both`) counted in the same pass.

use super::agreement::{Agreement, AgreementCount};
use super::experience::ExperienceCount;
use super::repeats::{TaskRate, rates};
use super::totals::{Totals, totals};
use crate::record::RowSource;

/// A run as a whole.
pub(crate) struct Overview {
    /// Counts over every task.
    pub(crate) totals: Totals,
    /// Each task's results over its repetitions, when the run has any.
    pub(crate) rates: Option<Vec<TaskRate>>,
    /// The judge's agreement with the checks, when some task had both verdicts.
    pub(crate) agreement: Option<Agreement>,
    /// Experience given and saved, when the run used any.
    pub(crate) experience: Option<ExperienceCount>,
    /// An OSWorld run's counts by domain.
    pub(crate) domains: Option<Vec<super::domains::DomainCount>>,
    /// What `report.html`'s pictures count.
    pub(crate) charts: super::html::ChartCounts,
}

impl Overview {
    /// The overview of `records`.
    pub(crate) fn of(records: &dyn RowSource) -> Self {
        let mut repeated = false;
        let mut agreement = AgreementCount::default();
        let mut experience = ExperienceCount::default();
        let mut domains = super::domains::DomainCounts::default();
        let mut charts = super::html::ChartCounts::default();
        let mut totals = totals(records.rows().inspect(|r| {
            repeated |= r.repeat.is_some();
            agreement.add(r);
            experience.add(r);
            domains.add(r);
            charts.add(r);
        }));
        if repeated {
            // Repetitions of one task are not independent: the interval is pass@1's,
            // over tasks (`repeats.totals.pass_at_1_ci`).
            totals.pass_rate_ci = None;
        }
        Self {
            totals,
            rates: repeated.then(|| rates(records.rows())),
            agreement: agreement.finish(),
            experience: experience.finish(),
            domains: domains.finish(),
            charts,
        }
    }
}
