//! The one interface between the running core and the reporters.
//!
//! Lifecycle of a run, in the order events arrive:
//!
//! ```text
//! RunStarted
//!   TasksKept?                         final results kept from an earlier invocation
//!   ( TaskFinished                     a task file that cannot run (no TaskStarted)
//!   | TaskStarted (TaskLog | StepFinished)* [TaskRetrying TaskStarted ...] TaskFinished )*
//!   Stopping?                          scheduling stopped (Ctrl-C, fail-fast, budget)
//!   (LlmLoad | Devices)*               at any time after RunStarted
//! RunFinished
//! ```
//!
//! Events of different tasks interleave; events of one task keep their order. The core
//! sends and does not wait for a reporter, but once: before the first task starts, it
//! waits until the reporter has handled `RunStarted` ([`EventSender::handled`]), so the
//! run folder is marked as a run folder before any task folder appears in it. Reporters
//! match every variant.

use std::path::PathBuf;
use std::sync::Arc;

use serde::Serialize;
use tokio::sync::{mpsc, oneshot};

use crate::llm::LimiterStats;
use crate::record::{Evaluation, StepRecord, TaskRecord};
use crate::task::{Problem, TaskId};
use crate::units::Timestamp;

/// Everything that happens in a run, as reporters see it.
#[derive(Debug)]
pub(crate) enum Event {
    /// The run begins.
    RunStarted(Box<RunStarted>),
    /// Tasks that already have a final result in this run dir and are not run again
    /// (what the run-level files read of each, encoded: the rest stays in its
    /// `status.json`).
    TasksKept(Box<crate::record::EncodedRows>),
    /// An attempt at a task begins; the record says `running`.
    TaskStarted(Box<TaskRecord>),
    /// A line for the task's `task.log`.
    TaskLog {
        /// The task.
        id: TaskId,
        /// The line.
        line: LogLine,
    },
    /// A running attempt's task was given a device (`--devices`).
    TaskOnDevice {
        /// The task.
        id: TaskId,
        /// The device's id.
        device: String,
    },
    /// An agent step ended.
    StepFinished {
        /// The task.
        id: TaskId,
        /// The step.
        step: Arc<StepRecord>,
    },
    /// An attempt ended in an infrastructure error and will be tried again.
    TaskRetrying {
        /// The task, with the failed attempt recorded.
        record: Box<TaskRecord>,
        /// Seconds until the next attempt.
        delay_s: f64,
    },
    /// A task has its final status.
    TaskFinished(Arc<TaskFinished>),
    /// The LLM calls in flight and the provider's rate limits, sent when they change
    /// (at most once a second).
    LlmLoad(LimiterStats),
    /// The run's devices: something happened to one (connected, gone, refused), and
    /// how many are connected and busy now.
    Devices {
        /// What happened, if anything did.
        news: Option<DeviceNews>,
        /// Devices connected and busy.
        load: FleetLoad,
    },
    /// A second went by: reporters that hold things back (a task's log lines) write
    /// them out.
    Tick,
    /// No new task will be started.
    Stopping {
        /// Why, in words.
        reason: String,
        /// After a signal: seconds running tasks have before they are stopped.
        grace_s: Option<f64>,
    },
    /// The run is over.
    RunFinished(RunFinished),
}

/// What reporters need to know at the start of a run.
#[derive(Debug, Clone)]
pub(crate) struct RunStarted {
    /// The run's name.
    pub(crate) name: String,
    /// The run dir.
    pub(crate) dir: PathBuf,
    /// When it started: when the batch began to be prepared (its MCP servers started,
    /// its task files found and read, the results already in its run dir read).
    pub(crate) started: Timestamp,
    /// The same, for measuring how long it takes.
    pub(crate) began: std::time::Instant,
    /// Tasks selected, runnable or not, skipped or not: the denominator.
    pub(crate) total: usize,
    /// Tasks that will actually be run in this invocation.
    pub(crate) to_run: usize,
    /// Of the tasks kept from earlier invocations, those that passed.
    pub(crate) kept_passed: usize,
    /// Concurrent sessions.
    pub(crate) jobs: usize,
    /// The resolved configuration, secrets removed, for `run.json`.
    pub(crate) config: serde_json::Value,
    /// How many invocations of this run dir came before this one.
    pub(crate) previous_invocations: u32,
    /// Results that would have been kept but run again, by what changed.
    pub(crate) rerun: std::collections::BTreeMap<String, usize>,
    /// How commands are confined.
    pub(crate) sandbox: String,
    /// Things the user must see before the run (a missing sandbox, ...).
    pub(crate) warnings: Vec<String>,
    /// The shard this run is, if sharded.
    pub(crate) shard: Option<crate::shard::Shard>,
    /// Every task id of the batch before sharding, so that `merge` can tell which
    /// tasks no shard ran (shared: a large batch's is not copied).
    pub(crate) selection: std::sync::Arc<Vec<TaskId>>,
}

