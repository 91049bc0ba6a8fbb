//! The result files of a run, written live (design.md §5). Per-task files go to the
//! writer lanes as events arrive; run-level files (`run.json`, `tasks_status.json`,
//! `summary.*`) are written here, from the records, only after the lanes have caught
//! up — so they never claim more than the tasks' own files say.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::lanes::Lanes;
use super::log_line::log_line;
use super::rows::Rows;
use crate::event::{Event, Level, LogLine, RunFinished, RunStarted, TaskFinished};
use crate::record::TaskRow;
use crate::render::{Overview, Totals, task_pages, tasks_status, write_summaries};
use crate::rundir::layout::RUN_FILES;
use crate::rundir::{
    Committer, FileError, FileErrors, FinalFiles, RunLayout, TaskFiles, remove_stale_temps,
    write_json,
};
use crate::task::TaskId;
use crate::units::Timestamp;

/// The lines of a task's `task.log` and `response.log` not written yet.
#[derive(Default)]
struct Lines {
    log: Vec<String>,
    steps: Vec<Arc<crate::record::StepRecord>>,
}

/// How often, at most, `tasks_status.json` is rewritten while a run goes on.
const TASKS_STATUS_EVERY: Duration = Duration::from_secs(1);
/// How many times as long as its last rewrite took (waiting for the tasks' files, then
/// writing one entry per task) `tasks_status.json` waits before the next: in a large run
/// it is rewritten less often, so that it never costs the reporter more than a twentieth
/// of its time.
const TASKS_STATUS_SPACING: u32 = 20;
/// Writer lanes: the work is small writes (the disk is waited for by the committer).
const LANES: usize = 2;

/// Writes a run's result files as its events arrive.
pub(crate) struct ResultFiles {
    layout: RunLayout,
    lanes: Lanes,
    /// Puts finished tasks' `status.json` in place once their files are durable.
    committer: Arc<Committer>,
    /// The run as started.
    run: Option<RunStarted>,
    /// Each task's latest record, as the run-level files read it.
    records: Rows,
    /// Lines held back per task: written together with the task's next file (its end,
    /// a retry) or at the next tick, so that a task's lines cost one job, not one each.
    lines: std::collections::HashMap<TaskId, Lines>,
    /// When `tasks_status.json` may be rewritten next.
    tasks_status_due: Option<Instant>,
    /// The running attempts' records, to rewrite when one is given its device.
    running: std::collections::HashMap<TaskId, crate::record::TaskRecord>,
    errors: Vec<String>,
}

impl ResultFiles {
    /// Result files for the run dir at `layout`.
    pub(crate) fn new(layout: RunLayout) -> Self {
        Self {
            records: Rows::spooled_in(Some(layout.root())),
            layout,
            lanes: Lanes::new(LANES),
            committer: Arc::new(Committer::start()),
            run: None,
            lines: std::collections::HashMap::new(),
            tasks_status_due: None,
            running: std::collections::HashMap::new(),
            errors: Vec::new(),
        }
    }

    /// Files that could not be written, in words.
    pub(crate) fn errors(&self) -> Vec<String> {
        let mut all = self.errors.clone();
        all.extend(self.records.problems());
        all.extend(self.lanes.errors());
        all.extend(self.committer.errors());
        all
    }

    /// The files of `id`, for a lane job.
    fn task_files(&self, id: &TaskId) -> TaskFiles {
        TaskFiles(self.layout.task(id))
    }

    /// Writes what `event` changes.
    pub(crate) fn handle(&mut self, event: &Event) {
        match event {
            Event::RunStarted(r) => {
                self.records.place_by(Arc::clone(&r.selection));
                self.run = Some((**r).clone());
                let result = self.run_started(r);
                self.keep(result);
            }
            Event::TasksKept(rows) => self.records.insert_all(rows),
            Event::TaskStarted(record) => self.task_started(record),
            Event::TaskLog { id, line } => {
                self.lines
                    .entry(id.clone())
                    .or_default()
                    .log
                    .push(log_line(line));
            }
            Event::StepFinished { id, step } => {
                self.lines
                    .entry(id.clone())
                    .or_default()
                    .steps
                    .push(Arc::clone(step));
            }
            Event::TaskOnDevice { id, device } => self.task_on_device(id, device),
            Event::TaskRetrying { record, .. } => self.task_retrying(record),
            Event::TaskFinished(f) if f.unstarted => {
                self.records.insert(&TaskRow::of(&f.record));
            }
            Event::TaskFinished(f) => self.task_finished(f),
            Event::Devices {
                news: Some(news), ..
            } => {
                let path = self.layout.file(crate::rundir::layout::DEVICES_LOG);
                let line = format!(
                    "{} {:<5} {}",
                    crate::units::Timestamp::now(),
                    news.level.as_str(),
                    news.text
                );
                let result = crate::rundir::append_line(&path, &line)
                    .map_err(|e| FileError::write(&path, e));
                self.keep(result);
            }
            Event::Tick => self.write_held_lines(),
            Event::Stopping { .. } | Event::LlmLoad(_) | Event::Devices { .. } => {}
            Event::RunFinished(f) => {
                self.write_held_lines();
                self.flush();
                let result = self.run_finished(f);
                self.keep(result);
            }
        }
    }

