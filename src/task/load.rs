//! Loading the task files found: read and parsed on a few threads, ids made unique,
//! every bad file kept as an [`InvalidTask`] so it is reported, never dropped.

use std::panic::AssertUnwindSafe;
use std::path::Path;
use std::sync::Arc;

use super::discover::{FoundFile, FoundFiles};
use super::file::parse_task;
use super::id::relative_id_text;
use super::paths::{BatchFiles, FilePlace, PathBlock};
use super::unique::{Identified, ReservedNames, unique_ids};
use super::{InvalidTask, Problem, Task, TaskId};
use crate::regular_file::{FileAccessError, read_bounded};
use crate::tool::ToolSpec;

/// The largest task file read: far above any real one (even with `files` inlined), far
/// below what would strain memory when thousands load at once.
const MAX_TASK_FILE: u64 = 16 << 20;

/// All task files under the given paths: the tasks as loaded, or as the loader was
/// asked to keep them (see [`load_files_as`]).
#[derive(Debug)]
pub(crate) struct LoadedTasks<T = Task> {
    /// Tasks ready to run, in path order.
    pub(crate) tasks: Vec<T>,
    /// Files that cannot run, in path order.
    pub(crate) invalid: Vec<InvalidTask>,
}

impl<T> Default for LoadedTasks<T> {
    fn default() -> Self {
        Self {
            tasks: Vec::new(),
            invalid: Vec::new(),
        }
    }
}

impl<T> LoadedTasks<T> {
    /// How many files were found.
    pub(crate) fn len(&self) -> usize {
        self.tasks.len() + self.invalid.len()
    }
}

/// Loads the given files (already discovered), in order. `tools` are the tools recorded
/// actions may call; `reserved` are the run dir's names, which ids must keep clear of.
#[cfg(test)]
pub(crate) fn load_files(
    files: FoundFiles,
    tools: &[ToolSpec],
    reserved: ReservedNames<'_>,
) -> LoadedTasks {
    load_files_as(files, tools.into(), reserved, |task, _| task)
}

/// Loads the given files as [`load_files`] does, keeping of each valid task what `keep`
/// makes of it and of its file's place in the batch (as soon as it is loaded: the parsed
/// tasks are never all held at once).
pub(crate) fn load_files_as<T: Identified + Send>(
    found: FoundFiles,
    tools: Arc<[ToolSpec]>,
    reserved: ReservedNames<'_>,
    keep: impl Fn(Task, FilePlace) -> T + Sync + Send,
) -> LoadedTasks<T> {
    let (paths, files) = found.into_parts();
    // The block of paths is the batch's, shared by every task held by its file.
    let batch = Arc::new(BatchFiles { paths, tools });
    // Reading and parsing are independent per file. A file whose loading panics is an
    // error of its own, never silently gone. The files go a chunk at a time, each let
    // go once loaded: the list of files found and the list loaded are never both whole
    // (together they were the loader's peak).
    let mut loaded: Vec<Loaded<T>> = Vec::with_capacity(files.len());
    crate::parallel::each_chunk(files, LOADED_AT_ONCE, |chunk| {
        loaded.extend(crate::parallel::map_owned(chunk, |f| {
            std::panic::catch_unwind(AssertUnwindSafe(|| {
                match load_one(&f, &batch.paths, &batch.tools) {
                    Loaded::Task(task) => {
                        let place = FilePlace {
                            files: Arc::clone(&batch),
                            at: f.at,
                        };
                        Loaded::Task(keep(task, place))
                    }
                    Loaded::Invalid(bad) => Loaded::Invalid(bad),
                }
            }))
            .unwrap_or_else(|_| lost(&f, &batch.paths))
        }));
    });
    // Split without a second copy of the batch: the few invalid files move out, and the
    // tasks are unwrapped where they lie (a million tasks' vectors are the loader's peak).
    let invalid: Vec<InvalidTask> = loaded
        .extract_if(.., |one| matches!(one, Loaded::Invalid(_)))
        .filter_map(Loaded::invalid)
        .collect();
    let tasks: Vec<T> = loaded.into_iter().filter_map(Loaded::task).collect();
    let (tasks, invalid) = unique_ids(tasks, invalid, reserved);
    LoadedTasks { tasks, invalid }
}

/// Files loaded together (in parallel).
const LOADED_AT_ONCE: usize = 16 * 1024;

