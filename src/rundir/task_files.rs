//! One task's files (design.md §5) over its attempts: `status.json` at every state
//! change, `task.log` and `response.log` line by line, and `output.md`, `task.html`,
//! `plan.json`, `evaluation.log` at the end. What goes into the files is decided by the
//! caller; this module decides where and how they are written.
//!
//! Every file is replaced atomically, none waits for the disk but a final
//! `status.json`: when a task finishes, its other files are written and its new
//! `status.json` is staged, and the caller hands it to the group commit (`durable`),
//! which puts it in place once all of them are on disk. So a task is final on disk only
//! once all its other files are. A `running` status needs no sync: losing it to a power
//! cut loses nothing (the task was not final and runs again).

use super::atomic::{
    append_lines, is_stale_temp, json_bytes, remove_stale_temp, stage, write_json,
    write_new_or_replace, write_unsynced,
};
use super::durable::Pending;
use super::error::{FileError, FileErrors};
use super::layout::{
    ATOMIC_TASK_FILES, ATTEMPT_FILES, EVALUATION_LOG, OUTPUT_MD, PLAN_JSON, RESPONSE_LOG,
    TASK_HTML, TASK_LOG, TRAJECTORY_JSON, TaskDir, is_attempt_entry,
};
use crate::record::TaskRecord;

/// `output.md`, and `task.html` (or why it could not be rendered).
pub(crate) struct TaskPages {
    /// The markdown trajectory.
    pub(crate) md: String,
    /// The page.
    pub(crate) html: Result<String, Box<dyn std::error::Error + Send + Sync>>,
    /// The trajectory in ATIF.
    pub(crate) atif: String,
}

/// The final files of a task, rendered.
pub(crate) struct FinalFiles<'a> {
    /// The record (`status.json`), written last.
    pub(crate) record: &'a TaskRecord,
    /// Lines for `task.log` that replace earlier attempts' files (an invalid task file's
    /// problems), if any.
    pub(crate) problem_lines: &'a [String],
    /// The one line of `evaluation.log`.
    pub(crate) evaluation_line: Option<String>,
    /// `plan.json`.
    pub(crate) plan: Option<&'a serde_json::Value>,
    /// `output.md` and `task.html`.
    pub(crate) pages: &'a TaskPages,
}

/// Writes one task's files.
pub(crate) struct TaskFiles(pub(crate) TaskDir);

impl TaskFiles {
    /// An attempt starts: the previous attempt's files move to `attempts/N/` (or a stale
    /// first attempt's are cleared), and `status.json` says `running`.
    pub(crate) fn attempt_started(&self, record: &TaskRecord) -> Result<(), FileError> {
        let dir = self.0.path();
        match std::fs::create_dir(dir) {
            // A new folder: nothing of an earlier attempt to move or clear.
            Ok(()) => return self.status(record),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(_) => std::fs::create_dir_all(dir).map_err(|e| FileError::write(dir, e))?,
        }
        // One look at the folder: temporary files a killed write left, the page of the
        // result this attempt replaces (the moved files keep the rest), and the earlier
        // attempt's files.
        let mut entries = Vec::new();
        for entry in std::fs::read_dir(dir).map_err(|e| FileError::write(dir, e))? {
            let Ok(entry) = entry else { continue };
            let Ok(name) = entry.file_name().into_string() else {
                continue;
            };
            if is_stale_temp(&name, ATOMIC_TASK_FILES) {
                remove_stale_temp(&entry);
            } else if name == TASK_HTML {
                let _ = std::fs::remove_file(entry.path());
            } else if is_attempt_entry(&name) {
                entries.push((name, entry.file_type().is_ok_and(|t| t.is_dir())));
            }
        }
        let previous = record.attempt_count().saturating_sub(1);
        // Earlier files moved away: the status that replaces theirs must be on disk
        // before anything else is, or a power cut could leave their final status with
        // its files gone.
        let moved = !entries.is_empty();
        for (name, is_dir) in entries {
            let path = self.0.file(&name);
            let gone = if previous > 0 {
                let kept = self.0.attempt(previous);
                std::fs::create_dir_all(&kept)
                    .and_then(|()| std::fs::rename(&path, kept.join(&name)))
            } else if is_dir {
                std::fs::remove_dir_all(&path)
            } else {
                std::fs::remove_file(&path)
            };
            gone.map_err(|e| FileError::write(&path, e))?;
        }
        // Journaled before the attempt runs: a crash at any later moment finds it.
        if moved {
            self.status_durably(record)
        } else {
            self.status(record)
        }
    }

    /// A line of `task.log`.
    pub(crate) fn log_line(&self, line: &str) -> Result<(), FileError> {
        self.log_lines(&[line])
    }

    /// Lines of `task.log`, appended together.
    pub(crate) fn log_lines<S: AsRef<str>>(&self, lines: &[S]) -> Result<(), FileError> {
        let path = self.0.file(TASK_LOG);
        append_lines(&path, lines).map_err(|e| FileError::write(&path, e))
    }

