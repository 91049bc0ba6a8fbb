//! A validated task as a batch holds it until it starts: named by its file alone, and
//! read again when it starts, so that a batch of a million tasks keeps a few dozen bytes
//! per task rather than each task's parsed plan. A task with no file (`--request`) is
//! held whole.

use std::borrow::Cow;
use std::num::NonZeroU32;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use super::file::parse_task;
use super::load::read_task_file;
use super::paths::{BatchFiles, FilePlace};
use super::{Task, TaskId};

mod reader;

pub(crate) use reader::Loading;
use reader::ask;

/// Where a task to run comes from.
#[derive(Clone, Debug)]
pub(crate) enum TaskSource {
    /// The task itself.
    Loaded(Arc<Task>),
    /// Its task file, validated when the batch was loaded.
    File(TaskFile),
}

/// A task file validated when the batch was loaded, to be read again when it starts:
/// 48 bytes (its path is in the batch's block, with the tools it is checked against).
#[derive(Clone, Debug)]
pub(crate) struct TaskFile {
    id: TaskId,
    files: Arc<BatchFiles>,
    /// The hash of the bytes that were validated.
    hash: u64,
    /// Its place in the batch's files.
    at: u32,
    repeat: Option<NonZeroU32>,
}

impl TaskSource {
    /// `task`, held by its file when it was loaded from `file` (checked against the
    /// batch's tools, and checked against them again when read again).
    pub(crate) fn of(task: Task, file: Option<FilePlace>) -> Self {
        match (file, u64::from_str_radix(&task.source_hash, 16)) {
            (Some(file), Ok(hash)) if task.has_file() => TaskSource::File(TaskFile {
                id: task.id,
                files: file.files,
                hash,
                at: file.at,
                repeat: task.repeat.and_then(NonZeroU32::new),
            }),
            _ => TaskSource::Loaded(Arc::new(task)),
        }
    }

    /// The task's id.
    pub(crate) fn id(&self) -> &TaskId {
        match self {
            TaskSource::Loaded(task) => &task.id,
            TaskSource::File(file) => &file.id,
        }
    }

    /// Its task file (empty for a task with none).
    pub(crate) fn path(&self) -> Cow<'_, Path> {
        match self {
            TaskSource::Loaded(task) => Cow::Borrowed(&task.source),
            TaskSource::File(file) => Cow::Owned(file.path()),
        }
    }

    /// The hash of the task file's bytes, as records write it.
    pub(crate) fn source_hash(&self) -> String {
        match self {
            TaskSource::Loaded(task) => task.source_hash.clone(),
            TaskSource::File(file) => format!("{:016x}", file.hash),
        }
    }

    /// Repetition `n` of this task: id `ID/rep-n`.
    pub(crate) fn repetition(&self, n: u32) -> TaskSource {
        match self {
            TaskSource::Loaded(task) => TaskSource::Loaded(Arc::new(task.repetition(n))),
            TaskSource::File(file) => TaskSource::File(TaskFile {
                id: file.id.repetition(n),
                repeat: NonZeroU32::new(n),
                ..file.clone()
            }),
        }
    }

    /// With `--repeat`: which repetition this is.
    pub(crate) fn repeat(&self) -> Option<u32> {
        match self {
            TaskSource::Loaded(task) => task.repeat,
            TaskSource::File(file) => file.repeat.map(NonZeroU32::get),
        }
    }

    /// The task, read again from its file when it is held by its file. Fails, in words,
    /// when the file can no longer be read, no longer holds what was validated, or does
    /// not answer within `limit` (a file whose reads block: a FUSE or network file system
    /// that hangs, a kernel file). The read goes to a reader thread, so that such a file
    /// holds up neither the run nor its stop for longer than `limit`; a read that never
    /// ends leaves only that thread waiting, and the next read gets a new one.
    pub(crate) fn load_within(&self, limit: Duration) -> Result<Arc<Task>, ReloadError> {
        self.begin_load().wait(limit)
    }

    /// Starts reading the task again on the reader thread, to be taken with
    /// [`Loading::wait`]: the pool asks for the next tasks' files before it needs them, so
    /// that starting a task waits for no read (and the reader reads many per wake-up).
    /// A read whose [`Loading`] is dropped before the reader comes to it is not made.
    pub(crate) fn begin_load(&self) -> Loading {
        match self {
            TaskSource::Loaded(task) => Loading::Ready(Ok(Arc::clone(task))),
            TaskSource::File(file) => ask(file.clone()),
        }
    }
}

