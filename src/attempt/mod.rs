//! One attempt at one task, end to end: prepare the workspace, run `setup`, build the
//! session for the task's shape, run it within the task's wall-clock limit, evaluate,
//! and say what happened. The trajectory survives a timeout or a kill: the session
//! lives outside the future that is abandoned.

mod body;
mod evaluate;
mod experience;
mod factory;
mod means;
mod osworld_score;
mod outcome;
mod plan;
mod preparers;
mod settings;
mod stopping;
mod workspace;

pub(crate) use outcome::{AttemptOutcome, rule};
pub(crate) use settings::{AttemptSettings, AttemptStop};

use crate::event::TaskEvents;
use crate::llm::WaitClock;
use crate::task::Task;
use crate::tool::{Blame, Failure};
use body::{Progress, Stage, body, stage_name};
use outcome::Ended;

/// Runs attempts for the pool. The pool only schedules; this is what it schedules, so
/// tests can give it attempts that panic, hang or count themselves.
#[async_trait::async_trait]
pub(crate) trait AttemptRunner: Send + Sync + 'static {
    /// Runs one attempt of `task`.
    async fn run(
        &self,
        task: &Task,
        previous_attempts: u32,
        events: TaskEvents,
        stop: AttemptStop,
    ) -> AttemptOutcome;
}

#[async_trait::async_trait]
impl AttemptRunner for AttemptSettings {
    async fn run(
        &self,
        task: &Task,
        previous_attempts: u32,
        events: TaskEvents,
        stop: AttemptStop,
    ) -> AttemptOutcome {
        run_attempt(task, self, previous_attempts, events, stop).await
    }
}

/// An attempt whose folders could not be made: logged, and an infrastructure error.
fn setup_failed(events: &TaskEvents, reason: String) -> AttemptOutcome {
    events.log(crate::event::Level::Error, reason.clone());
    AttemptOutcome::infrastructure_error(reason)
}

/// An attempt whose workspace could not be made ready: the machine's failure is an
/// infrastructure error (retried), the task file's an error of its own (not retried).
fn unprepared(events: &TaskEvents, e: workspace::PrepareError) -> AttemptOutcome {
    match e {
        workspace::PrepareError::Machine(reason) => setup_failed(events, reason),
        workspace::PrepareError::TaskFile(reason) => {
            events.log(crate::event::Level::Error, reason.clone());
            AttemptOutcome::failed(Failure::new(Blame::TaskFile, reason))
        }
    }
}

/// The attempt's workspace made (the earlier attempt's kept under `attempts/`) with the
/// task's object copied in; `Err` is the attempt's outcome when it cannot be.
async fn ready_workspace(
    task: &Task,
    settings: &AttemptSettings,
    previous_attempts: u32,
    events: &TaskEvents,
    stop: &AttemptStop,
) -> Result<(), AttemptOutcome> {
    let dir = settings.layout.task(&task.id);
    let ws = dir.workspace();
    let archive = dir.attempts();
    let tmp = dir.tmp();
    // A folder that cannot be made on a file system that does not answer holds this
    // attempt until the run kills it, not longer.
    let prepared = tokio::select! {
        prepared = workspace::prepare(&ws, &tmp, &archive, previous_attempts, &task.files) => prepared,
        () = stop.kill.cancelled() => {
            return Err(AttemptOutcome::from_end(Ended::Killed, None, stage_name(Stage::Setup)));
        }
    };
    if let Err(e) = prepared {
        return Err(unprepared(events, e));
    }
    match workspace::copy_object(task, dir.path(), &ws).await {
        Ok(Some(from)) => events.info(format!("copied {} into the workspace", from.display())),
        Ok(None) => {}
        Err(e) => return Err(unprepared(events, e)),
    }
    for warning in &task.warnings {
        events.warn(format!("task file: {warning}"));
    }
    Ok(())
}

/// The attempt's body run within the task's wall-clock limit (less the time `waits`
/// counts waiting for the LLM provider), or until the run kills it.
async fn within_limit(
    task: &Task,
    settings: &AttemptSettings,
    executor: &mut dyn crate::executor::Executor,
    progress: &mut Progress,
    events: &TaskEvents,
    stop: &AttemptStop,
    waits: &std::sync::Arc<WaitClock>,
) -> Ended {
    let limit = task.timeout.unwrap_or(settings.timeout);
    let started = tokio::time::Instant::now();
    let body = waits.scope(body(task, settings, executor, progress, events));
    tokio::select! {
        ended = body => ended,
        () = waits.deadline(started, limit) => Ended::TimedOut {
            limit,
            waited: waits.waited(),
        },
        () = stop.kill.cancelled() => Ended::Killed,
    }
}

