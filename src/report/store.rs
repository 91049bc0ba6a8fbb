//! The result files of a run (design.md §5), written as events arrive. Each task's
//! `status.json` is written atomically at every state change and written last when a
//! task finishes, so a task is final on disk only once all its files are. Run-level
//! summaries are rebuilt from the records.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::json;

use super::atomic::{append_line, write_atomic, write_json};
use super::summary;
use super::trajectory;
use crate::event::{Event, LogLine, RunFinished, RunStarted, TaskFinished};
use crate::layout::RunLayout;
use crate::record::{StepRecord, TaskRecord};
use crate::task::TaskId;

/// Files of an attempt that move to `attempts/N/` when the next attempt starts.
const ATTEMPT_FILES: &[&str] = &[
    "response.log",
    "task.log",
    "output.md",
    "evaluation.log",
    "plan.json",
];
/// How often `tasks_status.json` is rewritten while a run goes on.
const TASKS_STATUS_EVERY: Duration = Duration::from_secs(1);

/// Writes result files.
pub struct Store {
    layout: RunLayout,
    run: Option<RunStarted>,
    records: BTreeMap<TaskId, TaskRecord>,
    tasks_status_written: Option<Instant>,
    errors: Vec<String>,
}

impl Store {
    /// A store for the run dir at `layout`.
    pub fn new(layout: RunLayout) -> Self {
        Self {
            layout,
            run: None,
            records: BTreeMap::new(),
            tasks_status_written: None,
            errors: Vec::new(),
        }
    }

    /// Files that could not be written, in words.
    pub fn errors(&self) -> &[String] {
        &self.errors
    }

    /// Writes what `event` changes.
    pub fn handle(&mut self, event: &Event) {
        let result = match event {
            Event::RunStarted(r) => self.run_started(r),
            Event::TaskSkipped(record) => {
                self.records.insert(record.id.clone(), (**record).clone());
                Ok(())
            }
            Event::TaskStarted(record) => self.task_started(record),
            Event::TaskLog { id, line } => self.log_line(id, line),
            Event::StepFinished { id, step } => self.step(id, step),
            Event::TaskRetrying { record, .. } => self.status(record),
            Event::TaskFinished(f) => self.task_finished(f),
            Event::Stopping { .. } => Ok(()),
            Event::RunFinished(f) => self.run_finished(f),
        };
        if let Err(e) = result {
            self.errors.push(e);
        }
    }

    fn run_started(&mut self, r: &RunStarted) -> Result<(), String> {
        std::fs::create_dir_all(self.layout.root())
            .map_err(|e| describe(self.layout.root(), &e))?;
        self.run = Some(r.clone());
        self.write_run_json(None)
    }

    fn task_started(&mut self, record: &TaskRecord) -> Result<(), String> {
        let dir = self.layout.task_dir(&record.id);
        std::fs::create_dir_all(&dir).map_err(|e| describe(&dir, &e))?;
        let previous = record.attempt_count().saturating_sub(1);
        for name in ATTEMPT_FILES {
            let path = dir.join(name);
            if !path.exists() {
                continue;
            }
            let moved = if previous > 0 {
                let kept = dir.join("attempts").join(previous.to_string());
                std::fs::create_dir_all(&kept)
                    .and_then(|()| std::fs::rename(&path, kept.join(name)))
            } else {
                std::fs::remove_file(&path)
            };
            moved.map_err(|e| describe(&path, &e))?;
        }
        self.records.insert(record.id.clone(), record.clone());
        self.status(record)
    }

    fn log_line(&self, id: &TaskId, line: &LogLine) -> Result<(), String> {
        let path = self.layout.task_file(id, "task.log");
        let level = serde_json::to_value(line.level)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default();
        let text = format!(
            "{} {level:<5} {}",
            line.at,
            line.message.replace('\n', "\n    ")
        );
        append_line(&path, &text).map_err(|e| describe(&path, &e))
    }

    fn step(&self, id: &TaskId, step: &StepRecord) -> Result<(), String> {
        let path = self.layout.task_file(id, "response.log");
        let line = serde_json::to_string(step).map_err(|e| e.to_string())?;
        append_line(&path, &line).map_err(|e| describe(&path, &e))
    }