/// A task's final result and everything needed to write its files.
#[derive(Debug, Clone)]
pub(crate) struct TaskFinished {
    /// The status record.
    pub(crate) record: TaskRecord,
    /// The steps of the last attempt.
    pub(crate) trajectory: Vec<StepRecord>,
    /// The evaluation, if one ran.
    pub(crate) evaluation: Option<Evaluation>,
    /// The actions taken, as a recorded-plan task file (`plan.json`).
    pub(crate) plan: Option<serde_json::Value>,
    /// Problems of a task file that could not run.
    pub(crate) problems: Vec<Problem>,
    /// A task the run stopped before it started, with no folder from an earlier run:
    /// nothing of it is on disk, and nothing need be (its absence says it never ran, and
    /// a resume runs it). Its row is in the run's files; no folder is written for it, so
    /// that a stop with many tasks queued ends within a scheduler's grace time.
    pub(crate) unstarted: bool,
    /// Counts it among the results not yet written while it is held (see
    /// [`crate::pending`]); the pool's results have one.
    #[expect(dead_code, reason = "a hold: counted while it lives, never read")]
    pub(crate) pending: Option<crate::pending::Pending>,
}

impl TaskFinished {
    /// The result of a task that never ran an attempt (an invalid task file, or one the
    /// run stopped before): its record and why, nothing else.
    pub(crate) fn without_run(record: TaskRecord, problems: Vec<Problem>) -> Self {
        Self {
            record,
            trajectory: Vec::new(),
            evaluation: None,
            plan: None,
            problems,
            unstarted: false,
            pending: None,
        }
    }

    /// [`Self::unstarted`]'s result: its record says why it never started.
    pub(crate) fn unstarted(record: TaskRecord) -> Self {
        Self {
            unstarted: true,
            pending: None,
            ..Self::without_run(record, Vec::new())
        }
    }
}

/// The end of a run.
#[derive(Debug, Clone)]
pub(crate) struct RunFinished {
    /// When it ended.
    pub(crate) finished: Timestamp,
    /// Why it stopped early, if it did (tasks not run are `cancelled`).
    pub(crate) stopped: Option<String>,
    /// True when the user interrupted it.
    pub(crate) interrupted: bool,
    /// What the runner process used.
    pub(crate) runner: Option<crate::resources::Resources>,
    /// The LLM calls of the run, when it had an LLM.
    pub(crate) llm: Option<LimiterStats>,
    /// Commands whose processes were still being ended when the run ended (their
    /// supervisors, Landlock mode, go on without the runner).
    pub(crate) still_ending: usize,
}

/// Severity of a task log line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "UPPERCASE")]
pub(crate) enum Level {
    /// Progress.
    Info,
    /// Something odd but not fatal.
    Warn,
    /// Something failed.
    Error,
}

impl Level {
    /// The name written in `task.log`.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::Info => "INFO",
            Self::Warn => "WARN",
            Self::Error => "ERROR",
        }
    }
}

/// One line of a task's own log.
#[derive(Clone, Debug)]
pub(crate) struct LogLine {
    /// When.
    pub(crate) at: Timestamp,
    /// How serious.
    pub(crate) level: Level,
    /// What happened.
    pub(crate) message: String,
}

/// Receives every event of a run, in order (see the lifecycle above). The reporters
/// implement it; the core hands it events through [`spawn_sink`] and never waits for it.
pub(crate) trait EventSink: Send + 'static {
    /// Handles one event.
    fn handle(&mut self, event: &Event);
}

/// A sink running on its own thread.
pub(crate) struct SinkThread<S>(std::thread::JoinHandle<S>);

impl<S> SinkThread<S> {
    /// Waits until every sender is gone and the sink has handled the last event; gives
    /// the sink back (`None` if it panicked).
    pub(crate) fn join(self) -> Option<S> {
        self.0.join().ok()
    }
}

/// How long the sink's thread lets events gather once it has handled all there were:
/// in a busy run they come thousands a second, a few for each task, and waking the
/// thread for each costs more than handling it (and the writers it feeds then wake for
/// a batch each, not a file each). It delays what the sink does by about this much.
const GATHER: std::time::Duration = std::time::Duration::from_millis(1);

/// Runs `sink` on its own thread, fed by the returned sender (and its clones).
pub(crate) fn spawn_sink<S: EventSink>(mut sink: S) -> (EventSender, SinkThread<S>) {
    let (tx, mut rx) = channel();
    let handle = std::thread::Builder::new()
        .name("reporter".into())
        .spawn(move || {
            crate::priority::lower_this_thread();
            while let Some(event) = rx.blocking_recv() {
                sink.handle(&event);
                // (After the run's last event, nothing more is to gather.)
                if rx.0.is_empty() && !matches!(event, Event::RunFinished(_)) {
                    std::thread::sleep(GATHER);
                }
            }
            sink
        })
        .expect("spawning the reporter thread");
    (tx, SinkThread(handle))
}