    /// Lines of `response.log`, appended together.
    pub(crate) fn step_lines<S: AsRef<str>>(&self, lines: &[S]) -> Result<(), FileError> {
        let path = self.0.file(RESPONSE_LOG);
        append_lines(&path, lines).map_err(|e| FileError::write(&path, e))
    }

    /// `status.json` of a task that is not final (running, or waiting for a retry).
    pub(crate) fn status(&self, record: &TaskRecord) -> Result<(), FileError> {
        let path = self.0.status();
        json_bytes(record)
            .and_then(|bytes| write_unsynced(&path, &bytes))
            .map_err(|e| FileError::write(&path, e))
    }

    /// `status.json`, synced with its folder (a final one outside a run, by `merge`; one
    /// that replaces a moved attempt's).
    pub(crate) fn status_durably(&self, record: &TaskRecord) -> Result<(), FileError> {
        let path = self.0.status();
        write_json(&path, record).map_err(|e| FileError::write(&path, e))
    }

    /// The pages of a final task: `output.md` and `task.html` (both are tried; the
    /// first error is returned).
    pub(crate) fn pages(&self, pages: &TaskPages) -> Result<(), FileError> {
        // Both pages are rebuilt from the task's durable files (`report` does it): they
        // are replaced atomically but cost no fsync.
        self.write_pages(pages, write_unsynced)
    }

    /// The task's pages, each written with `write`.
    fn write_pages(
        &self,
        pages: &TaskPages,
        write: fn(&std::path::Path, &[u8]) -> std::io::Result<()>,
    ) -> Result<(), FileError> {
        let path = self.0.file(OUTPUT_MD);
        let md = write(&path, pages.md.as_bytes()).map_err(|e| FileError::write(&path, e));
        let path = self.0.file(TASK_HTML);
        let html = match &pages.html {
            Ok(html) => write(&path, html.as_bytes()).map_err(|e| FileError::write(&path, e)),
            Err(e) => Err(FileError::Render(format!("{}: {e}", path.display()))),
        };
        let path = self.0.file(TRAJECTORY_JSON);
        let atif = write(&path, pages.atif.as_bytes()).map_err(|e| FileError::write(&path, e));
        md.and(html).and(atif)
    }

    /// A task's final files but `status.json`, and its new `status.json` staged for the
    /// caller to commit (`Committer::commit`), with the files that could not be written
    /// (the status is staged all the same, as the record is what makes a task final;
    /// a status that cannot be staged leaves the task unfinished on disk).
    pub(crate) fn finished(&self, f: &FinalFiles<'_>) -> (Option<Pending>, Result<(), FileErrors>) {
        let mut errors = FileErrors::default();
        let dir = self.0.path();
        // Made when the attempt started, but for a task that never ran (a bad file).
        let made = match std::fs::create_dir(dir) {
            Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => std::fs::create_dir_all(dir),
            _ => Ok(()),
        };
        if let Err(e) = made {
            errors.keep(Err(FileError::write(dir, e)));
            return (None, errors.into_result());
        }
        let mut written = Vec::new();
        if !f.problem_lines.is_empty() {
            for name in ATTEMPT_FILES {
                let _ = std::fs::remove_file(self.0.file(name));
            }
            for line in f.problem_lines {
                errors.keep(self.log_line(line));
            }
        }
        // The status on disk is not this result's until the one staged below is
        // committed, once every file here is on disk; a crash before then leaves the
        // task to be run (or, for a task file that cannot run, written) again: a file
        // new to the folder appears whole (linked in), one already there is replaced.
        let mut unsynced = |name: &str, bytes: std::io::Result<Vec<u8>>| {
            let path = self.0.file(name);
            let result = bytes.and_then(|bytes| write_new_or_replace(&path, &bytes));
            errors.keep(result.map_err(|e| FileError::write(&path, e)));
            written.push(path);
        };
        if let Some(line) = &f.evaluation_line {
            unsynced(EVALUATION_LOG, Ok(format!("{line}\n").into_bytes()));
        }
        if let Some(plan) = f.plan {
            unsynced(PLAN_JSON, json_bytes(plan));
        }
        errors.keep(self.write_pages(f.pages, write_new_or_replace));
        let path = self.0.status();
        let staged = json_bytes(f.record)
            .and_then(|bytes| stage(&path, &bytes))
            .map_err(|e| FileError::write(&path, e));
        let pending = match staged {
            Ok(staged) => {
                written.extend(
                    [
                        TASK_LOG,
                        RESPONSE_LOG,
                        OUTPUT_MD,
                        TASK_HTML,
                        TRAJECTORY_JSON,
                    ]
                    .map(|n| self.0.file(n)),
                );
                Some(Pending { staged, written })
            }
            Err(e) => {
                errors.keep(Err(e));
                None
            }
        };
        (pending, errors.into_result())
    }
}
