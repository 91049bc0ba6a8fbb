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

use crate::attempt::{AttemptOutcome, AttemptRunner};
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
    runner: Arc<dyn AttemptRunner>,
    events: EventSender,
    budget: Option<Budget>,
}

/// A spending limit: no task starts once the run's LLM spend reaches `max_usd`.
pub struct Budget {
    /// The spend so far, updated by the LLM client.
    pub spend: Arc<crate::llm::Spend>,
    /// The limit.
    pub max_usd: f64,
}

impl Budget {
    /// Why no more tasks may start, if the budget is spent.
    fn exhausted(&self) -> Option<String> {
        let spent = self.spend.usd();
        (spent >= self.max_usd).then(|| {
            format!(
                "the cost budget of ${:.2} is reached (${spent:.4} spent; --max-cost)",
                self.max_usd
            )
        })
    }
}

/// A running attempt, by tokio task id.
struct Running {
    task: Arc<Task>,
    record: TaskRecord,
}

impl SessionPool {
    /// A pool running at most `jobs` attempts at once with `runner`.
    pub fn new(jobs: usize, runner: Arc<dyn AttemptRunner>, events: EventSender) -> Self {
        Self {
            jobs: jobs.max(1),
            runner,
            events,
            budget: None,
        }
    }

    /// Stops scheduling once `budget` is spent.
    pub fn with_budget(mut self, budget: Budget) -> Self {
        self.budget = Some(budget);
        self
    }

