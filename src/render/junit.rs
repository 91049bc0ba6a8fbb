//! `junit.xml`: one testcase per task for CI dashboards (GitHub, GitLab, Jenkins). The
//! classname is the task's folder; `failed` is a failure carrying the evaluation's
//! reason, `error` and `timeout` are errors carrying the message, `cancelled` is
//! skipped; a task that passed after retries lists its failed attempts as flaky runs
//! (not those the runner's own stop cut short).

use std::time::Duration;

use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestRerun, TestSuite};

use crate::record::{AttemptStatus, TaskRow, TaskStatus};
use crate::rundir::layout::OUTPUT_MD;

/// The JUnit XML of a run named `name`.
#[cfg(test)]
pub(crate) fn junit_xml<'a>(
    name: &str,
    records: impl IntoIterator<Item = &'a TaskRow>,
) -> Result<String, quick_junit::SerializeError> {
    junit_report(name, records).to_string()
}

/// Writes the JUnit XML of a run named `name` to `out`.
pub(crate) fn write_junit<'a>(
    out: &mut dyn std::io::Write,
    name: &str,
    records: impl IntoIterator<Item = &'a TaskRow>,
) -> Result<(), quick_junit::SerializeError> {
    junit_report(name, records).serialize(out)
}

fn junit_report<'a>(name: &str, records: impl IntoIterator<Item = &'a TaskRow>) -> Report {
    let mut report = Report::new(format!("ufo-batch {name}"));
    let mut suite = TestSuite::new(name);
    let mut total = 0.0;
    for r in records {
        total += r.duration_s;
        let mut case = TestCase::new(case_name(r), status(r));
        let class = match r.id.group() {
            "" => name.to_string(),
            group => group.replace('/', "."),
        };
        case.set_classname(class);
        case.set_time(Duration::from_secs_f64(r.duration_s.max(0.0)));
        case.add_property(("output", format!("{}/{OUTPUT_MD}", r.id).as_str()));
        case.add_property(("attempts", r.attempt_count().to_string().as_str()));
        if let Some(c) = r.cost_usd {
            case.add_property(("cost_usd", format!("{c:.6}").as_str()));
        }
        suite.add_test_case(case);
    }
    suite.set_time(Duration::from_secs_f64(total));
    report.add_test_suite(suite);
    report.set_time(Duration::from_secs_f64(total));
    report
}

fn case_name(r: &TaskRow) -> String {
    r.id.as_str()
        .rsplit('/')
        .next()
        .unwrap_or(r.id.as_str())
        .to_string()
}

fn status(r: &TaskRow) -> TestCaseStatus {
    let reason = r.error.clone().unwrap_or_default();
    let non_success = |kind, ty: &str| {
        let mut s = TestCaseStatus::non_success(kind);
        s.set_message(crate::text::first_line(&reason, 500));
        s.set_type(ty);
        s.set_description(reason.clone());
        s
    };
    match r.status {
        TaskStatus::Passed => {
            // An attempt the runner's own stop cut short (interrupted, cancelled) says
            // nothing of the task: it is not a flaky run.
            let flaky_runs = r.attempts[..r.attempts.len().saturating_sub(1)]
                .iter()
                .filter(|a| {
                    !matches!(
                        a.status,
                        AttemptStatus::Interrupted | AttemptStatus::Cancelled
                    )
                })
                .map(|a| {
                    let mut run = TestRerun::new(NonSuccessKind::Error);
                    run.set_message(a.error.clone().unwrap_or_else(|| a.status.to_string()));
                    run
                })
                .collect();
            TestCaseStatus::Success { flaky_runs }
        }
        TaskStatus::Failed => non_success(NonSuccessKind::Failure, "failed"),
        TaskStatus::Error => non_success(NonSuccessKind::Error, "error"),
        TaskStatus::Timeout => non_success(NonSuccessKind::Error, "timeout"),
        TaskStatus::Pending | TaskStatus::Running => {
            non_success(NonSuccessKind::Error, "unfinished")
        }
        TaskStatus::Cancelled => {
            let mut s = TestCaseStatus::skipped();
            s.set_message(reason.clone());
            s
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{AttemptRecord, SessionType, ShapeName, TaskRecord};
    use crate::task::TaskId;
    use crate::units::Timestamp;

    fn attempt(attempt: u32, status: AttemptStatus, error: &str) -> AttemptRecord {
        AttemptRecord {
            attempt,
            started: Timestamp::now(),
            finished: None,
            status,
            error: Some(error.to_string()),
            device: None,
        }
    }

    #[test]
    fn attempts_cut_short_by_the_runner_are_not_flaky_runs() {
        let mut r = TaskRecord::new(
            TaskId::parse("t").unwrap(),
            String::new(),
            String::new(),
            ShapeName::RecordedPlan,
            SessionType::FollowerSession,
            "r".to_string(),
        );
        r.status = TaskStatus::Passed;
        r.attempts = vec![
            attempt(1, AttemptStatus::Interrupted, "the runner stopped"),
            attempt(2, AttemptStatus::Cancelled, "the run was stopped"),
            attempt(3, AttemptStatus::Error, "the disk was full"),
            attempt(4, AttemptStatus::Passed, ""),
        ];
        let xml = junit_xml("run", [&TaskRow::of(&r)]).unwrap();
        assert_eq!(xml.matches("<flakyError").count(), 1, "{xml}");
        assert!(xml.contains("the disk was full"), "{xml}");
        assert!(!xml.contains("the runner stopped"), "{xml}");
    }
}
