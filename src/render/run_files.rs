//! The run-level files derived from task records, rendered and written together:
//! `summary.json`, `summary.csv`, `tasks_status.json`, `report.md`, `report.html` and
//! `junit.xml`.
//! Used at the end of a run, by `merge`, and by `report`.

use std::io::Write;

use super::overview::Overview;
use super::{html, junit, report_md, summary};
use crate::record::RowSource;
use crate::rundir::layout::{
    JUNIT_XML, REPORT_HTML, REPORT_MD, SUMMARY_CSV, SUMMARY_JSON, TASKS_STATUS_JSON,
};
use crate::rundir::{
    FileError, FileErrors, RunLayout, Staged, put_in_place, stage_json, stage_with,
};

/// Writes every run-level file derived from the records of a run named `name` (and its
/// `run.json`, which the page's header shows), whose overview is `overview`. The files
/// are made side by side, each from its own passes over the records.
pub(crate) fn write_summaries(
    layout: &RunLayout,
    name: &str,
    run: Option<&serde_json::Value>,
    records: &dyn RowSource,
    overview: &Overview,
) -> Result<(), FileErrors> {
    let streamed = |file, fill| streamed(layout, file, fill);
    let jobs: Vec<Job<'_>> = vec![
        Box::new(|| {
            json(
                layout,
                SUMMARY_JSON,
                &summary::summary_json(records, overview),
            )
        }),
        streamed(
            SUMMARY_CSV,
            Box::new(|out: &mut dyn Write| {
                summary::write_summary_csv(out, records.rows()).map_err(std::io::Error::other)
            }),
        ),
        Box::new(|| json(layout, TASKS_STATUS_JSON, &summary::tasks_status(records))),
        streamed(
            REPORT_MD,
            Box::new(|out: &mut dyn Write| {
                report_md::write_report_md(out, name, records, overview)
            }),
        ),
        streamed(
            REPORT_HTML,
            Box::new(|out: &mut dyn Write| {
                html::write_report_html(out, name, run, records, overview)
            }),
        ),
        streamed(
            JUNIT_XML,
            Box::new(|out: &mut dyn Write| junit::write_junit(out, name, records)),
        ),
    ];
    let mut errors = FileErrors::default();
    let mut staged = Vec::new();
    for result in crate::parallel::map(&jobs, |job| job()) {
        match result {
            Ok(file) => staged.push(file),
            Err(e) => errors.keep(Err(e)),
        }
    }
    // Each replaces its old version atomically, all made durable together.
    if let Err(e) = put_in_place(staged) {
        errors.extend(e);
    }
    errors.into_result()
}

/// Rendering one run-level file into a temporary file beside its place.
type Job<'a> = Box<dyn Fn() -> Result<Staged, FileError> + Send + Sync + 'a>;

/// What fills a file as it is written.
type Fill<'a> = Box<dyn Fn(&mut dyn Write) -> std::io::Result<()> + Send + Sync + 'a>;

/// Staging `file` of the run dir with what `fill` writes.
fn streamed<'a>(layout: &'a RunLayout, file: &'static str, fill: Fill<'a>) -> Job<'a> {
    Box::new(move || {
        let path = layout.file(file);
        stage_with(&path, &fill).map_err(|e| FileError::write(&path, e))
    })
}