    /// An attempt began: its running status, after the lines of the attempt before.
    fn task_started(&mut self, record: &crate::record::TaskRecord) {
        self.records.insert(&TaskRow::of(record));
        self.running.insert(record.id.clone(), record.clone());
        // Lines still held belong to the attempt before (its files move now).
        self.after_held_lines(record.clone(), TaskFiles::attempt_started);
    }

    /// A running attempt was given its device: the running status names it at once, not
    /// when the attempt ends.
    fn task_on_device(&mut self, id: &TaskId, device: &str) {
        if let Some(record) = self.running.get_mut(id)
            && let Some(attempt) = record.attempts.last_mut()
        {
            attempt.device = Some(device.to_string());
            let record = record.clone();
            let files = self.task_files(id);
            self.lanes
                .submit(id, Box::new(move || Ok(files.status(&record)?)));
        }
    }

    /// An attempt ended and another follows: its lines and its status.
    fn task_retrying(&mut self, record: &crate::record::TaskRecord) {
        self.running.remove(&record.id);
        self.after_held_lines(record.clone(), TaskFiles::status);
    }

    /// Hands the task's held-back lines to its lane, and then `write` of `record`.
    fn after_held_lines(
        &mut self,
        record: crate::record::TaskRecord,
        write: fn(&TaskFiles, &crate::record::TaskRecord) -> Result<(), FileError>,
    ) {
        let files = self.task_files(&record.id);
        let lines = self.lines.remove(&record.id);
        let id = record.id.clone();
        self.lanes.submit(
            &id,
            Box::new(move || {
                write_lines(&files, lines)?;
                Ok(write(&files, &record)?)
            }),
        );
    }

    /// A task ended: its lines and files, its status committed once they are durable;
    /// `tasks_status.json` when it is due.
    fn task_finished(&mut self, f: &Arc<TaskFinished>) {
        self.running.remove(&f.record.id);
        self.records.insert(&TaskRow::of(&f.record));
        let files = self.task_files(&f.record.id);
        let lines = self.lines.remove(&f.record.id);
        let f = Arc::clone(f);
        let committer = Arc::clone(&self.committer);
        self.lanes.submit(
            &f.record.id.clone(),
            Box::new(move || {
                let mut errors = FileErrors::default();
                if let Err(e) = write_lines(&files, lines) {
                    errors.extend(e);
                }
                let (pending, written) = task_finished(&files, &f);
                if let Err(e) = written {
                    errors.extend(e);
                }
                let written = errors.into_result();
                if let Some(pending) = pending {
                    committer.commit(pending);
                }
                written
            }),
        );
        if self.tasks_status_due.is_none_or(|t| Instant::now() >= t) {
            let began = Instant::now();
            self.flush();
            let result = self.write_tasks_status();
            self.keep(result);
            let spacing = began.elapsed() * TASKS_STATUS_SPACING;
            self.tasks_status_due = Some(began + spacing.max(TASKS_STATUS_EVERY));
        }
    }

    /// Hands every task's held-back lines to its lane.
    fn write_held_lines(&mut self) {
        for (id, lines) in std::mem::take(&mut self.lines) {
            let files = self.task_files(&id);
            self.lanes
                .submit(&id, Box::new(move || write_lines(&files, Some(lines))));
        }
    }

    /// Waits until every task file queued so far is written and committed, so that the
    /// run-level files written next claim no more than the tasks' own.
    fn flush(&self) {
        self.lanes.flush();
        self.committer.flush();
    }

    fn keep<E: ToString>(&mut self, result: Result<(), E>) {
        if let Err(e) = result {
            self.errors.push(e.to_string());
        }
    }

