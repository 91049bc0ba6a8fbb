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

use crate::llm::LimiterStats;
use crate::record::{Evaluation, StepRecord, TaskRecord};
use crate::task::{Problem, TaskId};
use crate::units::Timestamp;

mod stream;

#[cfg(test)]
pub(crate) use stream::{EventReceiver, channel};
pub(crate) use stream::{EventSender, EventSink, TaskEvents, spawn_sink};

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