/// Why a task's file could not be read again when its task was to start.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ReloadError {
    /// No thread could be started to read it.
    #[error("its task file cannot be read again: no thread to read it ({0})")]
    NoThread(String),
    /// Reading it failed (the problem, in short).
    #[error("its task file cannot be read again: {0}")]
    Unreadable(String),
    /// It is not the file the run started with.
    #[error(
        "its task file {} changed after the run started; run again to use the new version",
        .0.display()
    )]
    Changed(PathBuf),
    /// It changed into one that does not load (its first problem).
    #[error("its task file no longer loads: {0}")]
    NoLongerLoads(String),
    /// It did not answer in time.
    #[error(
        "its task file {} could not be read again within {secs}s (a FIFO, a device, or a file system that does not answer?)",
        path.display()
    )]
    NoAnswer {
        /// The file.
        path: PathBuf,
        /// The time given, in seconds.
        secs: u64,
    },
    /// Its reader went away.
    #[error("its task file {} could not be read again: its reader stopped", .0.display())]
    ReaderStopped(PathBuf),
}

impl crate::tool::Blamed for ReloadError {
    fn blame(&self) -> crate::tool::Blame {
        match self {
            // The file was edited under the run: a resumed run reads the new one.
            Self::Changed(_) | Self::NoLongerLoads(_) => crate::tool::Blame::TaskFile,
            Self::NoThread(_) => crate::tool::Blame::Runner,
            Self::Unreadable(_) | Self::NoAnswer { .. } | Self::ReaderStopped(_) => {
                crate::tool::Blame::Environment
            }
        }
    }
}

impl TaskFile {
    fn path(&self) -> PathBuf {
        self.files.paths.get(self.at)
    }

    fn load(&self) -> Result<Task, ReloadError> {
        let path = self.path();
        let text = read_task_file(&path).map_err(|p| ReloadError::Unreadable(p.short()))?;
        if crate::hash::fnv1a64(text.as_bytes()) != self.hash {
            return Err(ReloadError::Changed(path));
        }
        let parsed = parse_task(&path, &text, Ok(self.id.clone()), &self.files.tools);
        let mut task = parsed.result.map_err(|problems| {
            ReloadError::NoLongerLoads(problems.first().map(|p| p.short()).unwrap_or_default())
        })?;
        task.id = self.id.clone();
        task.repeat = self.repeat.map(NonZeroU32::get);
        Ok(task)
    }
}

#[cfg(test)]
impl TaskSource {
    /// A task held by its file, as a batch holds it: `text` written to `path`, its id
    /// `id`, checked against every tool.
    pub(crate) fn held_by_file(path: &Path, text: &str, id: &str) -> Self {
        std::fs::write(path, text).expect("writing a task file");
        let tools: Arc<[crate::tool::ToolSpec]> = crate::executor::all_tools().to_vec().into();
        let task = parse_task(path, text, Ok(TaskId::parse(id).expect("an id")), &tools)
            .result
            .expect("a valid task file");
        TaskSource::of(task, Some(FilePlace::alone(path, tools)))
    }
}

/// The source of a task with no file (`--request`).
pub(crate) const REQUEST_SOURCE: &str = "--request";

impl Task {
    /// Whether the task came from a task file (not `--request`).
    pub(crate) fn has_file(&self) -> bool {
        self.source != Path::new(REQUEST_SOURCE) && !self.source.as_os_str().is_empty()
    }
}

#[cfg(test)]
mod tests;
