//! The SessionPool: runs attempts at most `jobs` at a time and owns everything the
//! user sees about scheduling — which task starts when, which attempt is retried and
//! when, when the run stops taking new tasks, and the final record of each task. A
//! session that errors or panics becomes that task's `error` result; only the stop
//! rules (signals, `--max-fail`, `--max-cost`, a fatal LLM error) stop the others.
//!
//! UFO's pool awaits sessions one after another with no isolation; this one keeps a
//! `JoinSet` of at most `jobs` attempts and refills it as each ends. A task waiting to
//! be retried holds no job slot.

mod lifecycle;
mod rules;
mod stop;

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use tokio::task::JoinSet;
use tokio::time::Instant;

pub(crate) use rules::{Budget, RetryPolicy};
pub(crate) use stop::StopTokens;

use crate::attempt::{AttemptOutcome, AttemptRunner, AttemptStop};
use crate::event::{Event, EventSender, TaskFinished};
use crate::pending::Backlog;
use crate::record::{HeldInputs, Inputs, TaskRecord};
use crate::task::{Loading, TaskSource};
use crate::units::Timestamp;
use rules::FailLimit;

/// How long a task file read again when its task starts may take: a file whose reads
/// block (a hung network file system) ends its task as an error rather than holding up
/// the run and its stop.
const TASK_FILE_READ: std::time::Duration = std::time::Duration::from_secs(10);

/// A task to run, with its record from an earlier invocation if there is one.
pub(crate) struct Scheduled {
    /// The task, or its file (read again shortly before it starts).
    pub(crate) task: TaskSource,
    /// What its result will depend on (recorded with it), but its task file's hash.
    pub(crate) inputs: HeldInputs,
    /// Its last record in this run dir (attempts continue from it).
    pub(crate) previous: Option<Box<TaskRecord>>,
}

/// How many tasks' files are read ahead of their start, at most (and never more than
/// `jobs`): a wave of `jobs` tasks ending together finds the next wave read.
const READ_AHEAD: usize = 256;

/// A task in the pool's hands.
struct Item {
    /// Held by its file until its first attempt starts (read a little ahead of it),
    /// then loaded.
    task: TaskSource,
    /// Its file being read ahead of its start, when it is.
    loading: Option<Loading>,
    inputs: Arc<Inputs>,
    /// (Boxed: most tasks have none, and a queue of a million is not a record each.)
    previous: Option<Box<TaskRecord>>,
    /// Retries already made in this invocation.
    retries: u32,
}

impl Item {
    /// A scheduled task, taken into the pool's hands.
    fn of(s: Scheduled) -> Self {
        Self {
            inputs: Arc::new(s.inputs.with_task_file(s.task.source_hash())),
            task: s.task,
            loading: None,
            previous: s.previous,
            retries: 0,
        }
    }

    /// A scheduled task whose file starts being read now.
    fn read_ahead(s: Scheduled) -> Self {
        let mut item = Self::of(s);
        item.loading = Some(item.task.begin_load());
        item
    }

    /// The task, read again (or as read ahead) within `limit`.
    fn load(
        &mut self,
        limit: std::time::Duration,
    ) -> Result<Arc<crate::task::Task>, crate::task::ReloadError> {
        match self.loading.take() {
            Some(loading) => loading.wait(limit),
            None => self.task.load_within(limit),
        }
    }
}

/// An attempt under way.
struct Running {
    item: Item,
    record: TaskRecord,
}

/// The pool.
pub(crate) struct SessionPool {
    jobs: usize,
    runner: Arc<dyn AttemptRunner>,
    events: EventSender,
    budget: Option<Budget>,
    retry: RetryPolicy,
    fail_limit: FailLimit,
    /// Results not yet written, and how many may wait before no new task starts.
    backlog: Option<(Backlog, usize)>,
}

impl SessionPool {
    /// A pool running at most `jobs` attempts at once with `runner`.
    pub(crate) fn new(jobs: usize, runner: Arc<dyn AttemptRunner>, events: EventSender) -> Self {
        Self {
            jobs: jobs.max(1),
            runner,
            events,
            budget: None,
            retry: RetryPolicy::none(),
            fail_limit: FailLimit::default(),
            backlog: None,
        }
    }