    /// Runs every task unless stopped; each task ends with exactly one `TaskFinished`.
    pub async fn run(self, work: Vec<Scheduled>, stop: StopTokens) -> Option<String> {
        let mut queue = work.into_iter();
        let mut set: JoinSet<AttemptOutcome> = JoinSet::new();
        let mut running: HashMap<tokio::task::Id, Running> = HashMap::new();
        let mut stopping = false;
        loop {
            while !self.stopping(&stop, &mut stopping) && set.len() < self.jobs {
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
                    self.stopping(&stop, &mut stopping);
                }
                Some(joined) = set.join_next_with_id() => {
                    let (tid, outcome) = match joined {
                        Ok((tid, outcome)) => (tid, outcome),
                        Err(e) => (e.id(), AttemptOutcome::infrastructure_error(panic_message(e))),
                    };
                    if let Some(reason) = &outcome.fatal {
                        stop.stop(format!("{reason} (every task would fail the same way)"));
                    }
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

    /// Whether scheduling has stopped: a stop token, or the budget, says so. The first
    /// time, tells the reporters why.
    fn stopping(&self, stop: &StopTokens, stopping: &mut bool) -> bool {
        if *stopping {
            return true;
        }
        if let Some(reason) = self.budget.as_ref().and_then(Budget::exhausted) {
            stop.stop(reason);
        }
        if stop.drain.is_cancelled() {
            *stopping = true;
            let reason = stop.reason().unwrap_or_else(|| "stopped".to_string());
            self.events.send(Event::Stopping { reason });
        }
        *stopping
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
        let runner = Arc::clone(&self.runner);
        let kill = stop.kill.clone();
        let attempt_task = Arc::clone(&task);
        let handle = set.spawn(async move {
            runner
                .run(&attempt_task, previous_attempts, events, kill)
                .await
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
        record.llm.add(outcome.llm);
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
    let mut record = TaskRecord::new(
        task.id.clone(),
        task.source.display().to_string(),
        task.source_hash.clone(),
        task.kind.shape(),
        task.kind.session(),
        task.request.clone(),
    );
    record.tags = task.tags.clone();
    record.warnings = task.warnings.clone();
    record
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

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    use super::*;
    use crate::event::{EventReceiver, TaskEvents};
    use crate::testutil::task;

    /// Counts how many attempts run at once; panics on the task named `boom`.
    #[derive(Default)]
    struct Counting {
        now: AtomicUsize,
        max: AtomicUsize,
    }

    #[async_trait::async_trait]
    impl AttemptRunner for Counting {
        async fn run(
            &self,
            task: &Task,
            _: u32,
            _: TaskEvents,
            kill: CancellationToken,
        ) -> AttemptOutcome {
            let now = self.now.fetch_add(1, Ordering::SeqCst) + 1;
            self.max.fetch_max(now, Ordering::SeqCst);
            if task.id.as_str() == "boom" {
                self.now.fetch_sub(1, Ordering::SeqCst);
                panic!("boom!");
            }
            let outcome = tokio::select! {
                () = tokio::time::sleep(Duration::from_secs(10)) => AttemptOutcome::infrastructure_error("done".into()),
                () = kill.cancelled() => AttemptOutcome::infrastructure_error("killed".into()),
            };
            self.now.fetch_sub(1, Ordering::SeqCst);
            AttemptOutcome {
                status: TaskStatus::Passed,
                reason: None,
                ..outcome
            }
        }
    }

    fn work(ids: &[&str]) -> Vec<Scheduled> {
        ids.iter()
            .map(|id| Scheduled {
                task: task(id),
                previous: None,
            })
            .collect()
    }

    fn finished(rx: &mut EventReceiver) -> Vec<(String, TaskStatus, Option<String>)> {
        let mut out = Vec::new();
        while let Ok(event) = rx.try_recv() {
            if let Event::TaskFinished(f) = event {
                out.push((f.record.id.to_string(), f.record.status, f.record.error));
            }
        }
        out.sort_by(|a, b| a.0.cmp(&b.0));
        out
    }

    #[tokio::test(start_paused = true)]
    async fn never_runs_more_than_jobs_at_once() {
        let runner = Arc::new(Counting::default());
        let (tx, mut rx) = crate::event::channel();
        let ids: Vec<String> = (0..20).map(|i| format!("t{i:02}")).collect();
        let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
        SessionPool::new(3, runner.clone(), tx)
            .run(work(&ids), StopTokens::default())
            .await;
        assert_eq!(runner.max.load(Ordering::SeqCst), 3);
        let done = finished(&mut rx);
        assert_eq!(done.len(), 20);
        assert!(done.iter().all(|(_, s, _)| *s == TaskStatus::Passed));
    }

    #[tokio::test(start_paused = true)]
    async fn a_panicking_session_is_an_error_and_the_rest_run() {
        let (tx, mut rx) = crate::event::channel();
        let runner = Arc::new(Counting::default());
        SessionPool::new(2, runner, tx)
            .run(work(&["a", "boom", "c"]), StopTokens::default())
            .await;
        let done = finished(&mut rx);
        assert_eq!(done[0].1, TaskStatus::Passed);
        assert_eq!(
            done[1],
            (
                "boom".into(),
                TaskStatus::Error,
                Some("internal error: the session panicked: boom!".into())
            )
        );
        assert_eq!(done[2].1, TaskStatus::Passed);
    }

    #[tokio::test(start_paused = true)]
    async fn draining_cancels_unstarted_tasks_and_lets_running_ones_finish() {
        let (tx, mut rx) = crate::event::channel();
        let stop = StopTokens::default();
        let stopper = stop.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_secs(1)).await;
            stopper.interrupt();
        });
        let runner = Arc::new(Counting::default());
        let reason = SessionPool::new(2, runner, tx)
            .run(work(&["a", "b", "c", "d"]), stop.clone())
            .await;
        assert_eq!(reason.as_deref(), Some("interrupted (Ctrl-C)"));
        assert!(stop.interrupted());
        let done = finished(&mut rx);
        assert_eq!(done[0].1, TaskStatus::Passed, "a was running and finishes");
        assert_eq!(done[1].1, TaskStatus::Passed, "b was running and finishes");
        assert_eq!(
            done[2],
            (
                "c".into(),
                TaskStatus::Cancelled,
                Some("not started: interrupted (Ctrl-C)".into())
            )
        );
        assert_eq!(done[3].1, TaskStatus::Cancelled);
    }

    #[tokio::test(start_paused = true)]
    async fn every_task_gets_started_and_finished_events_in_order() {
        let (tx, mut rx) = crate::event::channel();
        SessionPool::new(1, Arc::new(Counting::default()), tx)
            .run(work(&["a", "b"]), StopTokens::default())
            .await;
        let mut order = Vec::new();
        while let Ok(event) = rx.try_recv() {
            match event {
                Event::TaskStarted(r) => order.push(format!("start {}", r.id)),
                Event::TaskFinished(f) => order.push(format!(
                    "end {} attempts={}",
                    f.record.id,
                    f.record.attempts.len()
                )),
                _ => {}
            }
        }
        assert_eq!(
            order,
            ["start a", "end a attempts=1", "start b", "end b attempts=1"]
        );
    }
}
