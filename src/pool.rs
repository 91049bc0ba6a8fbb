//! The SessionPool: runs attempts at most `jobs` at a time and owns everything the
//! user sees about scheduling — which task starts when, when the run stops taking new
//! tasks, and the final record of each task. A session that errors or panics becomes
//! that task's `error` result; nothing stops the other tasks but the stop tokens.
//!
//! UFO's pool awaits sessions one after another with no isolation; this one keeps a
//! `JoinSet` of at most `jobs` attempts and refills it as each ends.

use std::collections::HashMap;
use std::sync::Arc;

use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use crate::attempt::{AttemptOutcome, AttemptSettings, run_attempt};
use crate::event::{Event, EventSender, TaskFinished};
use crate::record::{AttemptRecord, TaskRecord, TaskStatus};
use crate::task::Task;
use crate::timestamp::{Timestamp, seconds};

/// A task to run, with its record from an earlier invocation if there is one.
pub struct Scheduled {
    /// The task.
    pub task: Task,
    /// Its last record in this run dir (attempts continue from it).
    pub previous: Option<TaskRecord>,
}

/// Tokens that stop a run: `drain` stops scheduling (running tasks finish), `kill`
/// ends running attempts at once (they become `cancelled`).
#[derive(Clone, Debug, Default)]
pub struct StopTokens {
    /// Stop starting tasks.
    pub drain: CancellationToken,
    /// End running tasks.
    pub kill: CancellationToken,
    /// Why the run is stopping, set by whoever cancels `drain`.
    pub reason: Arc<std::sync::Mutex<Option<String>>>,
    /// Set when the stop came from the user.
    pub interrupted: Arc<std::sync::atomic::AtomicBool>,
}

impl StopTokens {
    /// Stops scheduling, recording why (the first reason wins).
    pub fn stop(&self, reason: impl Into<String>) {
        let mut slot = self.reason.lock().unwrap_or_else(|e| e.into_inner());
        slot.get_or_insert_with(|| reason.into());
        self.drain.cancel();
    }

    /// Stops scheduling because the user interrupted the run.
    pub fn interrupt(&self) {
        self.interrupted
            .store(true, std::sync::atomic::Ordering::SeqCst);
        self.stop("interrupted (Ctrl-C)");
    }

