//! The SessionPool: runs attempts at most `jobs` at a time and owns everything the
//! user sees about scheduling — which task starts when, which attempt is retried and
//! when, when the run stops taking new tasks, and the final record of each task. A
//! session that errors or panics becomes that task's `error` result; only the stop
//! rules (signals, `--max-fail`, `--max-cost`, a fatal LLM error) stop the others.
//!
//! UFO's pool awaits sessions one after another with no isolation; this one keeps a
//! `JoinSet` of at most `jobs` attempts and refills it as each ends. A task waiting to
//! be retried holds no job slot.

mod record;
mod rules;
mod stop;

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use tokio::task::JoinSet;
use tokio::time::Instant;

pub use record::new_record;
pub use rules::{Budget, RetryPolicy};
pub use stop::StopTokens;

use crate::attempt::{AttemptOutcome, AttemptRunner};
use crate::event::{Event, EventSender, TaskFinished};
use crate::record::TaskRecord;
use crate::task::Task;
use crate::timestamp::Timestamp;
use rules::FailLimit;

/// A task to run, with its record from an earlier invocation if there is one.
pub struct Scheduled {
    /// The task.
    pub task: Task,
    /// Its last record in this run dir (attempts continue from it).
    pub previous: Option<TaskRecord>,
}

/// A task in the pool's hands.
struct Item {
    task: Arc<Task>,
    previous: Option<TaskRecord>,
    /// Retries already made in this invocation.
    retries: u32,
}

/// An attempt under way.
struct Running {
    item: Item,
    record: TaskRecord,
}

/// The pool.
pub struct SessionPool {
    jobs: usize,
    runner: Arc<dyn AttemptRunner>,
    events: EventSender,
    budget: Option<Budget>,
    retry: RetryPolicy,
    fail_limit: FailLimit,
}

impl SessionPool {
    /// A pool running at most `jobs` attempts at once with `runner`.
    pub fn new(jobs: usize, runner: Arc<dyn AttemptRunner>, events: EventSender) -> Self {
        Self {
            jobs: jobs.max(1),
            runner,
            events,
            budget: None,
            retry: RetryPolicy::none(),
            fail_limit: FailLimit::default(),
        }
    }

    /// Stops scheduling once `budget` is spent.
    pub fn with_budget(mut self, budget: Budget) -> Self {
        self.budget = Some(budget);
        self
    }

    /// Retries infrastructure errors as `policy` says.
    pub fn with_retries(mut self, policy: RetryPolicy) -> Self {
        self.retry = policy;
        self
    }

    /// Stops scheduling after `max` tasks did not pass.
    pub fn with_max_fail(mut self, max: Option<u32>) -> Self {
        self.fail_limit = FailLimit { max, seen: 0 };
        self
    }

    /// Runs every task unless stopped; each task ends with exactly one `TaskFinished`.
    /// Returns why the run stopped early, if it did.
    pub async fn run(mut self, work: Vec<Scheduled>, stop: StopTokens) -> Option<String> {
        let mut queue: VecDeque<Item> = work
            .into_iter()
            .map(|s| Item {
                task: Arc::new(s.task),
                previous: s.previous,
                retries: 0,
            })
            .collect();
        let mut waiting: Vec<(Instant, Item)> = Vec::new();
        let mut set: JoinSet<AttemptOutcome> = JoinSet::new();
        let mut running: HashMap<tokio::task::Id, Running> = HashMap::new();
        let mut stopping = false;
        loop {
            while !self.stopping(&stop, &mut stopping) && set.len() < self.jobs {
                let Some(item) = take_due(&mut waiting).or_else(|| queue.pop_front()) else {
                    break;
                };
                let (id, entry) = self.start(&mut set, item, &stop);
                running.insert(id, entry);
            }
            if set.is_empty() && (stopping || waiting.is_empty()) {
                break;
            }
            let next_due = waiting.iter().map(|(at, _)| *at).min();
            let wake = tokio::time::sleep_until(next_due.unwrap_or_else(Instant::now));
            tokio::select! {
                biased;
                () = stop.drain.cancelled(), if !stopping => {
                    self.stopping(&stop, &mut stopping);
                }
                Some(joined) = set.join_next_with_id(), if !set.is_empty() => {
                    let (tid, outcome) = match joined {
                        Ok((tid, outcome)) => (tid, outcome),
                        Err(e) => (e.id(), AttemptOutcome::infrastructure_error(panic_message(e))),
                    };
                    if let Some(entry) = running.remove(&tid)
                        && let Some((at, item)) = self.ended(entry, outcome, &stop)
                    {
                        waiting.push((at, item));
                    }
                }
                () = wake, if next_due.is_some() && set.len() < self.jobs => {}
            }
        }
        let reason = stop.reason();
        for item in waiting.into_iter().map(|(_, item)| item).chain(queue) {
            let record = record::not_started(
                &item.task,
                item.previous,
                reason.as_deref().unwrap_or("the run stopped"),
            );
            self.send_finished(
                record,
                AttemptOutcome::infrastructure_error(String::new()),
                false,
            );
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
            let grace_s = stop.grace().map(|g| g.as_secs_f64());
            self.events.send(Event::Stopping { reason, grace_s });
        }
        *stopping
    }