    fn status(&self, record: &TaskRecord) -> Result<(), String> {
        let path = self.layout.status(&record.id);
        write_json(&path, record).map_err(|e| describe(&path, &e))
    }

    fn task_finished(&mut self, f: &TaskFinished) -> Result<(), String> {
        let id = &f.record.id;
        let dir = self.layout.task_dir(id);
        std::fs::create_dir_all(&dir).map_err(|e| describe(&dir, &e))?;
        let mut errors = Vec::new();
        if !f.problems.is_empty() {
            for name in ATTEMPT_FILES {
                let _ = std::fs::remove_file(dir.join(name));
            }
            for p in &f.problems {
                let line = format!(
                    "{} ERROR {}",
                    crate::timestamp::Timestamp::now(),
                    p.to_string().replace('\n', "\n    ")
                );
                if let Err(e) = append_line(&dir.join("task.log"), &line) {
                    errors.push(describe(&dir.join("task.log"), &e));
                }
            }
        }
        if let Some(e) = &f.evaluation {
            let path = dir.join("evaluation.log");
            let line = format!("{}\n", e.log_line(&f.record.request));
            if let Err(err) = write_atomic(&path, line.as_bytes()) {
                errors.push(describe(&path, &err));
            }
        }
        if let Some(plan) = &f.plan {
            let path = dir.join("plan.json");
            if let Err(e) = write_json(&path, plan) {
                errors.push(describe(&path, &e));
            }
        }
        let md = trajectory::render(&f.record, &f.trajectory, f.evaluation.as_ref(), &f.problems);
        let path = dir.join("output.md");
        if let Err(e) = write_atomic(&path, md.as_bytes()) {
            errors.push(describe(&path, &e));
        }
        // Last: the task is final on disk only once everything else is written.
        if let Err(e) = self.status(&f.record) {
            errors.push(e);
        }
        self.records.insert(id.clone(), f.record.clone());
        if self
            .tasks_status_written
            .is_none_or(|t| t.elapsed() >= TASKS_STATUS_EVERY)
        {
            if let Err(e) = self.write_tasks_status() {
                errors.push(e);
            }
        }
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors.join("; "))
        }
    }

    fn run_finished(&mut self, f: &RunFinished) -> Result<(), String> {
        let mut errors = Vec::new();
        let records = self.records.values();
        let path = self.layout.summary_json();
        if let Err(e) = write_json(&path, &summary::summary_json(records.clone())) {
            errors.push(describe(&path, &e));
        }
        let path = self.layout.summary_csv();
        if let Err(e) = summary::write_summary_csv(&path, records) {
            errors.push(describe(&path, &e));
        }
        if let Err(e) = self.write_tasks_status() {
            errors.push(e);
        }
        if let Err(e) = self.write_run_json(Some(f)) {
            errors.push(e);
        }
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors.join("; "))
        }
    }

    fn write_tasks_status(&mut self) -> Result<(), String> {
        self.tasks_status_written = Some(Instant::now());
        let path = self.layout.tasks_status();
        write_json(&path, &summary::tasks_status(self.records.values()))
            .map_err(|e| describe(&path, &e))
    }

    fn write_run_json(&self, finished: Option<&RunFinished>) -> Result<(), String> {
        let Some(run) = &self.run else { return Ok(()) };
        let state = match finished {
            None => "running",
            Some(f) if f.interrupted => "interrupted",
            Some(f) if f.stopped.is_some() => "stopped",
            Some(_) => "finished",
        };
        let value = json!({
            "tool": "ufo-batch",
            "version": env!("CARGO_PKG_VERSION"),
            "name": run.name,
            "state": state,
            "invocation": run.previous_invocations + 1,
            "started": run.started,
            "finished": finished.map(|f| f.finished),
            "stopped": finished.and_then(|f| f.stopped.clone()),
            "jobs": run.jobs,
            "tasks_selected": run.total,
            "tasks_run": run.to_run,
            "totals": finished.map(|_| summary::totals(self.records.values())),
            "config": run.config,
        });
        let path = self.layout.run_json();
        write_json(&path, &value).map_err(|e| describe(&path, &e))
    }
}

fn describe(path: &Path, e: &std::io::Error) -> String {
    format!("cannot write {}: {e}", path.display())
}