/// What travels on the stream: an event, or a request to say when everything sent
/// before it has been handled.
#[derive(Debug)]
enum Message {
    Event(Event),
    Barrier(oneshot::Sender<()>),
}

/// The sending end of the event stream. Cheap to clone; sending never blocks.
#[derive(Clone, Debug)]
pub(crate) struct EventSender(mpsc::UnboundedSender<Message>);

/// The receiving end, owned by the reporter.
#[derive(Debug)]
pub(crate) struct EventReceiver(mpsc::UnboundedReceiver<Message>);

/// A new event stream.
pub(crate) fn channel() -> (EventSender, EventReceiver) {
    let (tx, rx) = mpsc::unbounded_channel();
    (EventSender(tx), EventReceiver(rx))
}

impl EventReceiver {
    /// The next event, waiting for it; `None` once every sender is gone. A barrier is
    /// answered here: every event before it has been handled by then.
    pub(crate) fn blocking_recv(&mut self) -> Option<Event> {
        loop {
            match self.0.blocking_recv()? {
                Message::Event(event) => return Some(event),
                Message::Barrier(ack) => {
                    let _ = ack.send(());
                }
            }
        }
    }

    /// The next event if one is waiting.
    #[cfg(test)]
    pub(crate) fn try_recv(&mut self) -> Result<Event, mpsc::error::TryRecvError> {
        loop {
            match self.0.try_recv()? {
                Message::Event(event) => return Ok(event),
                Message::Barrier(ack) => {
                    let _ = ack.send(());
                }
            }
        }
    }
}

impl EventSender {
    /// Sends an event; if the reporter is gone there is nobody to tell, so it is dropped.
    pub(crate) fn send(&self, event: Event) {
        let _ = self.0.send(Message::Event(event));
    }

    /// Returns once the reporter has handled every event sent before this call (at
    /// once if the reporter is gone).
    pub(crate) async fn handled(&self) {
        let (ack, done) = oneshot::channel();
        if self.0.send(Message::Barrier(ack)).is_ok() {
            let _ = done.await;
        }
    }

    /// A handle for one task's log lines and steps.
    pub(crate) fn for_task(&self, id: TaskId) -> TaskEvents {
        TaskEvents {
            id,
            tx: self.clone(),
        }
    }
}

/// Sends one task's log lines and steps.
#[derive(Clone, Debug)]
pub(crate) struct TaskEvents {
    id: TaskId,
    tx: EventSender,
}

impl TaskEvents {
    /// A log line.
    pub(crate) fn log(&self, level: Level, message: impl Into<String>) {
        self.tx.send(Event::TaskLog {
            id: self.id.clone(),
            line: LogLine {
                at: Timestamp::now(),
                level,
                message: message.into(),
            },
        });
    }

    /// An info line.
    pub(crate) fn info(&self, message: impl Into<String>) {
        self.log(Level::Info, message);
    }

    /// A warning line.
    pub(crate) fn warn(&self, message: impl Into<String>) {
        self.log(Level::Warn, message);
    }

    /// The attempt runs on `device`.
    pub(crate) fn on_device(&self, device: &str) {
        self.tx.send(Event::TaskOnDevice {
            id: self.id.clone(),
            device: device.to_string(),
        });
    }

    /// A finished step.
    pub(crate) fn step(&self, step: StepRecord) {
        self.tx.send(Event::StepFinished {
            id: self.id.clone(),
            step: Arc::new(step),
        });
    }
}

/// Something about the devices worth a line in the run's output.
#[derive(Clone, Debug)]
pub(crate) struct DeviceNews {
    /// How much it matters.
    pub(crate) level: Level,
    /// What happened.
    pub(crate) text: String,
    /// The run cannot go on as configured: it stops (no more tasks start), saying why.
    pub(crate) stops_run: bool,
}

/// Devices connected and busy.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct FleetLoad {
    /// Connected.
    pub(crate) connected: usize,
    /// Running a task.
    pub(crate) busy: usize,
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    /// A slow reporter that counts what it handled.
    struct Slow(Arc<AtomicUsize>);

    impl EventSink for Slow {
        fn handle(&mut self, _event: &Event) {
            std::thread::sleep(std::time::Duration::from_millis(50));
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    #[tokio::test]
    async fn handled_waits_for_everything_sent_before() {
        let count = Arc::new(AtomicUsize::new(0));
        let (events, sink) = spawn_sink(Slow(Arc::clone(&count)));
        for _ in 0..3 {
            events.send(Event::Stopping {
                reason: "r".into(),
                grace_s: None,
            });
        }
        events.handled().await;
        assert_eq!(count.load(Ordering::SeqCst), 3);
        drop(events);
        assert!(sink.join().is_some());
    }
}