    /// True once the user interrupted the run.
    pub fn interrupted(&self) -> bool {
        self.interrupted.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Why the run stopped, if it did.
    pub fn reason(&self) -> Option<String> {
        self.reason
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}

/// The pool.
pub struct SessionPool {
    jobs: usize,
    settings: Arc<AttemptSettings>,
    events: EventSender,
}

/// A running attempt, by tokio task id.
struct Running {
    task: Arc<Task>,
    record: TaskRecord,
}

impl SessionPool {
    /// A pool running at most `jobs` attempts at once.
    pub fn new(jobs: usize, settings: AttemptSettings, events: EventSender) -> Self {
        Self {
            jobs: jobs.max(1),
            settings: Arc::new(settings),
            events,
        }
    }

    /// Runs every task unless stopped; each task ends with exactly one `TaskFinished`.
    pub async fn run(self, work: Vec<Scheduled>, stop: StopTokens) -> Option<String> {
        let mut queue = work.into_iter();
        let mut set: JoinSet<AttemptOutcome> = JoinSet::new();
        let mut running: HashMap<tokio::task::Id, Running> = HashMap::new();
        let mut stopping = false;
        loop {
            while !stopping && set.len() < self.jobs {
                let Some(item) = queue.next() else { break };
                let (id, entry) = self.start(&mut set, item, &stop);
                running.insert(id, entry);
            }
            if set.is_empty() {
                break;
            }
            tokio::select! {
                biased;
                () = stop.drain.cancelled(), if !stopping => {
                    stopping = true;
                    let reason = stop.reason().unwrap_or_else(|| "stopped".to_string());
                    self.events.send(Event::Stopping { reason });
                }
                Some(joined) = set.join_next_with_id() => {
                    let (tid, outcome) = match joined {
                        Ok((tid, outcome)) => (tid, outcome),
                        Err(e) => (e.id(), AttemptOutcome::infrastructure_error(panic_message(e))),
                    };
                    if let Some(entry) = running.remove(&tid) {
                        self.finish(entry, outcome);
                    }
                }
            }
        }
        let reason = stop.reason();
        for item in queue {
            self.not_started(item, reason.as_deref().unwrap_or("the run stopped"));
        }
        reason
    }

    fn start(
        &self,
        set: &mut JoinSet<AttemptOutcome>,
        item: Scheduled,
        stop: &StopTokens,
    ) -> (tokio::task::Id, Running) {
        let task = Arc::new(item.task);
        let mut record = item.previous.unwrap_or_else(|| new_record(&task));
        refresh_from_task(&mut record, &task);
        let previous_attempts = record.attempt_count();
        let now = Timestamp::now();
        record.status = TaskStatus::Running;
        record.error = None;
        record.complete = None;
        record.started = Some(now);
        record.finished = None;
        record.attempts.push(AttemptRecord {
            attempt: previous_attempts + 1,
            started: now,
            finished: None,
            status: TaskStatus::Running,
            error: None,
        });
        self.events
            .send(Event::TaskStarted(Box::new(record.clone())));
        let events = self.events.for_task(task.id.clone());
        let settings = Arc::clone(&self.settings);
        let kill = stop.kill.clone();
        let attempt_task = Arc::clone(&task);
        let handle = set.spawn(async move {
            run_attempt(&attempt_task, &settings, previous_attempts, events, kill).await
        });
        (handle.id(), Running { task, record })
    }

    fn finish(&self, entry: Running, outcome: AttemptOutcome) {
        let Running { task, mut record } = entry;
        let now = Timestamp::now();
        record.status = outcome.status;
        record.error = outcome.reason.clone();
        record.complete = outcome.evaluation.as_ref().map(|e| e.complete);
        record.finished = Some(now);
        record.duration_s = record
            .started
            .map(|s| seconds(now.since(s)))
            .unwrap_or_default();
        record.rounds = outcome.rounds;
        record.steps = outcome.steps;
        record.round_steps = outcome.round_steps.clone();
        record.usage.add(outcome.usage);
        record.cost_usd = match (record.cost_usd, outcome.cost.usd()) {
            (Some(a), Some(b)) => Some(a + b),
            _ => None,
        };
        if let Some(last) = record.attempts.last_mut() {
            last.finished = Some(now);
            last.status = outcome.status;
            last.error = outcome.reason.clone();
        }
        tracing::debug!(task = %task.id, status = %record.status, "task finished");
        self.events.send(Event::TaskFinished(Box::new(TaskFinished {
            record,
            trajectory: outcome.trajectory,
            evaluation: outcome.evaluation,
            plan: outcome.plan,
            problems: Vec::new(),
        })));
    }

    /// A task that never started because the run stopped.
    fn not_started(&self, item: Scheduled, reason: &str) {
        let mut record = item.previous.unwrap_or_else(|| new_record(&item.task));
        refresh_from_task(&mut record, &item.task);
        record.status = TaskStatus::Cancelled;
        record.error = Some(format!("not started: {reason}"));
        self.events.send(Event::TaskFinished(Box::new(TaskFinished {
            record,
            trajectory: Vec::new(),
            evaluation: None,
            plan: None,
            problems: Vec::new(),
        })));
    }
}

/// A task's first record.
pub fn new_record(task: &Task) -> TaskRecord {
    TaskRecord {
        id: task.id.clone(),
        source: task.source.display().to_string(),
        source_hash: task.source_hash.clone(),
        shape: task.kind.shape(),
        session: task.kind.session(),
        request: task.request.clone(),
        tags: task.tags.clone(),
        status: TaskStatus::Pending,
        complete: None,
        error: None,
        attempts: Vec::new(),
        started: None,
        finished: None,
        duration_s: 0.0,
        rounds: 0,
        steps: 0,
        round_steps: Vec::new(),
        usage: Default::default(),
        cost_usd: Some(0.0),
        warnings: task.warnings.clone(),
    }
}

/// Brings a record from an earlier invocation up to date with the task file as it is now.
fn refresh_from_task(record: &mut TaskRecord, task: &Task) {
    record.source = task.source.display().to_string();
    record.source_hash = task.source_hash.clone();
    record.shape = task.kind.shape();
    record.session = task.kind.session();
    record.request = task.request.clone();
    record.tags = task.tags.clone();
    record.warnings = task.warnings.clone();
}

fn panic_message(e: tokio::task::JoinError) -> String {
    if e.is_cancelled() {
        return "internal error: the session was aborted".to_string();
    }
    let payload = e.into_panic();
    let text = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_string());
    format!("internal error: the session panicked: {text}")
}