    /// Stops scheduling once `budget` is spent.
    pub(crate) fn with_budget(mut self, budget: Budget) -> Self {
        self.budget = Some(budget);
        self
    }

    /// Retries infrastructure errors as `policy` says.
    pub(crate) fn with_retries(mut self, policy: RetryPolicy) -> Self {
        self.retry = policy;
        self
    }

    /// Starts no new task while `limit` or more of its results are not yet written.
    pub(crate) fn with_backlog(mut self, backlog: Backlog, limit: usize) -> Self {
        self.backlog = Some((backlog, limit.max(1)));
        self
    }

    /// Whether too many results wait to be written for a new task to start.
    fn flooded(&self) -> bool {
        self.backlog
            .as_ref()
            .is_some_and(|(backlog, limit)| backlog.len() >= *limit)
    }

    /// Stops scheduling after `max` tasks did not pass.
    pub(crate) fn with_max_fail(mut self, max: Option<u32>) -> Self {
        self.fail_limit = FailLimit { max, seen: 0 };
        self
    }

    /// Runs every task unless stopped; each task ends with exactly one `TaskFinished`.
    /// Returns why the run stopped early, if it did.
    pub(crate) async fn run(mut self, work: Vec<Scheduled>, stop: StopTokens) -> Option<String> {
        stop.mark_started();
        // Made an item only when taken: a queue of a million holds no shared inputs.
        let mut queue: VecDeque<Scheduled> = work.into();
        // The next tasks of the queue, their files being read.
        let mut ahead: VecDeque<Item> = VecDeque::new();
        let read_ahead = self.jobs.min(READ_AHEAD);
        let mut waiting: Vec<(Instant, Item)> = Vec::new();
        let mut set: JoinSet<AttemptOutcome> = JoinSet::new();
        let mut running: HashMap<tokio::task::Id, Running> = HashMap::new();
        let mut stopping = false;
        loop {
            while !self.stopping(&stop, &mut stopping) && set.len() < self.jobs && !self.flooded() {
                // Asked for in batches, so the reader wakes once for many.
                if ahead.len() <= read_ahead / 2 {
                    while ahead.len() < read_ahead
                        && let Some(next) = queue.pop_front()
                    {
                        ahead.push_back(Item::read_ahead(next));
                    }
                }
                let Some(item) = take_due(&mut waiting).or_else(|| ahead.pop_front()) else {
                    break;
                };
                if let Some((id, entry)) = self.start(&mut set, item, &stop) {
                    running.insert(id, entry);
                }
            }
            if set.is_empty()
                && (stopping || (waiting.is_empty() && ahead.is_empty() && queue.is_empty()))
            {
                break;
            }
            let flooded = self.flooded();
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
                () = async {
                    if let Some((backlog, limit)) = &self.backlog {
                        backlog.below(*limit).await;
                    }
                }, if flooded && set.len() < self.jobs => {}
            }
        }
        let stopped = stop.reason();
        let reason = stopped.as_deref().unwrap_or("the run stopped");
        let unrun = waiting.into_iter().map(|(_, item)| item);
        self.record_unrun(unrun, ahead, queue, reason);
        stopped
    }

    /// Records the tasks the run stopped before: those waiting for a retry, those read
    /// ahead and those still queued, in that order, each ending with its `TaskFinished`.
    fn record_unrun(
        &self,
        waiting: impl Iterator<Item = Item>,
        mut ahead: VecDeque<Item>,
        queue: VecDeque<Scheduled>,
        reason: &str,
    ) {
        // The files read ahead for tasks with nothing on disk yet are not wanted (they
        // are recorded without being read): the reads not begun yet are not made.
        for item in ahead.iter_mut().filter(|item| item.previous.is_none()) {
            item.loading = None;
        }
        // Once a file does not answer, the rest are not read again: the stop must not
        // wait for each of them in turn.
        let mut read = true;
        for mut item in waiting.chain(ahead).chain(queue.into_iter().map(Item::of)) {
            let previous = item.previous.take().map(|b| *b);
            // A task with nothing on disk yet is recorded from what the batch holds: its
            // file is not read again, and no folder is written for it (see
            // `TaskFinished::unstarted`). One with an earlier record gets its new one.
            if previous.is_none() {
                let record = lifecycle::not_started_unread(&item.task, &item.inputs, None, reason);
                self.events
                    .send(Event::TaskFinished(Arc::new(TaskFinished::unstarted(
                        record,
                    ))));
                continue;
            }
            let began = std::time::Instant::now();
            let loaded = read.then(|| item.load(TASK_FILE_READ));
            read &= began.elapsed() < TASK_FILE_READ;
            let record = match loaded {
                Some(Ok(task)) => lifecycle::not_started(&task, &item.inputs, previous, reason),
                Some(Err(why)) => lifecycle::unreadable(&item.task, &item.inputs, previous, why),
                None => lifecycle::not_started_unread(&item.task, &item.inputs, previous, reason),
            };
            self.events
                .send(Event::TaskFinished(Arc::new(TaskFinished::without_run(
                    record,
                    Vec::new(),
                ))));
        }
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

    /// Starts an attempt at `item`; a task whose file can no longer be read ends at once,
    /// as an `error`.
    fn start(
        &self,
        set: &mut JoinSet<AttemptOutcome>,
        mut item: Item,
        stop: &StopTokens,
    ) -> Option<(tokio::task::Id, Running)> {
        let task = match item.load(TASK_FILE_READ) {
            Ok(task) => task,
            Err(why) => {
                let record = lifecycle::unreadable(
                    &item.task,
                    &item.inputs,
                    item.previous.take().map(|b| *b),
                    why,
                );
                self.events
                    .send(Event::TaskFinished(Arc::new(TaskFinished::without_run(
                        record,
                        Vec::new(),
                    ))));
                return None;
            }
        };
        // A retry needs no second reading.
        item.task = TaskSource::Loaded(Arc::clone(&task));
        let record = lifecycle::open_attempt(
            &task,
            &item.inputs,
            item.previous.take().map(|b| *b),
            Timestamp::now(),
        );
        let previous_attempts = record.attempt_count() - 1;
        self.events
            .send(Event::TaskStarted(Box::new(record.clone())));
        let events = self.events.for_task(task.id.clone());
        let runner = Arc::clone(&self.runner);
        let stop = AttemptStop {
            kill: stop.kill.clone(),
            stopping: stop.drain.clone(),
        };
        let handle =
            set.spawn(async move { runner.run(&task, previous_attempts, events, stop).await });
        Some((handle.id(), Running { item, record }))
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
        lifecycle::close_attempt(&mut record, &outcome, Timestamp::now());
        if let Some(reason) = &outcome.fatal {
            stop.stop(format!("{reason} (every task would fail the same way)"));
        }
        let delay = (!stop.drain.is_cancelled())
            .then(|| self.retry.delay(&outcome, item.retries + 1))
            .flatten();
        if let Some(delay) = delay {
            lifecycle::await_retry(&mut record, delay.as_secs_f64());
            self.events.send(Event::TaskRetrying {
                record: Box::new(record.clone()),
                delay_s: delay.as_secs_f64(),
            });
            item.retries += 1;
            item.previous = Some(Box::new(record));
            return Some((Instant::now() + delay, item));
        }
        if let Some(reason) = self.fail_limit.count(outcome.status) {
            stop.stop(reason);
        }
        tracing::debug!(task = %record.id, status = %record.status, "task finished");
        self.events.send(Event::TaskFinished(Arc::new(TaskFinished {
            record,
            trajectory: outcome.trajectory,
            evaluation: outcome.evaluation,
            plan: outcome.plan,
            problems: Vec::new(),
            unstarted: false,
            pending: self.backlog.as_ref().map(|(backlog, _)| backlog.hold()),
        })));
        None
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
    let text = crate::text::panic_text(&*e.into_panic());
    format!("internal error: the session panicked: {text}")
}

#[cfg(test)]
mod tests;