    fn start(
        &self,
        set: &mut JoinSet<AttemptOutcome>,
        mut item: Item,
        stop: &StopTokens,
    ) -> (tokio::task::Id, Running) {
        let record = record::open_attempt(&item.task, item.previous.take(), Timestamp::now());
        let previous_attempts = record.attempt_count() - 1;
        self.events
            .send(Event::TaskStarted(Box::new(record.clone())));
        let events = self.events.for_task(item.task.id.clone());
        let runner = Arc::clone(&self.runner);
        let kill = stop.kill.clone();
        let task = Arc::clone(&item.task);
        let handle =
            set.spawn(async move { runner.run(&task, previous_attempts, events, kill).await });
        (handle.id(), Running { item, record })
    }

    /// An attempt ended: either the task is final, or it waits for a retry (returned
    /// with when it is due).
    fn ended(
        &mut self,
        entry: Running,
        outcome: AttemptOutcome,
        stop: &StopTokens,
    ) -> Option<(Instant, Item)> {
        let Running {
            mut item,
            mut record,
        } = entry;
        record::close_attempt(&mut record, &outcome, Timestamp::now());
        if let Some(reason) = &outcome.fatal {
            stop.stop(format!("{reason} (every task would fail the same way)"));
        }
        let delay = (!stop.drain.is_cancelled())
            .then(|| self.retry.delay(&outcome, item.retries + 1))
            .flatten();
        if let Some(delay) = delay {
            record::await_retry(&mut record, delay.as_secs_f64());
            self.events.send(Event::TaskRetrying {
                record: Box::new(record.clone()),
                delay_s: delay.as_secs_f64(),
            });
            item.retries += 1;
            item.previous = Some(record);
            return Some((Instant::now() + delay, item));
        }
        if let Some(reason) = self.fail_limit.count(outcome.status) {
            stop.stop(reason);
        }
        tracing::debug!(task = %record.id, status = %record.status, "task finished");
        self.send_finished(record, outcome, true);
        None
    }

    fn send_finished(&self, record: TaskRecord, outcome: AttemptOutcome, ran: bool) {
        let (trajectory, evaluation, plan) = if ran {
            (outcome.trajectory, outcome.evaluation, outcome.plan)
        } else {
            (Vec::new(), None, None)
        };
        self.events.send(Event::TaskFinished(Box::new(TaskFinished {
            record,
            trajectory,
            evaluation,
            plan,
            problems: Vec::new(),
        })));
    }
}

