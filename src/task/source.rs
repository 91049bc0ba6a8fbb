//! A validated task as a batch holds it until it starts: named by its file alone, and
//! read again when it starts, so that a batch of a million tasks keeps a few dozen bytes
//! per task rather than each task's parsed plan. A task with no file (`--request`) is
//! held whole.

use std::borrow::Cow;
use std::num::NonZeroU32;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;

use super::file::parse_task;
use super::load::read_task_file;
use super::paths::{BatchFiles, FilePlace};
use super::{Task, TaskId};

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

/// Asks the reader thread for `file`.
fn ask(file: TaskFile) -> Loading {
    let (tx, rx) = mpsc::sync_channel(1);
    let asked = Arc::new(Asked::default());
    let wanted = Arc::downgrade(&asked);
    let read = file.clone();
    let job = Box::new(move || {
        // Nobody waits for it any more (the run stopped before its task started).
        let Some(asked) = wanted.upgrade() else {
            return;
        };
        asked.started.store(true, Ordering::Release);
        let _ = tx.send(read.load());
    });
    match on_reader(job) {
        Ok(generation) => Loading::Reading {
            file,
            rx,
            generation,
            asked,
        },
        Err(e) => Loading::Ready(Err(ReloadError::NoThread(e.to_string()))),
    }
}

/// What the reader has done of a read asked of it.
#[derive(Default)]
pub(crate) struct Asked {
    /// The reader has begun it.
    started: AtomicBool,
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

/// A task being read again (see [`TaskSource::begin_load`]).
pub(crate) enum Loading {
    /// Known already: a task held whole, or a read that could not be asked for.
    Ready(Result<Arc<Task>, ReloadError>),
    /// Asked of the reader thread of `generation`.
    Reading {
        file: TaskFile,
        rx: mpsc::Receiver<Result<Task, ReloadError>>,
        generation: u64,
        asked: Arc<Asked>,
    },
}

impl Loading {
    /// The task, once read; fails when the read fails or its file does not answer
    /// within `limit` from now. A read that its reader never began (the reader was left
    /// behind in another file's read, or stopped) is asked again of a new reader, once:
    /// another file that does not answer is not this one's fault.
    pub(crate) fn wait(self, limit: Duration) -> Result<Arc<Task>, ReloadError> {
        let mut this = self;
        let mut asked_again = false;
        loop {
            let (file, rx, generation, asked) = match this {
                Loading::Ready(task) => return task,
                Loading::Reading {
                    file,
                    rx,
                    generation,
                    asked,
                } => (file, rx, generation, asked),
            };
            let begun = || asked.started.load(Ordering::Acquire);
            let answer = match rx.try_recv() {
                Ok(loaded) => Ok(loaded),
                Err(mpsc::TryRecvError::Disconnected) => Err(mpsc::RecvTimeoutError::Disconnected),
                // Queued behind a read its reader was left in.
                Err(mpsc::TryRecvError::Empty) if generation != reader_generation() && !begun() => {
                    Err(mpsc::RecvTimeoutError::Disconnected)
                }
                Err(mpsc::TryRecvError::Empty) => rx.recv_timeout(limit),
            };
            let began = begun();
            match answer {
                Ok(loaded) => return loaded.map(Arc::new),
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    reader_stuck(generation);
                    if began || asked_again {
                        return Err(ReloadError::NoAnswer {
                            path: file.path(),
                            secs: limit.as_secs(),
                        });
                    }
                }
                Err(mpsc::RecvTimeoutError::Disconnected) if began || asked_again => {
                    return Err(ReloadError::ReaderStopped(file.path()));
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => {}
            }
            asked_again = true;
            this = ask(file);
        }
    }
}

/// A read to run on the reader thread.
type ReadJob = Box<dyn FnOnce() + Send>;

/// The thread task files are read again on (one for the process, made on first use):
/// replaced when a read does not answer, so that the next reads do not queue behind it.
struct Reader {
    jobs: Option<mpsc::Sender<ReadJob>>,
    /// How many readers were left behind.
    generation: u64,
}

static READER: Mutex<Reader> = Mutex::new(Reader {
    jobs: None,
    generation: 0,
});

fn reader() -> std::sync::MutexGuard<'static, Reader> {
    READER.lock().unwrap_or_else(|p| p.into_inner())
}

/// Runs `job` on the reader thread, starting one when there is none; returns the
/// reader's generation.
fn on_reader(job: ReadJob) -> std::io::Result<u64> {
    let mut reader = reader();
    let job = match reader.jobs.as_ref() {
        Some(jobs) => match jobs.send(job) {
            Ok(()) => return Ok(reader.generation),
            Err(mpsc::SendError(job)) => job,
        },
        None => job,
    };
    let (jobs, queue) = mpsc::channel::<ReadJob>();
    std::thread::Builder::new()
        .name("task-file".into())
        .spawn(move || queue.into_iter().for_each(|job| job()))?;
    let _ = jobs.send(job);
    reader.jobs = Some(jobs);
    Ok(reader.generation)
}

/// The generation of the reader thread now.
fn reader_generation() -> u64 {
    reader().generation
}