/// A file whose loading failed unexpectedly: an error, never silently gone.
fn lost<T>(f: &FoundFile, paths: &PathBlock) -> Loaded<T> {
    let problem = Problem::new(
        &paths.get(f.at),
        "internal error: the loader stopped while reading this file",
    )
    .fix("this is a bug in ufo-batch; please report it with the file");
    Loaded::Invalid(Box::new(pending_invalid(
        f,
        paths,
        None,
        String::new(),
        vec![problem],
    )))
}

/// One file, read and parsed.
enum Loaded<T> {
    Task(T),
    /// (Boxed: a batch's every file is one of these while it loads, and most are tasks.)
    Invalid(Box<InvalidTask>),
}

impl<T> Loaded<T> {
    fn task(self) -> Option<T> {
        match self {
            Loaded::Task(task) => Some(task),
            Loaded::Invalid(_) => None,
        }
    }

    fn invalid(self) -> Option<InvalidTask> {
        match self {
            Loaded::Invalid(bad) => Some(*bad),
            Loaded::Task(_) => None,
        }
    }
}

fn load_one(file: &FoundFile, paths: &PathBlock, tools: &[ToolSpec]) -> Loaded<Task> {
    let path = &paths.get(file.at);
    let invalid = |declared, hash, problems| {
        Loaded::Invalid(Box::new(pending_invalid(
            file, paths, declared, hash, problems,
        )))
    };
    if let Some(why) = &file.problem {
        let problem =
            Problem::new(path, &**why).fix("remove the entry, or make it a readable task file");
        return invalid(None, String::new(), vec![problem]);
    }
    let text = match read_task_file(path) {
        Ok(text) => text,
        Err(problem) => return invalid(None, String::new(), vec![*problem]),
    };
    let path_id = TaskId::from_relative_path(file.relative(paths));
    let parsed =
        std::panic::catch_unwind(AssertUnwindSafe(|| parse_task(path, &text, path_id, tools)));
    let hash = || crate::hash::hex(text.as_bytes());
    match parsed {
        Ok(outcome) => match outcome.result {
            Ok(task) => Loaded::Task(task),
            Err(problems) => match invalid(outcome.declared_id, hash(), problems) {
                Loaded::Invalid(mut bad) => {
                    bad.warnings = outcome.warnings;
                    bad.request = stated_request(&text);
                    Loaded::Invalid(bad)
                }
                task => task,
            },
        },
        Err(_) => {
            let problem = Problem::new(path, "internal error: reading this file failed")
                .fix("this is a bug in ufo-batch; please report it with the file");
            invalid(None, hash(), vec![problem])
        }
    }
}

/// A task file's text: a regular file of at most [`MAX_TASK_FILE`] bytes, UTF-8, with
/// a byte-order mark (as Windows tools write) dropped.
pub(super) fn read_task_file(path: &Path) -> Result<String, Box<Problem>> {
    let bounded = read_bounded(path, MAX_TASK_FILE, Some(MAX_TASK_FILE)).map_err(|e| {
        let fix = match e {
            FileAccessError::TooLarge { .. } => {
                "task files are JSON of a few kilobytes; move large inputs out of the file"
            }
            _ => "check that the file is a readable regular file",
        };
        Box::new(Problem::new(path, format!("cannot read the file: {e}")).fix(fix))
    })?;
    let text = String::from_utf8(bounded.bytes).map_err(|e| {
        Box::new(
            Problem::new(path, format!("the file is not UTF-8 text ({e})"))
                .fix("save the file as UTF-8"),
        )
    })?;
    Ok(match text.strip_prefix('\u{feff}') {
        Some(rest) => rest.to_string(),
        None => text,
    })
}

/// The request a task file states (`request`, `task` or OSWorld's `instruction`), for
/// the result of a file that cannot run; empty when it states none as text.
fn stated_request(text: &str) -> String {
    let Ok(serde_json::Value::Object(keys)) = serde_json::from_str(text) else {
        return String::new();
    };
    ["request", "task", "instruction"]
        .iter()
        .find_map(|k| keys.get(*k).and_then(serde_json::Value::as_str))
        .unwrap_or_default()
        .trim()
        .to_string()
}

/// An invalid task whose final id is chosen by `unique_ids`.
fn pending_invalid(
    file: &FoundFile,
    paths: &PathBlock,
    declared: Option<TaskId>,
    hash: String,
    problems: Vec<Problem>,
) -> InvalidTask {
    let id = declared.unwrap_or_else(|| TaskId::sanitized(&relative_id_text(file.relative(paths))));
    InvalidTask {
        id,
        source: paths.get(file.at),
        source_hash: hash,
        request: String::new(),
        problems,
        warnings: Vec::new(),
    }
}

#[cfg(test)]
mod tests;