/// The waiting item whose retry is due first, if one is due.
fn take_due(waiting: &mut Vec<(Instant, Item)>) -> Option<Item> {
    let now = Instant::now();
    let (i, _) = waiting
        .iter()
        .enumerate()
        .filter(|(_, (at, _))| *at <= now)
        .min_by_key(|(_, (at, _))| *at)?;
    Some(waiting.swap_remove(i).1)
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

    use tokio_util::sync::CancellationToken;

    use super::*;
    use crate::event::{EventReceiver, TaskEvents};
    use crate::record::TaskStatus;
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
            stopper.interrupt("Ctrl-C", Duration::from_secs(30));
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

    /// Fails its first `failures` attempts of each task with an infrastructure error
    /// (or a deterministic one for tasks named `det*`), then passes; `bad*` tasks fail.
    struct Flaky {
        failures: u32,
        seen: std::sync::Mutex<HashMap<String, u32>>,
    }

    #[async_trait::async_trait]
    impl AttemptRunner for Flaky {
        async fn run(
            &self,
            task: &Task,
            previous: u32,
            _: TaskEvents,
            _: CancellationToken,
        ) -> AttemptOutcome {
            let id = task.id.to_string();
            let n = {
                let mut seen = self.seen.lock().unwrap();
                let n = seen.entry(id.clone()).or_default();
                *n += 1;
                *n
            };
            assert_eq!(previous, n - 1, "each attempt knows the attempts before it");
            let mut o =
                AttemptOutcome::infrastructure_error(format!("executor crashed on attempt {n}"));
            if id.starts_with("det") {
                o.retryable = false;
            } else if id.starts_with("bad") {
                o.status = TaskStatus::Failed;
                o.retryable = false;
            } else if n > self.failures {
                o.status = TaskStatus::Passed;
                o.reason = None;
            }
            o
        }
    }

    fn flaky(failures: u32) -> Arc<Flaky> {
        Arc::new(Flaky {
            failures,
            seen: Default::default(),
        })
    }

    fn retries(n: u32) -> RetryPolicy {
        RetryPolicy {
            retries: n,
            backoff: crate::retry::Backoff {
                base: Duration::from_secs(2),
                max: Duration::from_secs(60),
            },
        }
    }

    #[tokio::test(start_paused = true)]
    async fn infrastructure_errors_are_retried_with_every_attempt_kept() {
        let (tx, mut rx) = crate::event::channel();
        let pool = SessionPool::new(2, flaky(1), tx).with_retries(retries(2));
        pool.run(work(&["a", "det", "bad"]), StopTokens::default())
            .await;
        let mut retried = Vec::new();
        let mut done = HashMap::new();
        while let Ok(event) = rx.try_recv() {
            match event {
                Event::TaskRetrying { record, delay_s } => {
                    retried.push((record.id.to_string(), delay_s, record.status))
                }
                Event::TaskFinished(f) => {
                    done.insert(f.record.id.to_string(), f.record);
                }
                _ => {}
            }
        }
        assert_eq!(
            retried.len(),
            1,
            "only the infrastructure error is retried: {retried:?}"
        );
        assert_eq!(retried[0].0, "a");
        assert!(
            (1.0..=2.0).contains(&retried[0].1),
            "backoff with jitter: {}",
            retried[0].1
        );
        assert_eq!(retried[0].2, TaskStatus::Pending);
        let a = &done["a"];
        assert_eq!(a.status, TaskStatus::Passed);
        assert_eq!(a.attempts.len(), 2);
        assert_eq!(a.attempts[0].status, TaskStatus::Error);
        assert_eq!(
            a.attempts[0].error.as_deref(),
            Some("executor crashed on attempt 1")
        );
        assert_eq!(
            done["det"].attempts.len(),
            1,
            "a deterministic error does not loop"
        );
        assert_eq!(done["bad"].attempts.len(), 1, "failed is never retried");
    }

    #[tokio::test(start_paused = true)]
    async fn retries_run_out() {
        let (tx, mut rx) = crate::event::channel();
        SessionPool::new(1, flaky(5), tx)
            .with_retries(retries(2))
            .run(work(&["a"]), StopTokens::default())
            .await;
        let done = finished(&mut rx);
        assert_eq!(done[0].1, TaskStatus::Error);
        assert_eq!(done[0].2.as_deref(), Some("executor crashed on attempt 3"));
    }

    #[tokio::test(start_paused = true)]
    async fn max_fail_stops_scheduling() {
        let (tx, mut rx) = crate::event::channel();
        let stop = StopTokens::default();
        let reason = SessionPool::new(1, flaky(0), tx)
            .with_max_fail(Some(2))
            .run(work(&["bad1", "ok", "bad2", "ok2", "ok3"]), stop)
            .await;
        assert_eq!(
            reason.as_deref(),
            Some("2 tasks did not pass (--max-fail 2)")
        );
        let done = finished(&mut rx);
        let statuses: Vec<(&str, TaskStatus)> =
            done.iter().map(|(id, s, _)| (id.as_str(), *s)).collect();
        assert_eq!(
            statuses,
            [
                ("bad1", TaskStatus::Failed),
                ("bad2", TaskStatus::Failed),
                ("ok", TaskStatus::Passed),
                ("ok2", TaskStatus::Cancelled),
                ("ok3", TaskStatus::Cancelled)
            ]
        );
    }
}
