//! Resuming a run dir: deciding, from each task's stored `status.json`, whether it runs
//! again. A task with a final result is kept (unless `--rerun-failed` and it did not
//! pass, or its task file changed since); `cancelled`, `running` and `pending` tasks
//! run again. `--fresh` deletes the run dir first, and only a ufo-batch run dir.
//! [`plan_resume`] makes every decision of a run in one call.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::error::RunDirError;
use super::layout::RunLayout;
use super::lock::RunLock;
use super::records::{RunRoot, previous_record, record_beneath};
use super::stored::read_run_json;
use crate::record::ShapeName;
use crate::record::{EncodedRows, Inputs, TaskRecord, TaskRow, TaskStatus};
use crate::task::Identified;
use crate::tool::Blame;

/// A task a run may keep the earlier result of: which it is, and what its result now
/// depends on.
pub(crate) trait Resumable: Identified + Send {
    /// What its result would be made from now.
    fn inputs(&self) -> Inputs;
    /// It runs again: its attempts go on from `previous`, its earlier record.
    fn resume_from(&mut self, previous: Box<TaskRecord>);
    /// Whether an `error` that was `blame`'s is a result to keep while the inputs are
    /// the same, rather than a failure to run again (the status table's rule, which
    /// the attempt layer owns).
    fn keeps_error(blame: Blame) -> bool;
}

/// What to do with results already in the run dir.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum ResumeMode {
    /// Skip tasks that already have a final result.
    Resume,
    /// Skip only tasks that passed.
    RerunFailed,
    /// Delete the run dir's results and start over.
    Fresh,
}

/// What to do with one task.
#[derive(Debug)]
enum Decision {
    /// Run it; attempts continue from the earlier record if there is one. When its
    /// result would have been kept but was made from other inputs, what changed.
    Run(Option<Box<TaskRecord>>, Option<String>),
    /// Keep its earlier final result (what the run-level files read of it).
    Keep(Box<TaskRow>),
}

/// Tasks decided together (their stored records read in parallel).
const DECIDED_AT_ONCE: usize = 4096;

/// What a run does with the run dir and each of its tasks.
#[derive(Debug)]
pub(crate) struct Resumption<T> {
    /// How many invocations of this run dir came before this one.
    pub(crate) previous_invocations: u32,
    /// An old run dir being deleted (`--fresh`); finish it before exiting.
    pub(crate) discarding: Discarding,
    /// Final results kept from earlier invocations (what the run-level files read),
    /// encoded.
    pub(crate) kept: EncodedRows,
    /// Tasks to run (each with its earlier record, if it has one: see
    /// [`Resumable::resume_from`]).
    pub(crate) work: Vec<T>,
    /// Why results that would have been kept run again (what changed), with how many.
    pub(crate) rerun: BTreeMap<String, usize>,
    /// This runner's hold on the run dir; keep it until the run ends.
    pub(crate) lock: RunLock,
}

/// Opens the run dir of `layout` for a run of `tasks` (see [`prepare_run_dir`]) and
/// decides, task by task, what is kept and what runs.
pub(crate) fn plan_resume<T: Resumable>(
    layout: &RunLayout,
    tasks: Vec<T>,
    mode: ResumeMode,
) -> Result<Resumption<T>, RunDirError> {
    let lock = RunLock::acquire(layout)?;
    let (previous_invocations, discarding) = prepare_run_dir(layout, mode)?;
    // A fresh run starts over, and a new run dir holds nothing: no stored record is read.
    let read_records = mode != ResumeMode::Fresh && discarding.had_run;
    let mut kept = EncodedRows::default();
    let mut rerun = BTreeMap::new();
    if !read_records {
        // Every task runs, with no earlier record: the batch is the work as it is.
        return Ok(Resumption {
            previous_invocations,
            discarding,
            kept,
            work: tasks,
            rerun,
            lock,
        });
    }
    let mut work = Vec::new();
    let root = RunRoot::open(layout);
    // A chunk at a time, so that what is kept is encoded (and the rest of its task let
    // go, with the chunk's room) before the next chunk's records are read: a resumed run
    // never holds a whole record, nor a decision, for every task, nor the batch beside
    // what it keeps of it.
    crate::parallel::each_chunk(tasks, DECIDED_AT_ONCE, |chunk| {
        // Reading each stored record is independent of the others.
        let decided = crate::parallel::map_owned(chunk, |task| {
            // In one step where the system can check that no link is on the way.
            let beneath = root
                .as_ref()
                .map_or(Err(()), |root| record_beneath(root, task.id()));
            let decision = match beneath {
                Ok(previous) => decide(&task.inputs(), previous, mode, T::keeps_error),
                Err(()) => match unlink(layout, task.id()) {
                    Some(decision) => decision,
                    None => decide(
                        &task.inputs(),
                        previous_record(layout, task.id()),
                        mode,
                        T::keeps_error,
                    ),
                },
            };
            (task, decision)
        });
        for (mut task, decision) in decided {
            match decision {
                Decision::Keep(row) => kept.push(&row),
                Decision::Run(previous, why) => {
                    if let Some(why) = why {
                        *rerun.entry(why).or_default() += 1;
                    }
                    if let Some(previous) = previous {
                        task.resume_from(previous);
                    }
                    work.push(task);
                }
            }
        }
    });
    Ok(Resumption {
        previous_invocations,
        discarding,
        kept,
        work,
        rerun,
        lock,
    })
}

