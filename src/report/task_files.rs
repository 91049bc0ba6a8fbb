//! One task's files (design.md §5): `status.json` at every state change, `task.log` and
//! `response.log` line by line, and `output.md`, `plan.json`, `evaluation.log` at the
//! end. When a task finishes, `status.json` is written last, so a task is final on disk
//! only once all its other files are.

use std::path::Path;

use super::atomic::{append_line, remove_stale_temps, write_atomic, write_json};
use super::trajectory;
use crate::event::{LogLine, TaskFinished};
use crate::layout::RunLayout;
use crate::record::{StepRecord, TaskRecord};
use crate::task::TaskId;
use crate::units::Timestamp;

/// Files of an attempt that move to `attempts/N/` when the next attempt starts.
const ATTEMPT_FILES: &[&str] = &[
    "response.log",
    "task.log",
    "output.md",
    "evaluation.log",
    "plan.json",
];
/// Every file of a task folder that is replaced atomically.
const ATOMIC_FILES: &[&str] = &["status.json", "output.md", "evaluation.log", "plan.json"];

/// An attempt starts: the previous attempt's files move to `attempts/N/` (or a stale
/// first attempt's are cleared), and `status.json` says `running`.
pub(super) fn started(layout: &RunLayout, record: &TaskRecord) -> Result<(), String> {
    let dir = layout.task_dir(&record.id);
    std::fs::create_dir_all(&dir).map_err(|e| describe(&dir, &e))?;
    remove_stale_temps(&dir, ATOMIC_FILES);
    let previous = record.attempt_count().saturating_sub(1);
    for name in ATTEMPT_FILES {
        let path = dir.join(name);
        if !path.exists() {
            continue;
        }
        let moved = if previous > 0 {
            let kept = dir.join("attempts").join(previous.to_string());
            std::fs::create_dir_all(&kept).and_then(|()| std::fs::rename(&path, kept.join(name)))
        } else {
            std::fs::remove_file(&path)
        };
        moved.map_err(|e| describe(&path, &e))?;
    }
    // Journaled before the attempt runs: a crash at any later moment finds it.
    status(layout, record)
}

/// A line of `task.log`.
pub(super) fn log_line(layout: &RunLayout, id: &TaskId, line: &LogLine) -> Result<(), String> {
    let path = layout.task_file(id, "task.log");
    let level = line.level.as_str();
    let text = format!(
        "{} {level:<5} {}",
        line.at,
        line.message.replace('\n', "\n    ")
    );
    append_line(&path, &text).map_err(|e| describe(&path, &e))
}

/// A line of `response.log`.
pub(super) fn step(layout: &RunLayout, id: &TaskId, step: &StepRecord) -> Result<(), String> {
    let path = layout.task_file(id, "response.log");
    let line = serde_json::to_string(step).map_err(|e| e.to_string())?;
    append_line(&path, &line).map_err(|e| describe(&path, &e))
}

/// `status.json`.
pub(super) fn status(layout: &RunLayout, record: &TaskRecord) -> Result<(), String> {
    let path = layout.status(&record.id);
    write_json(&path, record).map_err(|e| describe(&path, &e))
}

/// A task's final files, `status.json` last.
pub(super) fn finished(layout: &RunLayout, f: &TaskFinished) -> Result<(), String> {
    let dir = layout.task_dir(&f.record.id);
    std::fs::create_dir_all(&dir).map_err(|e| describe(&dir, &e))?;
    let mut errors = Vec::new();
    if !f.problems.is_empty() {
        for name in ATTEMPT_FILES {
            let _ = std::fs::remove_file(dir.join(name));
        }
        let log = dir.join("task.log");
        for p in &f.problems {
            let line = format!(
                "{} ERROR {}",
                Timestamp::now(),
                p.to_string().replace('\n', "\n    ")
            );
            if let Err(e) = append_line(&log, &line) {
                errors.push(describe(&log, &e));
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
    if let Err(e) = status(layout, &f.record) {
        errors.push(e);
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors.join("; "))
    }
}

pub(super) fn describe(path: &Path, e: &std::io::Error) -> String {
    format!("cannot write {}: {e}", path.display())
}
