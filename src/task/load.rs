//! Loading the task files found: read and parsed on a few threads, ids made unique,
//! every bad file kept as an [`InvalidTask`] so it is reported, never dropped.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use super::discover::FoundFile;
use super::file::parse_task;
use super::id::relative_id_text;
use super::{Problem, Task, TaskId};
use crate::tool::ToolSpec;

/// A task file that cannot run, kept so its error is reported in the results.
#[derive(Clone, Debug)]
pub(crate) struct InvalidTask {
    /// Where its error result is written (its own id when it has a usable one).
    pub(crate) id: TaskId,
    /// The file.
    pub(crate) source: PathBuf,
    /// A hash of its bytes, so a resumed run notices when it was fixed.
    pub(crate) source_hash: String,
    /// Everything wrong with it.
    pub(crate) problems: Vec<Problem>,
}

/// All task files under the given paths.
#[derive(Debug, Default)]
pub(crate) struct LoadedTasks {
    /// Tasks ready to run, in path order.
    pub(crate) tasks: Vec<Task>,
    /// Files that cannot run, in path order.
    pub(crate) invalid: Vec<InvalidTask>,
}

impl LoadedTasks {
    /// How many files were found.
    pub(crate) fn len(&self) -> usize {
        self.tasks.len() + self.invalid.len()
    }
}

/// Loads the given files (already discovered), in order. `tools` are the tools recorded
/// actions may call; `reserved` are the names of a task's results folder, which a nested
/// task id must not reuse.
pub(crate) fn load_files(
    files: &[FoundFile],
    tools: &[ToolSpec],
    reserved: &[&str],
) -> LoadedTasks {
    // Reading and parsing are independent per file: spread them over a few threads
    // (reads wait on the disk; on a cold cache several outstanding reads help most).
    let threads = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .clamp(2, 8)
        * 2;
    let chunk = files.len().div_ceil(threads).max(64);
    let loaded: Vec<Loaded> = std::thread::scope(|scope| {
        let workers: Vec<_> = files
            .chunks(chunk)
            .map(|part| {
                scope.spawn(move || part.iter().map(|f| load_one(f, tools)).collect::<Vec<_>>())
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().unwrap_or_default())
            .collect()
    });
    let mut tasks = Vec::new();
    let mut invalid = Vec::new();
    for one in loaded {
        match one {
            Loaded::Task(task) => tasks.push(*task),
            Loaded::Invalid(bad) => invalid.push(bad),
        }
    }
    dedupe(tasks, invalid, reserved)
}

/// One file, read and parsed.
enum Loaded {
    Task(Box<Task>),
    Invalid(InvalidTask),
}

fn load_one(file: &FoundFile, tools: &[ToolSpec]) -> Loaded {
    let path_id = TaskId::from_relative_path(&file.relative);
    match std::fs::read_to_string(&file.path) {
        Err(e) => Loaded::Invalid(pending_invalid(
            file,
            None,
            String::new(),
            vec![read_problem(&file.path, &e)],
        )),
        Ok(text) => {
            let outcome = parse_task(&file.path, &text, path_id, tools);
            match outcome.result {
                Ok(task) => Loaded::Task(Box::new(task)),
                Err(problems) => {
                    let hash = crate::hash::hex(text.as_bytes());
                    Loaded::Invalid(pending_invalid(file, outcome.declared_id, hash, problems))
                }
            }
        }
    }
}

fn read_problem(path: &Path, e: &std::io::Error) -> Problem {
    Problem::new(path, format!("cannot read the file: {e}"))
        .fix("check that the file is readable and is UTF-8 text")
}

/// An invalid task whose final id is chosen in [`dedupe`].
fn pending_invalid(
    file: &FoundFile,
    declared: Option<TaskId>,
    hash: String,
    problems: Vec<Problem>,
) -> InvalidTask {
    let id = declared.unwrap_or_else(|| TaskId::sanitized(&relative_id_text(&file.relative)));
    InvalidTask {
        id,
        source: file.path.clone(),
        source_hash: hash,
        problems,
    }
}

/// Makes ids unique: the first file (by path) with an id keeps it; a later valid file
/// with the same id becomes invalid; invalid files get a free stand-in id.
fn dedupe(tasks: Vec<Task>, mut invalid: Vec<InvalidTask>, reserved: &[&str]) -> LoadedTasks {
    let mut owners: HashMap<TaskId, PathBuf> = HashMap::new();
    let mut kept = Vec::new();
    for task in tasks {
        if let Some(first) = owners.get(&task.id) {
            let problem = Problem::new(
                &task.source,
                format!("duplicate id `{}`: {} has it too", task.id, first.display()),
            )
            .fix("give one of the two files a different \"id\"");
            invalid.push(InvalidTask {
                id: task.id.clone(),
                source: task.source.clone(),
                source_hash: task.source_hash.clone(),
                problems: vec![problem],
            });
        } else {
            owners.insert(task.id.clone(), task.source.clone());
            kept.push(task);
        }
    }
    let clashes = reserved_clashes(&kept, reserved);
    let (kept, moved): (Vec<Task>, Vec<Task>) =
        kept.into_iter().partition(|t| !clashes.contains(&t.id));
    for task in moved {
        owners.remove(&task.id);
        let problem = Problem::new(
            &task.source,
            format!(
                "the id `{}` would put this task's results inside another task's `{}`",
                task.id,
                clash_segment(&task.id, reserved)
            ),
        )
        .fix("rename the file or set an \"id\" that does not end in a results file name");
        invalid.push(InvalidTask {
            id: task.id,
            source: task.source,
            source_hash: task.source_hash,
            problems: vec![problem],
        });
    }
    invalid.sort_by(|a, b| a.source.cmp(&b.source));
    let mut taken: HashSet<TaskId> = owners.into_keys().collect();
    for bad in &mut invalid {
        let mut id = bad.id.clone();
        let mut n = 2;
        while taken.contains(&id) || is_reserved_tail(&id, reserved) {
            id = bad.id.with_suffix(&format!(".dup{n}"));
            n += 1;
        }
        taken.insert(id.clone());
        bad.id = id;
    }
    LoadedTasks {
        tasks: kept,
        invalid,
    }
}

/// Ids whose results folder would sit inside another task's reserved entries
/// (`a/workspace` when `a` is also a task).
fn reserved_clashes(tasks: &[Task], reserved: &[&str]) -> HashSet<TaskId> {
    let ids: HashSet<&str> = tasks.iter().map(|t| t.id.as_str()).collect();
    tasks
        .iter()
        .filter(|t| {
            let segments: Vec<&str> = t.id.segments().collect();
            (1..segments.len()).any(|i| {
                reserved.contains(&segments[i]) && ids.contains(segments[..i].join("/").as_str())
            })
        })
        .map(|t| t.id.clone())
        .collect()
}

fn clash_segment<'a>(id: &'a TaskId, reserved: &[&str]) -> &'a str {
    id.segments().find(|s| reserved.contains(s)).unwrap_or("")
}

fn is_reserved_tail(id: &TaskId, reserved: &[&str]) -> bool {
    id.segments().skip(1).any(|s| reserved.contains(&s))
}

#[cfg(test)]
mod tests;
