//! Tests of the scheduling loop with injected attempt runners and a paused clock.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use super::*;
use crate::event::{EventReceiver, TaskEvents};
use crate::record::TaskStatus;
use crate::task::Task;
use crate::testutil::task;

/// Counts how many attempts run at once; panics on the task named `boom`.
#[derive(Default)]
struct Counting {
    now: AtomicUsize,
    max: AtomicUsize,
}

#[async_trait::async_trait]
impl AttemptRunner for Counting {
    async fn run(&self, task: &Task, _: u32, _: TaskEvents, stop: AttemptStop) -> AttemptOutcome {
        let now = self.now.fetch_add(1, Ordering::SeqCst) + 1;
        self.max.fetch_max(now, Ordering::SeqCst);
        if task.id.as_str() == "boom" {
            self.now.fetch_sub(1, Ordering::SeqCst);
            panic!("boom!");
        }
        let outcome = tokio::select! {
            () = tokio::time::sleep(Duration::from_secs(10)) => AttemptOutcome::infrastructure_error("done".into()),
            () = stop.kill.cancelled() => AttemptOutcome::infrastructure_error("killed".into()),
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
            inputs: Default::default(),
            task: TaskSource::Loaded(Arc::new(task(id))),
            previous: None,
        })
        .collect()
}

/// The final records sent so far, in the order they were sent.
fn finished_records(rx: &mut EventReceiver) -> Vec<TaskRecord> {
    let mut out = Vec::new();
    while let Ok(event) = rx.try_recv() {
        if let Event::TaskFinished(f) = event {
            out.push(f.record.clone());
        }
    }
    out
}

fn finished(rx: &mut EventReceiver) -> Vec<(String, TaskStatus, Option<String>)> {
    let mut out: Vec<_> = finished_records(rx)
        .into_iter()
        .map(|r| (r.id.to_string(), r.status, r.error))
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// Interrupts the run (as Ctrl-C does) a second into it.
fn interrupt_after_a_second(stop: &StopTokens) {
    let stopper = stop.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(1)).await;
        stopper.interrupt("Ctrl-C", Duration::from_secs(30));
    });
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
    interrupt_after_a_second(&stop);
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
async fn tasks_read_ahead_of_a_stop_end_once_each_in_order_as_not_started() {
    let dir = tempfile::tempdir().unwrap();
    let ids: Vec<String> = (0..8).map(|i| format!("t{i}")).collect();
    let mut work: Vec<Scheduled> = ids
        .iter()
        .map(|id| Scheduled {
            inputs: Default::default(),
            task: TaskSource::held_by_file(
                &dir.path().join(format!("{id}.json")),
                &format!(r#"{{"request": "do {id}", "actions": []}}"#),
                id,
            ),
            previous: None,
        })
        .collect();
    // One of those read ahead has a record from an earlier invocation: its file is read
    // (as read ahead) for its new record, which keeps its attempts.
    let earlier = work[2].task.load_within(Duration::from_secs(5)).unwrap();
    let mut record = lifecycle::new_record(&earlier);
    record.request = "as it was then".into();
    record.attempts.push(crate::record::AttemptRecord {
        attempt: 1,
        started: crate::units::Timestamp::now(),
        finished: None,
        status: crate::record::AttemptStatus::Interrupted,
        error: Some("killed".into()),
        device: None,
    });
    work[2].previous = Some(Box::new(record));
    let (tx, mut rx) = crate::event::channel();
    let stop = StopTokens::default();
    interrupt_after_a_second(&stop);
    SessionPool::new(2, Arc::new(Counting::default()), tx)
        .run(work, stop)
        .await;
    let ended = finished_records(&mut rx);
    let ids_ended: Vec<&str> = ended.iter().map(|r| r.id.as_str()).collect();
    // The running ones finish first, then the rest are recorded in their order.
    assert_eq!(ids_ended, ["t0", "t1", "t2", "t3", "t4", "t5", "t6", "t7"]);
    for record in &ended {
        let id = record.id.as_str();
        let started = id == "t0" || id == "t1";
        let expected = if started {
            TaskStatus::Passed
        } else {
            TaskStatus::Cancelled
        };
        assert_eq!(record.status, expected, "{id}");
        let expected_attempts = usize::from(started) + usize::from(id == "t2");
        assert_eq!(record.attempts.len(), expected_attempts, "{id}");
        if id == "t2" {
            assert_eq!(record.request, "do t2", "its file was read at the stop");
        }
    }
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
        _: AttemptStop,
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
        backoff: crate::backoff::Backoff {
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
                done.insert(f.record.id.to_string(), f.record.clone());
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
    assert_eq!(a.attempts[0].status, crate::record::AttemptStatus::Error);
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
