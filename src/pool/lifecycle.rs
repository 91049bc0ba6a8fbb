//! How a task's record changes over its life in the pool: created from the task file,
//! an attempt opened, an attempt closed (finished or to be retried), or never started.

use crate::attempt::AttemptOutcome;
use crate::record::{
    AttemptRecord, AttemptStatus, Inputs, SessionType, ShapeName, TaskRecord, TaskStatus,
};
use crate::task::{Task, TaskSource};
use crate::units::{Timestamp, seconds};

/// A task's first record.
pub(crate) fn new_record(task: &Task) -> TaskRecord {
    let mut record = TaskRecord::new(
        task.id.clone(),
        task.source.display().to_string(),
        task.source_hash.clone(),
        ShapeName::of(&task.shape),
        SessionType::of(&task.shape),
        task.request.clone(),
    );
    record.tags = task.tags.clone();
    record.domain = task.domain();
    record.warnings = task.warnings.clone();
    record.repeat = task.repeat;
    record
}

/// The record at the start of a new attempt (`previous` from an earlier invocation or
/// attempt, if any).
pub(super) fn open_attempt(
    task: &Task,
    inputs: &Inputs,
    previous: Option<TaskRecord>,
    now: Timestamp,
) -> TaskRecord {
    let mut record = previous.unwrap_or_else(|| new_record(task));
    refresh_from_task(&mut record, task, inputs);
    for earlier in &mut record.attempts {
        if earlier.status == AttemptStatus::Running {
            earlier.status = AttemptStatus::Interrupted;
            earlier.error = Some(
                "the runner stopped during this attempt (killed, or the machine went down); it has no result"
                    .to_string(),
            );
        }
    }
    let number = record.attempt_count() + 1;
    record.status = TaskStatus::Running;
    record.error = None;
    record.blame = None;
    record.complete = None;
    record.judge = None;
    record.score = None;
    record.experience = None;
    record.started = Some(now);
    record.finished = None;
    record.attempts.push(AttemptRecord {
        attempt: number,
        started: now,
        finished: None,
        status: AttemptStatus::Running,
        error: None,
        device: None,
    });
    record
}

/// Records how an attempt ended: its status, reason, counts, tokens and cost (which
/// add up over attempts).
pub(super) fn close_attempt(record: &mut TaskRecord, outcome: &AttemptOutcome, now: Timestamp) {
    record.status = outcome.status;
    record.error = outcome.reason.clone();
    record.blame = outcome
        .blame
        .filter(|_| outcome.status == crate::record::TaskStatus::Error);
    record.complete = outcome.evaluation.as_ref().map(|e| e.complete);
    record.judge = outcome.evaluation.as_ref().and_then(|e| e.judge.clone());
    record.score = outcome.evaluation.as_ref().and_then(|e| e.score);
    record.experience = (!outcome.experience.is_empty()).then(|| outcome.experience.clone());
    record.finished = Some(now);
    record.duration_s = record
        .started
        .map(|s| seconds(now.since(s)))
        .unwrap_or_default();
    record.rounds = outcome.rounds;
    record.steps = outcome.steps;
    record.round_steps = outcome.round_steps.clone();
    if let Some(session) = outcome.session {
        record.session = session;
    }
    record.usage.add(outcome.usage);
    record.llm.add(outcome.llm);
    record.cost_usd = match (record.cost_usd, outcome.cost.usd()) {
        (Some(a), Some(b)) => Some(a + b),
        _ => None,
    };
    if let Some(last) = record.attempts.last_mut() {
        last.finished = Some(now);
        last.status = outcome.status.into();
        last.error = outcome.reason.clone();
        last.device = outcome.device.clone();
    }
}

/// A record waiting for a retry: not final, so a crash during the wait runs it again.
pub(super) fn await_retry(record: &mut TaskRecord, delay_s: f64) {
    let attempt = record.attempt_count();
    let why = record.error.take().unwrap_or_default();
    record.status = TaskStatus::Pending;
    record.blame = None;
    record.error = Some(format!(
        "attempt {attempt} ended in error ({why}); retrying in {delay_s:.1}s"
    ));
}

/// The record of a task that never started because the run stopped.
pub(super) fn not_started(
    task: &Task,
    inputs: &Inputs,
    previous: Option<TaskRecord>,
    reason: &str,
) -> TaskRecord {
    let mut record = previous.unwrap_or_else(|| new_record(task));
    refresh_from_task(&mut record, task, inputs);
    record.status = TaskStatus::Cancelled;
    record.error = Some(format!("not started: {reason}"));
    record.blame = None;
    record
}

/// The record of a task whose file could not be read again when it was to start (or
/// to be recorded as not started): an `error` saying why, with no attempt made.
pub(super) fn unreadable(
    source: &TaskSource,
    inputs: &Inputs,
    previous: Option<TaskRecord>,
    why: crate::task::ReloadError,
) -> TaskRecord {
    use crate::tool::Blamed;
    let mut record = record_of_source(source, inputs, previous);
    record.status = TaskStatus::Error;
    record.error = Some(why.to_string());
    record.blame = Some(why.blame());
    record
}

/// The record of a task that never started because the run stopped, made without
/// reading its task file again (an earlier file did not answer at the stop).
pub(super) fn not_started_unread(
    source: &TaskSource,
    inputs: &Inputs,
    previous: Option<TaskRecord>,
    reason: &str,
) -> TaskRecord {
    let mut record = record_of_source(source, inputs, previous);
    record.status = TaskStatus::Cancelled;
    record.error = Some(format!("not started: {reason}"));
    record.blame = None;
    record
}

/// A task's record from what the batch holds of it (its earlier record, or its id,
/// file and repetition), for when its file is not read.
fn record_of_source(
    source: &TaskSource,
    inputs: &Inputs,
    previous: Option<TaskRecord>,
) -> TaskRecord {
    let mut record = previous.unwrap_or_else(|| {
        TaskRecord::new(
            source.id().clone(),
            source.path().display().to_string(),
            source.source_hash(),
            ShapeName::Invalid,
            SessionType::None,
            String::new(),
        )
    });
    record.inputs = Some(inputs.clone());
    record.repeat = source.repeat();
    record.complete = None;
    record
}

/// Brings a record from an earlier invocation up to date with the task file as it is now.
fn refresh_from_task(record: &mut TaskRecord, task: &Task, inputs: &Inputs) {
    record.source = task.source.display().to_string();
    record.source_hash = task.source_hash.clone();
    record.inputs = Some(inputs.clone());
    record.shape = ShapeName::of(&task.shape);
    record.session = SessionType::of(&task.shape);
    record.request = task.request.clone();
    record.tags = task.tags.clone();
    record.domain = task.domain();
    record.warnings = task.warnings.clone();
    record.repeat = task.repeat;
}
