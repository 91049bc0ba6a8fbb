//! Finding task files under the paths given and loading them all: every `*.json`,
//! recursively, sorted by path; ids made unique; every bad file kept as an
//! [`InvalidTask`] so it is reported, never dropped.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use super::file::parse_task;
use super::id::relative_id_text;
use super::{Problem, Task, TaskId};
use crate::tool::ToolSpec;

/// Names inside a task's results folder; a nested task id must not reuse them.
pub const RESERVED_NAMES: &[&str] = &[
    "workspace",
    "attempts",
    "status.json",
    "response.log",
    "evaluation.log",
    "output.md",
    "plan.json",
    "task.log",
    "tmp",
];

/// A task file that cannot run, kept so its error is reported in the results.
#[derive(Clone, Debug)]
pub struct InvalidTask {
    /// Where its error result is written (its own id when it has a usable one).
    pub id: TaskId,
    /// The file.
    pub source: PathBuf,
    /// A hash of its bytes, so a resumed run notices when it was fixed.
    pub source_hash: String,
    /// Everything wrong with it.
    pub problems: Vec<Problem>,
}

/// All task files under the given paths.
#[derive(Debug, Default)]
pub struct LoadedTasks {
    /// Tasks ready to run, in path order.
    pub tasks: Vec<Task>,
    /// Files that cannot run, in path order.
    pub invalid: Vec<InvalidTask>,
}

impl LoadedTasks {
    /// How many files were found.
    pub fn len(&self) -> usize {
        self.tasks.len() + self.invalid.len()
    }

    /// True when no file was found.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Failures that stop loading altogether (a bad path given by the user).
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// A path given does not exist.
    #[error("no such file or folder: {0}")]
    Missing(PathBuf),
    /// A folder could not be walked.
    #[error("cannot read {path}")]
    Walk {
        /// The entry that failed.
        path: PathBuf,
        /// Why.
        #[source]
        source: walkdir::Error,
    },
    /// Nothing to run.
    #[error("no task files (*.json) found under {}", .0.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", "))]
    Empty(Vec<PathBuf>),
}

/// One file found, with the id its path gives.
#[derive(Clone, Debug)]
pub struct FoundFile {
    /// The file.
    pub path: PathBuf,
    /// The path relative to the folder given (the file name for a file given).
    pub relative: PathBuf,
}

/// Every task file under `paths`, sorted by path within each path given. Hidden files
/// and folders are skipped, and so is `exclude` (the results root, when it lies inside
/// a task folder).
pub fn discover(paths: &[PathBuf], exclude: Option<&Path>) -> Result<Vec<FoundFile>, LoadError> {
    let exclude = exclude.and_then(|p| p.canonicalize().ok());
    let mut found = Vec::new();
    for root in paths {
        let meta = std::fs::metadata(root).map_err(|_| LoadError::Missing(root.clone()))?;
        if meta.is_dir() && crate::layout::is_run_dir(root) {
            found.extend(recorded_plans(root)?);
            continue;
        }
        if meta.is_file() {
            let name = root
                .file_name()
                .map(PathBuf::from)
                .unwrap_or_else(|| root.clone());
            found.push(FoundFile {
                path: root.clone(),
                relative: name,
            });
            continue;
        }
        let walker = walkdir::WalkDir::new(root)
            .follow_links(true)
            .sort_by_file_name()
            .into_iter()
            .filter_entry(|e| {
                let hidden = e.depth() > 0 && e.file_name().to_string_lossy().starts_with('.');
                let excluded = exclude.as_ref().is_some_and(|x| {
                    e.file_type().is_dir() && e.path().canonicalize().is_ok_and(|p| &p == x)
                });
                !hidden && !excluded
            });
        for entry in walker {
            let entry = entry.map_err(|source| LoadError::Walk {
                path: source
                    .path()
                    .map(Path::to_path_buf)
                    .unwrap_or_else(|| root.clone()),
                source,
            })?;
            let is_json = entry
                .path()
                .extension()
                .is_some_and(|x| x.eq_ignore_ascii_case("json"));
            if entry.file_type().is_file() && is_json {
                let relative = entry
                    .path()
                    .strip_prefix(root)
                    .unwrap_or(entry.path())
                    .to_path_buf();
                found.push(FoundFile {
                    path: entry.into_path(),
                    relative,
                });
            }
        }
    }
    if found.is_empty() {
        return Err(LoadError::Empty(paths.to_vec()));
    }
    Ok(found)
}