/// The reader of `generation` is stuck in a read: the next read starts another (the
/// reads queued behind it are asked again, see [`Loading::wait`]).
fn reader_stuck(generation: u64) {
    let mut reader = reader();
    if reader.generation == generation {
        reader.jobs = None;
        reader.generation += 1;
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
mod tests {
    use super::*;

    use crate::tool::ToolSpec;

    fn tools() -> Arc<[ToolSpec]> {
        crate::executor::all_tools().to_vec().into()
    }

    fn loaded(dir: &Path, text: &str) -> Task {
        let path = dir.join("t.json");
        std::fs::write(&path, text).unwrap();
        let id = TaskId::parse("t").unwrap();
        parse_task(&path, text, Ok(id), &tools()).result.unwrap()
    }

    /// `task`, held by its file.
    fn by_file(task: Task) -> TaskSource {
        let place = FilePlace::alone(&task.source, tools());
        TaskSource::of(task, Some(place))
    }

    #[test]
    fn a_task_file_is_read_again_as_it_was_validated() {
        let dir = tempfile::tempdir().unwrap();
        let text = r#"{"request": "r", "actions": [{"action": "execute_command", "parameters": {"command": "true"}}], "tags": ["x"]}"#;
        let task = loaded(dir.path(), text);
        let source = by_file(task.clone()).repetition(2);
        assert!(matches!(source, TaskSource::File(_)));
        assert_eq!(source.id().as_str(), "t/rep-2");
        assert_eq!(source.source_hash(), task.source_hash);
        let again = source.load_within(Duration::from_secs(5)).unwrap();
        assert_eq!(again.id.as_str(), "t/rep-2");
        assert_eq!(again.repeat, Some(2));
        assert_eq!(again.tags, vec!["x".to_string()]);
        assert_eq!(again.request, "r");
    }

    #[test]
    fn a_file_changed_or_gone_since_it_was_validated_is_refused_in_words() {
        let dir = tempfile::tempdir().unwrap();
        let task = loaded(dir.path(), r#"{"request": "r", "actions": []}"#);
        let source = by_file(task);
        std::fs::write(
            dir.path().join("t.json"),
            r#"{"request": "other", "actions": []}"#,
        )
        .unwrap();
        use crate::tool::{Blame, Blamed};
        let why = source.load_within(Duration::from_secs(5)).unwrap_err();
        assert!(
            why.to_string().contains("changed after the run started"),
            "{why}"
        );
        assert_eq!(why.blame(), Blame::TaskFile);
        std::fs::remove_file(dir.path().join("t.json")).unwrap();
        let why = source.load_within(Duration::from_secs(5)).unwrap_err();
        assert!(
            why.to_string()
                .starts_with("its task file cannot be read again"),
            "{why}"
        );
        assert_eq!(why.blame(), Blame::Environment);
    }

    #[test]
    fn a_request_is_held_whole() {
        let task = Task::new(
            TaskId::parse("request").unwrap(),
            REQUEST_SOURCE,
            super::super::TaskShape::SeedRequest,
            "do it".into(),
        );
        let source = TaskSource::of(task, None);
        assert!(matches!(source, TaskSource::Loaded(_)));
        assert_eq!(
            source.load_within(Duration::from_secs(5)).unwrap().request,
            "do it"
        );
    }

    #[test]
    fn reads_asked_for_ahead_behind_one_that_does_not_answer_are_asked_again() {
        let dir = tempfile::tempdir().unwrap();
        let task = loaded(dir.path(), r#"{"request": "r", "actions": []}"#);
        let source = by_file(task);
        let (release, blocked) = mpsc::channel::<()>();
        let generation = on_reader(Box::new(move || {
            let _ = blocked.recv();
        }))
        .unwrap();
        // Asked for ahead of its start, queued behind the read that does not answer.
        let ahead = source.begin_load();
        assert!(matches!(ahead, Loading::Reading { .. }));
        reader_stuck(generation);
        let began = std::time::Instant::now();
        let again = ahead.wait(Duration::from_secs(5)).unwrap();
        assert_eq!(again.request, "r");
        assert!(
            began.elapsed() < Duration::from_secs(4),
            "{:?}",
            began.elapsed()
        );
        release.send(()).unwrap();
    }

    #[test]
    fn a_read_stuck_behind_another_files_read_is_asked_again_not_failed() {
        let dir = tempfile::tempdir().unwrap();
        let task = loaded(dir.path(), r#"{"request": "r", "actions": []}"#);
        let source = by_file(task);
        // Another file's read that does not answer, and nobody has said so yet.
        let (release, blocked) = mpsc::channel::<()>();
        let stuck_ended = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let ended = std::sync::Arc::clone(&stuck_ended);
        on_reader(Box::new(move || {
            let _ = blocked.recv();
            ended.store(true, std::sync::atomic::Ordering::SeqCst);
        }))
        .unwrap();
        let again = source
            .begin_load()
            .wait(Duration::from_millis(500))
            .unwrap();
        assert_eq!(again.request, "r");
        // The answer came while the other read was still stuck: it was asked again, not
        // waited for (an event, not a time).
        assert!(!stuck_ended.load(std::sync::atomic::Ordering::SeqCst));
        release.send(()).unwrap();
    }

    #[test]
    fn a_read_that_does_not_answer_is_left_behind_and_the_next_read_gets_a_new_reader() {
        let (release, blocked) = mpsc::channel::<()>();
        let generation = on_reader(Box::new(move || {
            let _ = blocked.recv();
        }))
        .unwrap();
        // What the pool does when a read times out.
        reader_stuck(generation);
        let dir = tempfile::tempdir().unwrap();
        let task = loaded(dir.path(), r#"{"request": "r", "actions": []}"#);
        let source = by_file(task);
        let again = source.load_within(Duration::from_secs(5)).unwrap();
        assert_eq!(again.request, "r");
        release.send(()).unwrap();
    }
}