/// A task whose folder, or a folder on the way to it, is a symbolic link: the run would
/// write wherever it leads. The link is removed (not what it leads to) and the task runs
/// in a folder of its own; what it led to is no result of this run dir. `None` when no
/// link is on the way.
fn unlink(layout: &RunLayout, id: &crate::task::TaskId) -> Option<Decision> {
    let why = match layout.unlink_task_path(id) {
        Ok(removed) if removed.is_empty() => return None,
        Ok(_) => "its folder was a symbolic link out of the run folder (the link is removed, not what it led to)".to_string(),
        Err(e) => format!("its folder is a symbolic link out of the run folder that cannot be removed: {e}"),
    };
    Some(Decision::Run(None, Some(why)))
}

/// The old run dir that `--fresh` replaces, and run dirs of the same name that an
/// earlier `--fresh` left half-deleted. Nothing is touched until the run starts
/// ([`Discarding::start`]): a run refused or interrupted before that (an LLM that cannot
/// be reached, a missing key, Ctrl-C) leaves the old results as they were. Once started,
/// the old run dir is moved aside at once and deleted in the background, so that the new
/// run need not wait for thousands of files to go; call `finish` before exiting.
#[derive(Debug, Default)]
pub(crate) struct Discarding {
    /// Folders to delete.
    trash: Vec<PathBuf>,
    /// The old run dir, to move aside when the run starts.
    old: Option<PathBuf>,
    /// The run dir holds an earlier run (its `run.json`).
    had_run: bool,
    deleting: Option<std::thread::JoinHandle<()>>,
}

impl Discarding {
    /// The run starts: the old run dir is moved aside (before anything of the new run is
    /// written) and the old run dirs go, in the background.
    pub(crate) fn start(&mut self) -> Result<(), RunDirError> {
        if let Some(root) = self.old.take() {
            let parent = parent_of(&root);
            let aside = move_aside(&root, &parent).map_err(|source| RunDirError::Io {
                path: root.display().to_string(),
                source,
            })?;
            self.trash.push(aside);
        }
        let trash = std::mem::take(&mut self.trash);
        if trash.is_empty() {
            return Ok(());
        }
        self.deleting = std::thread::Builder::new()
            .name("discard".into())
            .spawn(move || {
                for dir in trash {
                    let _ = std::fs::remove_dir_all(dir);
                }
            })
            .ok();
        Ok(())
    }

    /// Waits until the old run dirs are gone.
    pub(crate) fn finish(mut self) {
        if let Some(handle) = self.deleting.take() {
            let _ = handle.join();
        }
    }
}

/// The folder `root` is in.
fn parent_of(root: &Path) -> PathBuf {
    root.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
        .to_path_buf()
}

/// Checks the run dir is ours (or new), notes it for `--fresh` to discard once the run
/// starts, and returns how many invocations of it came before.
fn prepare_run_dir(layout: &RunLayout, mode: ResumeMode) -> Result<(u32, Discarding), RunDirError> {
    let root = layout.root();
    let io = |source| RunDirError::Io {
        path: root.display().to_string(),
        source,
    };
    // Old run dirs that a killed `--fresh` left half-deleted (a run dir is moved aside
    // only once its run has started, never to come back).
    let trash = leftovers(root);
    let mut old = None;
    let mut invocations = 0;
    let mut had_run = false;
    if root.exists() {
        let run_json = read_run_json(root);
        had_run = run_json.is_some();
        let empty = std::fs::read_dir(root).map_err(io)?.next().is_none();
        match run_json {
            None if !empty => return Err(RunDirError::NotOurs(root.display().to_string())),
            None => {}
            Some(_) if mode == ResumeMode::Fresh => old = Some(root.to_path_buf()),
            Some(run) => {
                invocations = run.get("invocation").and_then(|v| v.as_u64()).unwrap_or(1) as u32
            }
        }
    }
    Ok((
        invocations,
        Discarding {
            trash,
            old,
            had_run,
            deleting: None,
        },
    ))
}

/// Hidden siblings of `root` named `.NAME.deleting-...`.
fn leftovers(root: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(parent_of(root))
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            name.starts_with('.')
                && name.contains(".deleting-")
                && e.file_type().is_ok_and(|t| t.is_dir())
        })
        .map(|e| e.path())
        .collect()
}

/// Renames `root` to a hidden sibling (instant), to be deleted in the background.
fn move_aside(root: &Path, parent: &Path) -> std::io::Result<PathBuf> {
    let name = root
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stamp = crate::units::Timestamp::now().unix_seconds();
    let trash = parent.join(format!(".{name}.deleting-{}-{stamp}", std::process::id()));
    std::fs::rename(root, &trash)?;
    Ok(trash)
}

/// Whether a task with `inputs` runs again, given its stored record. A result is kept
/// only when it is a verdict on the task, or an `error` that `keeps_error` says recurs
/// with the same inputs (the task file's, the configuration's; the machine's runs
/// again), and was made from the same inputs.
fn decide(
    inputs: &Inputs,
    previous: Option<TaskRecord>,
    mode: ResumeMode,
    keeps_error: fn(Blame) -> bool,
) -> Decision {
    let Some(record) = previous else {
        return Decision::Run(None, None);
    };
    let keepable = record.shape != ShapeName::Invalid
        && match mode {
            ResumeMode::Resume => {
                record.status.is_done()
                    || (record.status == TaskStatus::Error && record.blame.is_some_and(keeps_error))
            }
            ResumeMode::RerunFailed => record.status == TaskStatus::Passed,
            ResumeMode::Fresh => false,
        };
    if !keepable {
        return Decision::Run(Some(Box::new(record)), None);
    }
    let change = match &record.inputs {
        None => Some("its result was made by an older ufo-batch".to_string()),
        Some(earlier) => earlier.change_to(inputs),
    };
    match change {
        // Only the run-level files read a kept record again.
        None => Decision::Keep(Box::new(TaskRow::of(&record))),
        Some(why) => Decision::Run(Some(Box::new(record)), Some(why)),
    }
}