/// The `plan.json` of every task of an earlier run (`ufo-batch run results/RUN/`),
/// with the task dir as the id. Workspaces and earlier attempts are not searched.
fn recorded_plans(run_dir: &Path) -> Result<Vec<FoundFile>, LoadError> {
    let walker = walkdir::WalkDir::new(run_dir)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| {
            let name = e.file_name().to_string_lossy();
            let in_task_dir = e
                .path()
                .parent()
                .is_some_and(|p| p.join("status.json").is_file());
            !(in_task_dir && (name == "workspace" || name == "attempts"))
        });
    let mut found = Vec::new();
    for entry in walker {
        let entry = entry.map_err(|source| LoadError::Walk {
            path: source
                .path()
                .map(Path::to_path_buf)
                .unwrap_or_else(|| run_dir.to_path_buf()),
            source,
        })?;
        if entry.file_type().is_file() && entry.file_name() == "plan.json" {
            let task_dir = entry.path().parent().unwrap_or(run_dir);
            let relative = task_dir
                .strip_prefix(run_dir)
                .unwrap_or(task_dir)
                .to_path_buf();
            found.push(FoundFile {
                path: entry.into_path(),
                relative,
            });
        }
    }
    Ok(found)
}

/// Loads every file found under `paths`. Bad files become [`InvalidTask`]s.
pub fn load(
    paths: &[PathBuf],
    exclude: Option<&Path>,
    tools: &[ToolSpec],
) -> Result<LoadedTasks, LoadError> {
    let files = discover(paths, exclude)?;
    Ok(load_files(&files, tools))
}

/// Loads the given files (already discovered), in order.
pub fn load_files(files: &[FoundFile], tools: &[ToolSpec]) -> LoadedTasks {
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
    dedupe(tasks, invalid)
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
fn dedupe(tasks: Vec<Task>, mut invalid: Vec<InvalidTask>) -> LoadedTasks {
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
    let clashes = reserved_clashes(&kept);
    let (kept, moved): (Vec<Task>, Vec<Task>) =
        kept.into_iter().partition(|t| !clashes.contains(&t.id));
    for task in moved {
        owners.remove(&task.id);
        let problem = Problem::new(
            &task.source,
            format!(
                "the id `{}` would put this task's results inside another task's `{}`",
                task.id,
                clash_segment(&task.id)
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
        while taken.contains(&id) || is_reserved_tail(&id) {
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
fn reserved_clashes(tasks: &[Task]) -> HashSet<TaskId> {
    let ids: HashSet<&str> = tasks.iter().map(|t| t.id.as_str()).collect();
    tasks
        .iter()
        .filter(|t| {
            let segments: Vec<&str> = t.id.segments().collect();
            (1..segments.len()).any(|i| {
                RESERVED_NAMES.contains(&segments[i])
                    && ids.contains(segments[..i].join("/").as_str())
            })
        })
        .map(|t| t.id.clone())
        .collect()
}

fn clash_segment(id: &TaskId) -> &str {
    id.segments()
        .find(|s| RESERVED_NAMES.contains(s))
        .unwrap_or("")
}

fn is_reserved_tail(id: &TaskId) -> bool {
    id.segments().skip(1).any(|s| RESERVED_NAMES.contains(&s))
}

#[cfg(test)]
mod tests;