/// Staging `file` of the run dir as `value` in JSON.
fn json(
    layout: &RunLayout,
    file: &str,
    value: &impl serde::Serialize,
) -> Result<Staged, FileError> {
    let path = layout.file(file);
    stage_json(&path, value).map_err(|e| FileError::write(&path, e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{
        AttemptRecord, AttemptStatus, Complete, Inputs, SessionType, ShapeName, TaskRecord,
        TaskRow, TaskStatus,
    };
    use crate::rundir::layout::{
        JUNIT_XML, REPORT_HTML, REPORT_MD, SUMMARY_CSV, SUMMARY_JSON, TASKS_STATUS_JSON,
    };
    use crate::task::TaskId;
    use crate::units::{Timestamp, Usage};

    /// Records of every kind the run-level files tell apart, with every field set.
    fn records() -> Vec<TaskRecord> {
        let attempt = |n, status, error: Option<&str>| AttemptRecord {
            attempt: n,
            started: Timestamp::now(),
            finished: Some(Timestamp::now()),
            status,
            error: error.map(str::to_string),
            device: Some("dev".into()),
        };
        let mut all = Vec::new();
        for (i, (id, status)) in [
            ("a/pass", TaskStatus::Passed),
            ("a/fail", TaskStatus::Failed),
            ("b/err", TaskStatus::Error),
            ("b/slow", TaskStatus::Timeout),
            ("c/cut", TaskStatus::Cancelled),
            ("c/run", TaskStatus::Running),
            ("r/rep-1", TaskStatus::Passed),
            ("r/rep-2", TaskStatus::Failed),
        ]
        .into_iter()
        .enumerate()
        {
            let mut r = TaskRecord::new(
                TaskId::parse(id).unwrap(),
                format!("/tasks/{id}.json"),
                "0123456789abcdef".into(),
                ShapeName::RecordedPlan,
                SessionType::FollowerSession,
                format!("request <b>{id}</b>"),
            );
            r.inputs = Some(Inputs {
                task_file: "0123456789abcdef".into(),
                object: Some("obj".into()),
                settings: Default::default(),
            });
            r.status = status;
            r.tags = vec![format!("tag{}", i % 3)];
            r.repeat = id.starts_with("r/").then(|| i as u32 - 5);
            r.complete = (i % 2 == 0).then_some(Complete::No);
            r.error = (status != TaskStatus::Passed).then(|| format!("why {id}"));
            r.attempts = vec![
                attempt(1, AttemptStatus::Error, Some("flaky")),
                attempt(2, status.into(), r.error.as_deref()),
            ];
            r.started = Some(Timestamp::now());
            r.finished = Some(Timestamp::now());
            r.duration_s = 1.5 * i as f64;
            r.rounds = 2;
            r.steps = i as u32;
            r.round_steps = vec![1, i as u32];
            r.usage = Usage {
                prompt_tokens: 100 * i as u64,
                completion_tokens: 7,
            };
            r.cost_usd = (i != 3).then_some(0.25);
            r.llm.calls = 3;
            r.warnings = vec!["w".into()];
            all.push(r);
        }
        all
    }

    #[test]
    fn every_run_level_file_is_written_from_the_rows_of_the_records() {
        let rows: Vec<TaskRow> = records().iter().map(TaskRow::of).collect();
        let run = serde_json::json!({"name": "n", "started": "2026-01-01T00:00:00Z"});
        let dir = tempfile::tempdir().unwrap();
        let layout = RunLayout::new(dir.path());
        write_summaries(&layout, "n", Some(&run), &rows, &Overview::of(&rows)).unwrap();
        let read = |file| std::fs::read_to_string(layout.file(file)).unwrap();
        for file in [
            SUMMARY_JSON,
            SUMMARY_CSV,
            TASKS_STATUS_JSON,
            REPORT_MD,
            REPORT_HTML,
            JUNIT_XML,
        ] {
            assert!(read(file).contains("a/fail"), "{file}");
        }
        let summary: serde_json::Value = serde_json::from_str(&read(SUMMARY_JSON)).unwrap();
        assert_eq!(summary["totals"]["total"], 8);
        assert_eq!(summary["totals"]["unfinished"], 1);
        assert_eq!(summary["totals"]["cost_usd"], serde_json::Value::Null);
        assert_eq!(summary["repeats"]["tasks"][6]["id"], "r", "{summary}");
        assert_eq!(summary["repeats"]["tasks"][6]["runs"], 2, "{summary}");
        assert_eq!(read(SUMMARY_CSV).lines().count(), 9);
        let junit = read(JUNIT_XML);
        assert!(junit.contains("tests=\"8\""), "{junit}");
        assert!(junit.contains("why b/err"), "{junit}");
    }
}