    fn run_started(&self, r: &RunStarted) -> Result<(), FileError> {
        let root = self.layout.root();
        std::fs::create_dir_all(root).map_err(|e| FileError::write(root, e))?;
        remove_stale_temps(root, RUN_FILES);
        // Serialized as it is written (a tree of every id was the largest allocation of
        // a resumed run).
        #[derive(serde::Serialize)]
        struct Selection<'a> {
            shard: Option<String>,
            tasks: &'a [crate::task::TaskId],
        }
        let selection = Selection {
            shard: r.shard.map(|s| s.to_string()),
            tasks: &r.selection,
        };
        let path = self.layout.selection();
        write_json(&path, &selection).map_err(|e| FileError::write(&path, e))?;
        self.write_run_json(None)
    }

    fn run_finished(&mut self, f: &RunFinished) -> Result<(), FileErrors> {
        let name = self
            .run
            .as_ref()
            .map(|r| r.name.clone())
            .unwrap_or_default();
        let mut errors = FileErrors::default();
        let overview = Overview::of(&self.records);
        let run = self
            .run
            .as_ref()
            .map(|r| run_json(r, Some((f, &overview.totals))));
        if let Err(e) = write_summaries(&self.layout, &name, run.as_ref(), &self.records, &overview)
        {
            errors.extend(e);
        }
        // The runner's syncs counted to the end: the last commits and summaries, and
        // the two of `run.json` itself.
        let mut f = f.clone();
        if let Some(runner) = &mut f.runner {
            runner.disk_syncs = crate::resources::disk_syncs() + 2;
        }
        errors.keep(self.write_run_json(Some((&f, &overview.totals))));
        errors.into_result()
    }

    fn write_tasks_status(&self) -> Result<(), FileError> {
        let path = self.layout.tasks_status();
        write_json(&path, &tasks_status(&self.records)).map_err(|e| FileError::write(&path, e))
    }

    /// `run.json`; once finished, with how the run ended and its totals.
    fn write_run_json(&self, finished: Option<(&RunFinished, &Totals)>) -> Result<(), FileError> {
        let Some(run) = &self.run else { return Ok(()) };
        let path = self.layout.run_json();
        write_json(&path, &run_json(run, finished)).map_err(|e| FileError::write(&path, e))
    }
}

/// `run.json`: the run as started, and once finished, how it ended and its totals.
fn run_json(run: &RunStarted, ended: Option<(&RunFinished, &Totals)>) -> Value {
    let finished = ended.map(|(f, _)| f);
    let state = match finished {
        None => "running",
        Some(f) if f.interrupted => "interrupted",
        Some(f) if f.stopped.is_some() => "stopped",
        Some(_) => "finished",
    };
    json!({
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
        "totals": ended.map(|(_, totals)| totals),
        "runner": finished.and_then(|f| f.runner),
        "llm": finished.and_then(|f| f.llm),
        "config": run.config,
    })
}

/// Appends a task's held-back lines to its `task.log` and `response.log`.
fn write_lines(files: &TaskFiles, lines: Option<Lines>) -> Result<(), FileErrors> {
    let Some(lines) = lines else { return Ok(()) };
    let mut errors = FileErrors::default();
    if !lines.log.is_empty() {
        errors.keep(files.log_lines(&lines.log));
    }
    if !lines.steps.is_empty() {
        let rendered: Result<Vec<String>, FileError> = lines
            .steps
            .iter()
            .map(|step| {
                serde_json::to_string(&**step).map_err(|e| FileError::Render(e.to_string()))
            })
            .collect();
        errors.keep(rendered.and_then(|lines| files.step_lines(&lines)));
    }
    errors.into_result()
}

/// A task's final files: its problems (for a task file that could not run), its
/// evaluation, plan and trajectory, and its record staged to be committed.
fn task_finished(
    files: &TaskFiles,
    f: &TaskFinished,
) -> (Option<crate::rundir::Pending>, Result<(), FileErrors>) {
    let problem_lines: Vec<String> = f
        .problems
        .iter()
        .map(|p| {
            log_line(&LogLine {
                at: Timestamp::now(),
                level: Level::Error,
                message: p.to_string(),
            })
        })
        .collect();
    let pages = task_pages(&f.record, &f.trajectory, f.evaluation.as_ref(), &f.problems);
    files.finished(&FinalFiles {
        record: &f.record,
        problem_lines: &problem_lines,
        evaluation_line: f
            .evaluation
            .as_ref()
            .map(|e| e.log_line(&f.record.request).to_string()),
        plan: f.plan.as_ref(),
        pages: &pages,
    })
}
