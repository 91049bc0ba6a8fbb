//! `ufo-batch report RUN_DIR`: re-renders every derived file of a run dir from the
//! stored task results — each task's `output.md` and `task.html` (from its `status.json`,
//! `response.log` and `evaluation.log`), then `summary.*`, `tasks_status.json`,
//! `junit.xml`, `report.md`, `report.html` and the totals in `run.json`. Use it after a merge, after a
//! crash, or after upgrading ufo-batch.

use std::path::Path;

use super::FinishedError;
use super::missing::{Batch, Ended, whole_batch};
use crate::record::ShapeName;
use crate::record::{Evaluation, StepRecord, TaskRow};
use crate::regular_file::{FileAccessError, read_text};
use crate::render::{Overview, Totals, task_pages, write_summaries};
use crate::rundir::layout::TaskDir;
use crate::rundir::layout::{EVALUATION_LOG, RESPONSE_LOG};
use crate::rundir::{
    FileError, RunDirError, RunLayout, RunLock, STORED_FILE_LIMIT, StoredTask, TaskFiles,
    read_run_json, write_json,
};
use crate::units::Timestamp;

/// What `report` did.
#[derive(Debug)]
pub(crate) struct Rerendered {
    /// Tasks found.
    pub(crate) tasks: usize,
    /// Trajectories rewritten.
    pub(crate) trajectories: usize,
    /// Files that could not be read or written, in words.
    pub(crate) problems: Vec<String>,
    /// The totals now in the summaries.
    pub(crate) totals: Totals,
}

/// Re-renders the run dir at `run_dir`: refused while a runner works in it.
pub(crate) fn rerender(run_dir: &Path) -> Result<Rerendered, FinishedError> {
    let Some(mut run) = read_run_json(run_dir) else {
        return Err(FinishedError::NotRunDir(run_dir.to_path_buf()));
    };
    let layout = RunLayout::new(run_dir);
    let _lock = RunLock::acquire(&layout).map_err(|e| match e {
        RunDirError::Locked { dir, holder } => FinishedError::Busy { dir, holder },
        other => FinishedError::Read {
            path: run_dir.to_path_buf(),
            source: std::io::Error::other(other.to_string()),
        },
    })?;
    // With the lock ours, no runner works here: a run that never wrote its end was cut
    // short, and what it had not finished is unfinished (a resume runs it), not running.
    let ended = Ended::of(&run);
    if ended == Ended::Killed {
        run["state"] = "interrupted".into();
    }
    let Batch {
        stored,
        absent,
        unreadable,
    } = whole_batch(run_dir, &ended);
    let mut problems: Vec<String> = unreadable.iter().map(ToString::to_string).collect();
    let mut trajectories = 0;
    for task in &stored {
        match rerender_trajectory(task) {
            Ok(true) => trajectories += 1,
            Ok(false) => {}
            Err(e) => problems.push(e.to_string()),
        }
    }
    for record in &absent {
        if ended == Ended::Finished {
            problems.push(format!("{}: no result", record.id));
        }
        if let Some(link) = layout.linked_part(&record.id) {
            problems.push(format!(
                "{}: nothing written, as {} is a symbolic link out of the run folder",
                record.id,
                link.display()
            ));
            continue;
        }
        // Its row in report.html links its page, which says so.
        let dir = layout.task(&record.id);
        let written = std::fs::create_dir_all(dir.path())
            .map_err(|e| FileError::write(dir.path(), e))
            .and_then(|()| TaskFiles(dir).pages(&task_pages(record, &[], None, &[])));
        if let Err(e) = written {
            problems.push(e.to_string());
        }
    }
    let mut rows: Vec<TaskRow> = stored.iter().map(|t| TaskRow::of(&t.record)).collect();
    rows.extend(absent.iter().map(TaskRow::of));
    rows.sort_by(|a, b| a.id.cmp(&b.id));
    let name = run["name"]
        .as_str()
        .map_or_else(|| layout.name(), str::to_string);
    let overview = Overview::of(&rows);
    write_summaries(&layout, &name, Some(&run), &rows, &overview)?;
    let totals = overview.totals;
    run["totals"] = serde_json::to_value(&totals).unwrap_or_default();
    run["reported"] = serde_json::to_value(Timestamp::now()).unwrap_or_default();
    let path = layout.run_json();
    write_json(&path, &run).map_err(|e| FileError::write(&path, e))?;
    Ok(Rerendered {
        tasks: rows.len(),
        trajectories,
        problems,
        totals,
    })
}

/// A task's steps (`response.log`) and evaluation (`evaluation.log`) as stored. A log
/// that is there but cannot be read (a FIFO, a link to a device) is an error: rendering
/// it with no steps would lose them.
pub(super) fn stored_trajectory(
    dir: &TaskDir,
) -> Result<(Vec<StepRecord>, Option<Evaluation>), FileError> {
    let log = dir.file(RESPONSE_LOG);
    let text = match read_text(&log, STORED_FILE_LIMIT) {
        Ok(text) => text,
        Err(FileAccessError::NotFound) => String::new(),
        Err(e) => {
            return Err(FileError::Render(format!(
                "{}: cannot be read ({e})",
                log.display()
            )));
        }
    };
    let steps: Vec<StepRecord> = text
        .lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect();
    let evaluation: Option<Evaluation> = read_text(&dir.file(EVALUATION_LOG), STORED_FILE_LIMIT)
        .ok()
        .and_then(|text| {
            text.lines()
                .next()
                .and_then(|l| serde_json::from_str(l).ok())
        });
    Ok((steps, evaluation))
}

/// Rewrites a task's `output.md` from its stored files; false when there is nothing to
/// render from (a task file that never loaded keeps its page).
fn rerender_trajectory(task: &StoredTask) -> Result<bool, FileError> {
    if task.record.shape == ShapeName::Invalid {
        return Ok(false);
    }
    let (steps, evaluation) = stored_trajectory(&task.dir).map_err(|e| {
        FileError::Render(format!(
            "{e}; the task's output.md and task.html are left as they are"
        ))
    })?;
    let pages = task_pages(&task.record, &steps, evaluation.as_ref(), &[]);
    TaskFiles(task.dir.clone()).pages(&pages)?;
    Ok(true)
}
