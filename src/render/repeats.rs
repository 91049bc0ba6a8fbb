//! Per-task results over repetitions (`--repeat K`): how often each task passed, pass@k,
//! pass^k, and which tasks are flaky (passed in some repetitions and not in others).
//! A run without repeats is the case K = 1, so comparisons work the same on both.

use std::borrow::Borrow;
use std::collections::BTreeMap;

use serde::Serialize;

use crate::record::{TaskRow, TaskStatus};
use crate::stats::{Interval, wilson};
use crate::task::TaskId;

/// One task's results over its repetitions.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct TaskRate {
    /// The task (without `/rep-N`).
    pub(crate) id: TaskId,
    /// Repetitions with a result.
    pub(crate) runs: u32,
    /// Repetitions that passed.
    pub(crate) passed: u32,
    /// passed / runs.
    #[serde(serialize_with = "four_places")]
    pub(crate) pass_rate: f64,
    /// Passed at least once in `runs` tries (pass@k with k = runs).
    pub(crate) pass_at_k: bool,
    /// Passed every time (pass^k).
    pub(crate) pass_all_k: bool,
    /// Passed in some repetitions and not in others.
    pub(crate) flaky: bool,
    /// Seconds, summed over repetitions.
    pub(crate) duration_s: f64,
    /// Cost, summed over repetitions; unknown if any is.
    pub(crate) cost_usd: Option<f64>,
    /// Tokens, summed over repetitions.
    pub(crate) tokens: u64,
    /// Why the last repetition that did not pass did not, if any.
    pub(crate) reason: Option<String>,
}

/// Groups records by task and rates each task, in id order.
pub(crate) fn rates(records: impl IntoIterator<Item = impl Borrow<TaskRow>>) -> Vec<TaskRate> {
    let mut groups: BTreeMap<TaskId, TaskRate> = BTreeMap::new();
    for r in records {
        let r = r.borrow();
        let rate = groups.entry(r.base_id()).or_insert_with_key(|id| TaskRate {
            id: id.clone(),
            runs: 0,
            passed: 0,
            pass_rate: 0.0,
            pass_at_k: false,
            pass_all_k: false,
            flaky: false,
            duration_s: 0.0,
            cost_usd: Some(0.0),
            tokens: 0,
            reason: None,
        });
        rate.runs += 1;
        if r.status == TaskStatus::Passed {
            rate.passed += 1;
        } else {
            // The last repetition that did not pass says why.
            rate.reason.clone_from(&r.error);
        }
        rate.duration_s += r.duration_s;
        rate.cost_usd = rate.cost_usd.zip(r.cost_usd).map(|(sum, c)| sum + c);
        rate.tokens += r.usage.total();
    }
    groups
        .into_values()
        .map(|mut rate| {
            let (n, passed) = (rate.runs, rate.passed);
            rate.pass_rate = f64::from(passed) / f64::from(n);
            rate.pass_at_k = passed > 0;
            rate.pass_all_k = passed == n;
            rate.flaky = passed > 0 && passed < n;
            rate.duration_s = (rate.duration_s * 1000.0).round() / 1000.0;
            rate
        })
        .collect()
}

/// True when any record is a repetition.
pub(crate) fn has_repeats(records: impl IntoIterator<Item = impl Borrow<TaskRow>>) -> bool {
    records.into_iter().any(|r| r.borrow().repeat.is_some())
}

/// Totals over repeated tasks.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct RepeatTotals {
    /// Distinct tasks.
    pub(crate) tasks: usize,
    /// Mean per-task pass rate (pass@1).
    pub(crate) pass_at_1: f64,
    /// Its 95% Wilson interval over tasks (each task counted once, by its rate).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) pass_at_1_ci: Option<Interval>,
    /// The mean over tasks run at least twice of each task's run-to-run variance (the
    /// sample variance of its passes, 0 for a task that always or never passes).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) mean_task_variance: Option<f64>,
    /// Share of tasks that passed at least once.
    pub(crate) pass_at_k: f64,
    /// Share of tasks that passed every time.
    pub(crate) pass_all_k: f64,
    /// Flaky tasks.
    pub(crate) flaky: Vec<TaskId>,
}

