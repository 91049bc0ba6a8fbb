//! An OSWorld run's results by domain (the folder of its task files: `libreoffice_calc`,
//! `os`, ...), as OSWorld reports them: how many tasks ran, passed, failed and were
//! unsupported here, and their mean score.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::record::{TaskRow, TaskStatus};

/// One domain's counts.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub(crate) struct DomainCount {
    /// The domain.
    pub(crate) domain: String,
    /// Its tasks.
    pub(crate) tasks: usize,
    /// Those that ran (all but the unsupported ones).
    pub(crate) ran: usize,
    /// Passed (score 1).
    pub(crate) passed: usize,
    /// Failed.
    pub(crate) failed: usize,
    /// Ended in an error, a timeout or cancelled.
    pub(crate) other: usize,
    /// Not run: this machine lacks what they need.
    pub(crate) unsupported: usize,
    /// The mean score of those scored; none when no task was.
    pub(crate) mean_score: Option<f64>,
    #[serde(skip)]
    scored: usize,
    #[serde(skip)]
    score_sum: f64,
}

/// Counts by domain, over the rows that have one.
#[derive(Default)]
pub(crate) struct DomainCounts {
    domains: BTreeMap<String, DomainCount>,
}

impl DomainCounts {
    /// Counts `r`, when it is of a domain.
    pub(crate) fn add(&mut self, r: &TaskRow) {
        let Some(domain) = &r.domain else { return };
        let d = self.domains.entry(domain.clone()).or_default();
        d.tasks += 1;
        match r.status {
            TaskStatus::Unsupported => d.unsupported += 1,
            TaskStatus::Passed => d.passed += 1,
            TaskStatus::Failed => d.failed += 1,
            _ => d.other += 1,
        }
        if r.status != TaskStatus::Unsupported {
            d.ran += 1;
        }
        if let Some(score) = r.score {
            d.scored += 1;
            d.score_sum += score;
        }
    }

    /// The counts, by domain name; none when no row had a domain.
    pub(crate) fn finish(self) -> Option<Vec<DomainCount>> {
        if self.domains.is_empty() {
            return None;
        }
        Some(
            self.domains
                .into_iter()
                .map(|(name, mut d)| {
                    d.domain = name;
                    d.mean_score = (d.scored > 0)
                        .then(|| (d.score_sum / d.scored as f64 * 1000.0).round() / 1000.0);
                    d
                })
                .collect(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(domain: &str, status: TaskStatus, score: Option<f64>) -> TaskRow {
        let mut record = crate::record::TaskRecord::new(
            crate::task::TaskId::parse(&format!("{domain}/{}", fastrand::u32(..))).unwrap(),
            String::new(),
            String::new(),
            crate::record::ShapeName::SeedRequest,
            crate::record::SessionType::FromFileSession,
            String::new(),
        );
        record.domain = Some(domain.to_string());
        record.status = status;
        record.score = score;
        TaskRow::of(&record)
    }

    #[test]
    fn each_domain_counts_what_ran_passed_failed_and_was_unsupported() {
        let mut counts = DomainCounts::default();
        counts.add(&row("os", TaskStatus::Passed, Some(1.0)));
        counts.add(&row("os", TaskStatus::Failed, Some(0.5)));
        counts.add(&row("os", TaskStatus::Unsupported, None));
        counts.add(&row("chrome", TaskStatus::Unsupported, None));
        let counts = counts.finish().unwrap();
        assert_eq!(counts.len(), 2);
        let (chrome, os) = (&counts[0], &counts[1]);
        assert_eq!(
            (
                chrome.tasks,
                chrome.ran,
                chrome.unsupported,
                chrome.mean_score
            ),
            (1, 0, 1, None)
        );
        assert_eq!(
            (os.tasks, os.ran, os.passed, os.failed, os.unsupported),
            (3, 2, 1, 1, 1)
        );
        assert_eq!(os.mean_score, Some(0.75));
        assert!(DomainCounts::default().finish().is_none());
    }
}
