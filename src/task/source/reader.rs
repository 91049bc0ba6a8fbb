//! The reader thread task files are read again on: a read asked of it ahead of its
//! task's start, waited for within a limit, and a reader stuck in a read that does not
//! answer left behind for a new one.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;

use super::{ReloadError, TaskFile};
use crate::task::Task;

/// Asks the reader thread for `file`.
pub(super) fn ask(file: TaskFile) -> Loading {
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
pub(super) fn on_reader(job: ReadJob) -> std::io::Result<u64> {
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
pub(super) fn reader_stuck(generation: u64) {
    let mut reader = reader();
    if reader.generation == generation {
        reader.jobs = None;
        reader.generation += 1;
    }
}