/// The totals of `rates`.
pub(crate) fn repeat_totals(rates: &[TaskRate]) -> RepeatTotals {
    let n = rates.len().max(1) as f64;
    let round = |x: f64| (x * 10_000.0).round() / 10_000.0;
    let rate_sum: f64 = rates.iter().map(|r| r.pass_rate).sum();
    let repeated: Vec<f64> = rates
        .iter()
        .filter(|r| r.runs >= 2)
        .map(|r| {
            let (k, runs) = (f64::from(r.passed), f64::from(r.runs));
            k * (runs - k) / (runs * (runs - 1.0))
        })
        .collect();
    RepeatTotals {
        tasks: rates.len(),
        pass_at_1: round(rate_sum / n),
        pass_at_1_ci: wilson(rate_sum, rates.len() as f64).map(Interval::rounded),
        mean_task_variance: (!repeated.is_empty())
            .then(|| round(repeated.iter().sum::<f64>() / repeated.len() as f64)),
        pass_at_k: round(rates.iter().filter(|r| r.pass_at_k).count() as f64 / n),
        pass_all_k: round(rates.iter().filter(|r| r.pass_all_k).count() as f64 / n),
        flaky: rates
            .iter()
            .filter(|r| r.flaky)
            .map(|r| r.id.clone())
            .collect(),
    }
}

/// A rate as written: to four decimal places (`0.6667`, not `0.6666666666666666`).
fn four_places<S: serde::Serializer>(rate: &f64, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_f64((rate * 10_000.0).round() / 10_000.0)
}

/// A task's result in one run.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct Rate {
    /// Runs that passed.
    pub(crate) passed: u32,
    /// Runs.
    pub(crate) runs: u32,
    /// passed / runs.
    pub(crate) pass_rate: f64,
}

impl Rate {
    /// As every comparison shows it: a single run passed or not, repetitions as
    /// `2/3 (67%)`.
    pub(crate) fn shown(&self) -> String {
        match (self.runs, self.passed) {
            (1, 1) => "passed".to_string(),
            (1, _) => "not passed".to_string(),
            _ => format!(
                "{}/{} ({:.0}%)",
                self.passed,
                self.runs,
                self.pass_rate * 100.0
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{SessionType, ShapeName, TaskRecord};

    fn rep(id: &str, n: u32, status: TaskStatus) -> TaskRow {
        let mut r = TaskRecord::new(
            TaskId::parse(&format!("{id}/rep-{n}")).unwrap(),
            String::new(),
            String::new(),
            ShapeName::RecordedPlan,
            SessionType::FollowerSession,
            String::new(),
        );
        r.repeat = Some(n);
        r.status = status;
        TaskRow::of(&r)
    }

    #[test]
    fn rates_and_flakiness() {
        use TaskStatus::{Failed, Passed};
        let records = [
            rep("a", 1, Passed),
            rep("a", 2, Failed),
            rep("a", 3, Passed),
            rep("b", 1, Passed),
            rep("b", 2, Passed),
            rep("c", 1, Failed),
        ];
        let rates = rates(records.iter());
        let a = &rates[0];
        assert_eq!(
            (
                a.id.as_str(),
                a.runs,
                a.passed,
                a.flaky,
                a.pass_at_k,
                a.pass_all_k
            ),
            ("a", 3, 2, true, true, false)
        );
        assert!((a.pass_rate - 2.0 / 3.0).abs() < 1e-9);
        assert!(!rates[1].flaky && rates[1].pass_all_k);
        assert!(!rates[2].pass_at_k);
        let t = repeat_totals(&rates);
        assert_eq!(t.flaky, vec![TaskId::parse("a").unwrap()]);
        assert_eq!((t.pass_at_k, t.pass_all_k), (0.6667, 0.3333));
        assert_eq!(t.pass_at_1, 0.5556);
        // a: 2 of 3 (variance 1/3), b: 2 of 2 (0); c ran once and has none.
        assert_eq!(t.mean_task_variance, Some(0.1667));
    }

    #[test]
    fn a_run_without_repeats_rates_each_task_once() {
        let mut r = TaskRecord::new(
            TaskId::parse("x/y").unwrap(),
            String::new(),
            String::new(),
            ShapeName::RecordedPlan,
            SessionType::FollowerSession,
            String::new(),
        );
        r.status = TaskStatus::Passed;
        let rates = rates([&TaskRow::of(&r)]);
        assert_eq!(
            (rates[0].id.as_str(), rates[0].runs, rates[0].pass_rate),
            ("x/y", 1, 1.0)
        );
    }
}