/// The OSWorld part of `task`'s attempt, when it is one of OSWorld's: it runs only where
/// what it needs is, and an agent can take it; nothing of it runs otherwise (`Err` is
/// the attempt's outcome).
async fn osworld_plan(
    task: &Task,
    settings: &AttemptSettings,
    events: &TaskEvents,
) -> Result<Option<crate::osworld::OsWorldPlan>, AttemptOutcome> {
    use crate::osworld::Support;
    let Some(osworld) = &task.osworld else {
        return Ok(None);
    };
    let failed = |failure: Failure| {
        events.log(crate::event::Level::Error, failure.message.clone());
        AttemptOutcome::failed(failure)
    };
    match settings.osworld.support(osworld, &task.source).await {
        Support::Runs(parts) => {
            // Nothing of it starts when no agent can take it.
            if let Some(failure) = factory::missing_agent(task, settings) {
                return Err(failed(failure));
            }
            let room = settings.layout.task(&task.id).file("osworld");
            match crate::osworld::OsWorldPlan::new(osworld.clone(), parts, &room) {
                Ok(plan) => Ok(Some(plan)),
                Err(failure) => Err(setup_failed(events, failure.message)),
            }
        }
        Support::Unsupported(why) => {
            events.warn(format!("unsupported: {why}"));
            Err(AttemptOutcome::unsupported(why))
        }
        Support::Broken(failure) => Err(failed(failure)),
        Support::TaskFile(why) => Err(failed(Failure::new(Blame::TaskFile, why))),
    }
}

/// Runs one attempt. `previous_attempts` is how many attempts came before (their
/// workspaces are kept under `attempts/`). `stop` ends it, or says the run is stopping.
pub(crate) async fn run_attempt(
    task: &Task,
    settings: &AttemptSettings,
    previous_attempts: u32,
    events: TaskEvents,
    stop: AttemptStop,
) -> AttemptOutcome {
    // A task that sets no mode runs in the run's (`--mode`); a recorded plan replays.
    let moded;
    let task = match (task.mode, settings.mode, &task.shape) {
        (None, Some(mode), shape)
            if !matches!(shape, crate::task::TaskShape::RecordedPlan { .. }) =>
        {
            moded = Task {
                mode: Some(mode),
                ..task.clone()
            };
            &moded
        }
        _ => task,
    };
    let osworld = match osworld_plan(task, settings, &events).await {
        Ok(plan) => plan,
        Err(outcome) => return outcome,
    };
    if let Err(outcome) = ready_workspace(task, settings, previous_attempts, &events, &stop).await {
        return outcome;
    }
    let (mut executor, device) =
        match means::executor_for(task, settings, osworld, previous_attempts, &events, &stop).await
        {
            Ok(means) => means,
            Err(outcome) => return outcome,
        };
    let mut progress = Progress::default();
    // The wall-clock limit leaves out the time spent waiting for the LLM provider.
    let waits = std::sync::Arc::new(WaitClock::default());
    let begun = std::time::Instant::now();
    let ended = within_limit(
        task,
        settings,
        executor.as_mut(),
        &mut progress,
        &events,
        &stop,
        &waits,
    )
    .await;
    // The means of running the task failed (a jail, a desktop, an MCP server): when the
    // run is stopping, most likely by the same signal.
    let executor_failed = executor.fault().is_some();
    if let Some(note) = executor.shutdown().await {
        events.info(note);
    }
    let unprepared = matches!(&ended, Ended::Broken(f) if rule(f.blame).retried) || executor_failed;
    let mut outcome = AttemptOutcome::from_end(
        ended,
        progress.session.as_ref().map(|s| &s.ctx),
        stage_name(progress.stage),
    );
    outcome.session = progress.session.as_ref().map(|s| s.session_type);
    outcome.llm.rate_limited += waits.rate_limited();
    outcome.llm.waited_s = (waits.waited().as_secs_f64() * 1000.0).round() / 1000.0;
    let mut outcome = stopping::unless_stopped(outcome, unprepared, &stop).await;
    if let Some(session) = &progress.session {
        outcome.plan = Some(plan::recorded_plan(task, &session.ctx.trajectory, &outcome));
        outcome.experience.given = session.ctx.given.clone();
        let trajectory = &session.ctx.trajectory;
        // Saving waits for other writers no longer than the task's own time allows.
        let limit = task.timeout.unwrap_or(settings.timeout);
        let until = begun + limit + waits.waited();
        experience::save(
            task,
            settings,
            trajectory,
            &mut outcome,
            &events,
            (&stop.kill, until),
        )
        .await;
    }
    outcome.device = device;
    events.info(format!("attempt ended: {}", outcome.describe()));
    outcome
}
