//! The result files of a run (design.md §5). Per-task files go to the writer lanes as
//! events arrive; run-level files (`run.json`, `tasks_status.json`, `summary.*`) are
//! written here, from the records, only after the lanes have caught up — so they never
//! claim more than the tasks' own files say.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;

use super::atomic::write_json;
use super::rebuild;
use super::summary;
use super::task_files::{self, describe};
use super::writers::Writers;
use crate::event::{Event, RunFinished, RunStarted};
use crate::layout::RunLayout;
use crate::record::TaskRecord;
use crate::task::TaskId;

/// How often `tasks_status.json` is rewritten while a run goes on.
const TASKS_STATUS_EVERY: Duration = Duration::from_secs(1);
/// Writer lanes: enough to overlap fsyncs; the work is waiting, not computing.
const LANES: usize = 4;

/// Writes result files.
pub struct Store {
    layout: RunLayout,
    writers: Writers,
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
            writers: Writers::new(LANES),
            run: None,
            records: BTreeMap::new(),
            tasks_status_written: None,
            errors: Vec::new(),
        }
    }

    /// Files that could not be written, in words.
    pub fn errors(&self) -> Vec<String> {
        let mut all = self.errors.clone();
        all.extend(self.writers.errors());
        all
    }

    /// Writes what `event` changes.
    pub fn handle(&mut self, event: &Event) {
        let layout = self.layout.clone();
        match event {
            Event::RunStarted(r) => {
                let result =
                    std::fs::create_dir_all(layout.root()).map_err(|e| describe(layout.root(), &e));
                self.run = Some((**r).clone());
                super::atomic::remove_stale_temps(layout.root(), crate::layout::RUN_FILES);
                let selection =
                    json!({"shard": r.shard.map(|s| s.to_string()), "tasks": r.selection});
                let path = layout.selection();
                let result = result
                    .and_then(|()| write_json(&path, &selection).map_err(|e| describe(&path, &e)))
                    .and_then(|()| self.write_run_json(None));
                self.keep(result);
            }
            Event::TaskSkipped(record) => {
                self.records.insert(record.id.clone(), (**record).clone());
            }
            Event::TaskStarted(record) => {
                self.records.insert(record.id.clone(), (**record).clone());
                let record = (**record).clone();
                self.writers.submit(
                    &record.id.clone(),
                    Box::new(move || task_files::started(&layout, &record)),
                );
            }
            Event::TaskLog { id, line } => {
                let (id2, line) = (id.clone(), line.clone());
                self.writers.submit(
                    id,
                    Box::new(move || task_files::log_line(&layout, &id2, &line)),
                );
            }
            Event::StepFinished { id, step } => {
                let (id2, step) = (id.clone(), Arc::clone(step));
                self.writers
                    .submit(id, Box::new(move || task_files::step(&layout, &id2, &step)));
            }
            Event::TaskRetrying { record, .. } => {
                let record = (**record).clone();
                self.writers.submit(
                    &record.id.clone(),
                    Box::new(move || task_files::status(&layout, &record)),
                );
            }
            Event::TaskFinished(f) => {
                self.records.insert(f.record.id.clone(), f.record.clone());
                let f = Arc::clone(f);
                self.writers.submit(
                    &f.record.id.clone(),
                    Box::new(move || task_files::finished(&layout, &f)),
                );
                if self
                    .tasks_status_written
                    .is_none_or(|t| t.elapsed() >= TASKS_STATUS_EVERY)
                {
                    self.writers.flush();
                    let result = self.write_tasks_status();
                    self.keep(result);
                }
            }
            Event::Stopping { .. } => {}
            Event::RunFinished(f) => {
                self.writers.flush();
                let result = self.run_finished(f);
                self.keep(result);
            }
        }
    }

    fn keep(&mut self, result: Result<(), String>) {
        if let Err(e) = result {
            self.errors.push(e);
        }
    }

    fn run_finished(&mut self, f: &RunFinished) -> Result<(), String> {
        let name = self
            .run
            .as_ref()
            .map(|r| r.name.clone())
            .unwrap_or_default();
        let records: Vec<&TaskRecord> = self.records.values().collect();
        let summaries = rebuild::write_summaries(&self.layout, &name, &records);
        let run_json = self.write_run_json(Some(f));
        match (summaries, run_json) {
            (Ok(()), Ok(())) => Ok(()),
            (Err(e), Ok(())) | (Ok(()), Err(e)) => Err(e),
            (Err(a), Err(b)) => Err(format!("{a}; {b}")),
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
            "sandbox": run.sandbox,
            "shard": run.shard.map(|s| s.to_string()),
            "tasks_selected": run.total,
            "tasks_run": run.to_run,
            "totals": finished.map(|_| summary::totals(self.records.values())),
            "runner": finished.and_then(|f| f.runner),
            "config": run.config,
        });
        let path = self.layout.run_json();
        write_json(&path, &value).map_err(|e| describe(&path, &e))
    }
}
