//! One attempt at one task, end to end: prepare the workspace, run `setup`, build the
//! session for the task's shape, run it within the task's wall-clock limit, evaluate,
//! and say what happened. The trajectory survives a timeout or a kill: the session
//! lives outside the future that is abandoned.

mod evaluate;
mod experience;
mod factory;
mod outcome;
mod plan;
mod preparers;
mod workspace;

use std::time::Duration;

use tokio_util::sync::CancellationToken;

pub(crate) use outcome::{AttemptOutcome, rule};

use crate::desktop::error::DesktopError;
use crate::eval::EvalMode;
use crate::event::TaskEvents;
use crate::executor::{DesktopExecutor, DesktopSettings, Executor, ShellExecutor, ShellSettings};
use crate::llm::WaitClock;
use crate::rundir::RunLayout;
use crate::session::{Context, Session};
use crate::task::Task;
use crate::tool::{Blame, Blamed, Failure, ToolCall};
use outcome::Ended;

/// Settings every attempt of a run shares.
#[derive(Clone)]
pub(crate) struct AttemptSettings {
    /// Where task folders live (the run dir resolved, see `RunLayout::resolved`, when
    /// the run made them).
    pub(crate) layout: RunLayout,
    /// How commands run.
    pub(crate) shell: ShellSettings,
    /// Knobs of desktop tasks.
    pub(crate) desktop: DesktopSettings,
    /// Wall-clock limit of a task that sets none.
    pub(crate) timeout: Duration,
    /// Step limit of a task that sets none.
    pub(crate) max_steps: Option<u32>,
    /// Round limit.
    pub(crate) max_rounds: Option<u32>,
    /// Evaluation mode.
    pub(crate) eval: EvalMode,
    /// The LLM, when one is configured.
    pub(crate) llm: Option<std::sync::Arc<crate::llm::LlmClient>>,
    /// Knobs of LLM agents.
    pub(crate) agent: crate::agent::AgentSettings,
    /// The run's MCP servers, when it has any.
    pub(crate) mcp: Option<std::sync::Arc<crate::mcp::McpHub>>,
    /// The device server, when tasks run on UFO's device clients.
    pub(crate) devices: Option<std::sync::Arc<crate::device::DeviceHub>>,
    /// The run's experience, when it saves or gives any.
    pub(crate) experience: Option<std::sync::Arc<crate::experience::Experience>>,
}

/// How the run tells a running attempt to stop: `kill` ends it at once (it becomes
/// `cancelled`); `stopping` says the run is stopping (no new tasks start), which turns a
/// command killed by a signal from outside (a scheduler stopping the job) into a
/// cancellation rather than the task's failure.
#[derive(Clone, Debug, Default)]
pub(crate) struct AttemptStop {
    /// End the attempt now.
    pub(crate) kill: CancellationToken,
    /// The run is stopping.
    pub(crate) stopping: CancellationToken,
}

/// How long an attempt whose command was killed by a signal from outside waits for the
/// run to say it is stopping: a scheduler signals the runner and the commands at once,
/// and the command's death can be seen first.
const SIGNAL_WINDOW: Duration = Duration::from_secs(1);

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

/// Where an attempt got to; read after the attempt ends, however it ended.
#[derive(Default)]
struct Progress {
    stage: Stage,
    session: Option<Session>,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Stage {
    #[default]
    Setup,
    Session,
    Evaluation,
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

/// Runs one attempt. `previous_attempts` is how many attempts came before (their
/// workspaces are kept under `attempts/`). `stop` ends it, or says the run is stopping.
pub(crate) async fn run_attempt(
    task: &Task,
    settings: &AttemptSettings,
    previous_attempts: u32,
    events: TaskEvents,
    stop: AttemptStop,
) -> AttemptOutcome {
    let dir = settings.layout.task(&task.id);
    let ws = dir.workspace();
    let archive = dir.attempts();
    let tmp = dir.tmp();
    // A folder that cannot be made on a file system that does not answer holds this
    // attempt until the run kills it, not longer.
    let prepared = tokio::select! {
        prepared = workspace::prepare(&ws, &tmp, &archive, previous_attempts, &task.files) => prepared,
        () = stop.kill.cancelled() => {
            return AttemptOutcome::from_end(Ended::Killed, None, stage_name(Stage::Setup));
        }
    };
    if let Err(e) = prepared {
        return unprepared(&events, e);
    }
    match workspace::copy_object(task, dir.path(), &ws).await {
        Ok(Some(from)) => events.info(format!("copied {} into the workspace", from.display())),
        Ok(None) => {}
        Err(e) => return unprepared(&events, e),
    }
    for warning in &task.warnings {
        events.warn(format!("task file: {warning}"));
    }
    let mut shell = if ws.is_absolute() {
        // Under the resolved run dir (`AttemptSettings::layout`).
        ShellExecutor::with_real_paths(ws.clone(), Some(tmp), settings.shell.clone())
    } else {
        ShellExecutor::with_tmp(ws.clone(), Some(tmp), settings.shell.clone())
    };
    if let Some(n) = task.repeat {
        shell.set_env("UFO_BATCH_REPEAT", &n.to_string());
    }
    let mut device = None;
    let mut executor: Box<dyn Executor> = if let Some(hub) = &settings.devices {
        match on_device(task, settings, hub, previous_attempts, &events, &stop).await {
            Ok(ex) => {
                device = Some(ex.device().to_string());
                Box::new(ex)
            }
            Err(outcome) => return *outcome,
        }
    } else if task.is_desktop() {
        let document = task
            .object_file
            .as_ref()
            .map(|f| f.name().to_string_lossy().into_owned());
        // UFO's `object` may name the app itself (`notepad`).
        let named =
            (task.app.is_none() && task.object_file.is_none() && task.desktop_object().is_some())
                .then(|| crate::task::App::Named(task.object.clone().unwrap_or_default()));
        let app = match crate::desktop::app::launch_for(
            task.app.as_ref().or(named.as_ref()),
            document.as_deref(),
        ) {
            Ok(app) => app,
            Err(unknown) => {
                let failure = DesktopError::TaskFile(unknown.to_string()).failure();
                events.log(crate::event::Level::Error, failure.message.clone());
                return AttemptOutcome::failed(failure);
            }
        };
        Box::new(DesktopExecutor::new(
            shell,
            dir.clone(),
            app,
            document,
            // The run's folder (other tasks' desktops) and the user's home.
            [
                Some(settings.layout.root().to_path_buf()),
                std::env::var_os("HOME").map(Into::into),
            ]
            .into_iter()
            .flatten()
            .collect(),
            settings.desktop.clone(),
        ))
    } else {
        Box::new(shell)
    };
    if let Some(hub) = &settings.mcp {
        executor = Box::new(crate::mcp::McpRouter::new(
            executor,
            hub.clone(),
            ws.clone(),
        ));
    }
    let limit = task.timeout.unwrap_or(settings.timeout);
    let mut progress = Progress::default();
    // The wall-clock limit leaves out the time spent waiting for the LLM provider.
    let waits = std::sync::Arc::new(WaitClock::default());
    let started = tokio::time::Instant::now();
    let ended = {
        let body = waits.scope(body(
            task,
            settings,
            executor.as_mut(),
            &mut progress,
            &events,
        ));
        tokio::select! {
            ended = body => ended,
            () = waits.deadline(started, limit) => Ended::TimedOut {
                limit,
                waited: waits.waited(),
            },
            () = stop.kill.cancelled() => Ended::Killed,
        }
    };
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
    outcome.llm.rate_limited += waits.rate_limited();
    outcome.llm.waited_s = (waits.waited().as_secs_f64() * 1000.0).round() / 1000.0;
    let stopping_soon = async {
        stop.stopping.is_cancelled()
            || tokio::time::timeout(SIGNAL_WINDOW, stop.stopping.cancelled())
                .await
                .is_ok()
    };
    if unprepared && outcome.status == crate::record::TaskStatus::Error && stopping_soon.await {
        // The desktop, its app or a server ended, the run stopping (a scheduler signals
        // every process at once, and they may die before the runner hears of it): not
        // the task's error.
        outcome.cancel(format!(
            "cancelled: {} while the run was stopping; it runs again when the run is resumed",
            outcome.reason.clone().unwrap_or_default()
        ));
    } else if let Some(end) = outcome.last_command_end() {
        // A command that ended badly after the run began stopping was most likely stopped
        // by the same signal (a scheduler signals the runner and every command at once,
        // and a shell reports its child's death as an exit code); one killed by a signal
        // is given a moment for the runner's own signal to arrive. The task runs again on
        // resume, so its true result is never lost.
        let stopping = if stop.stopping.is_cancelled() {
            true
        } else if end.by_signal() {
            tokio::time::timeout(SIGNAL_WINDOW, stop.stopping.cancelled())
                .await
                .is_ok()
        } else {
            false
        };
        if stopping {
            outcome.cancel(format!(
                "cancelled: a command {end} while the run was stopping; it runs again when the run is resumed"
            ));
        }
    }
    if let Some(session) = &progress.session {
        outcome.plan = Some(plan::recorded_plan(task, &session.ctx.trajectory, &outcome));
        outcome.experience.given = session.ctx.given.clone();
        let trajectory = &session.ctx.trajectory;
        experience::save(
            task,
            settings,
            trajectory,
            &mut outcome,
            &events,
            &stop.kill,
        )
        .await;
    }
    outcome.device = device;
    events.info(format!("attempt ended: {}", outcome.describe()));
    outcome
}

/// The executor of `task` on a free device of its platform (Linux for shell tasks,
/// Windows for desktop tasks), its folder on the device made. Waiting for the device is
/// not part of the task's time; a wait the run's stop ends cancels the attempt, one
/// that finds no device is an infrastructure error (that stops the run when no device
/// of the platform is connected at all).
async fn on_device(
    task: &Task,
    settings: &AttemptSettings,
    hub: &crate::device::DeviceHub,
    previous_attempts: u32,
    events: &TaskEvents,
    stop: &AttemptStop,
) -> Result<crate::device::DeviceExecutor, Box<AttemptOutcome>> {
    use crate::device::{DeviceExecutor, DeviceRun, Platform};
    let platform = if task.is_desktop() {
        Platform::Windows
    } else {
        Platform::Linux
    };
    // A retry goes to another device than the one the task last failed on, if one is free.
    let avoid = hub.last_device(task.id.as_str());
    let lease = tokio::select! {
        lease = hub.fleet.lease(&platform, hub.settings.wait_for, avoid.as_deref()) => {
            lease.map_err(|e| e.to_string())
        }
        () = stop.kill.cancelled() => Err(String::new()),
        () = stop.stopping.cancelled() => Err(String::new()),
    };
    let lease = match lease {
        Ok(lease) => lease,
        Err(why) if why.is_empty() => {
            let mut outcome = AttemptOutcome::infrastructure_error(String::new());
            outcome.cancel(format!(
                "cancelled while waiting for a free {platform} device; it runs again when the run is resumed"
            ));
            return Err(Box::new(outcome));
        }
        Err(why) => {
            events.log(crate::event::Level::Error, why.clone());
            let mut outcome = AttemptOutcome::infrastructure_error(why.clone());
            if hub.fleet.count(&platform) == 0 {
                outcome.fatal = Some(format!("no {platform} device is connected: {why}"));
            }
            return Err(Box::new(outcome));
        }
    };
    hub.ran_on(task.id.as_str(), &lease.device.id);
    events.info(format!("on device {} ({platform})", lease.device.id));
    events.on_device(&lease.device.id);
    let name = settings
        .layout
        .root()
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let safe = |t: &str| -> String {
        t.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                    c
                } else {
                    '_'
                }
            })
            .collect()
    };
    let run = DeviceRun {
        command_timeout: hub.settings.command_timeout,
        inject: hub.settings.inject.clone(),
        session_id: format!(
            "{}-{}-{}",
            safe(&name),
            safe(task.id.as_str()),
            previous_attempts + 1
        ),
        task_name: task.id.to_string(),
        local_workspace: settings.layout.task(&task.id).workspace(),
        dir: settings.layout.task(&task.id),
    };
    let mut executor = DeviceExecutor::new(lease, run);
    match executor.make_workspace(&task.files).await {
        Ok(Some(note)) => events.info(note),
        Ok(None) => {}
        Err(failure) => {
            events.log(crate::event::Level::Error, failure.message.clone());
            let _ = executor.shutdown().await;
            let mut outcome = AttemptOutcome::failed(failure);
            outcome.device = Some(executor.device().to_string());
            return Err(Box::new(outcome));
        }
    }
    Ok(executor)
}

/// Setup, session and evaluation: everything the wall-clock limit covers.
async fn body(
    task: &Task,
    settings: &AttemptSettings,
    executor: &mut dyn Executor,
    progress: &mut Progress,
    events: &TaskEvents,
) -> Ended {
    progress.stage = Stage::Setup;
    if let Err(ended) = run_setup(task, executor, events).await {
        return ended;
    }
    match executor.prepare().await {
        Ok(Some(note)) => events.info(note),
        Ok(None) => {}
        Err(failure) => return Ended::Broken(failure),
    }
    progress.stage = Stage::Session;
    let ctx = Context::new(
        task.request.clone(),
        settings.layout.task(&task.id).workspace(),
        events.clone(),
    );
    let session = match factory::build(task, settings, ctx, executor.tools()) {
        Ok(s) => progress.session.insert(s),
        Err(failure) => return Ended::Broken(failure),
    };
    events.info(format!(
        "{} started: {}",
        session.session_type.as_str(),
        crate::text::shorten(&task.request, 200)
    ));
    let end = session.run(executor).await;
    events.info(format!("session {}", end.describe()));
    if let Some(note) = executor.end_session().await {
        events.info(note);
    }
    progress.stage = Stage::Evaluation;
    let faulted_before = executor.fault().is_some();
    let evaluation =
        match evaluate::evaluate(task, settings, &end, executor, &mut session.ctx).await {
            Ok(evaluation) => evaluation,
            Err(failure) => {
                events.log(
                    crate::event::Level::Error,
                    format!("the LLM judge failed: {}", failure.reason),
                );
                return Ended::JudgeFailed {
                    end,
                    reason: failure.reason,
                    fatal: failure.fatal,
                    blame: failure.blame,
                };
            }
        };
    if !faulted_before && let Some(fault) = executor.fault() {
        // The checks could not see what the task did (a device gone while they ran).
        return Ended::Broken(fault.context(|f| format!("evaluation could not finish: {f}")));
    }
    if let Some(e) = &evaluation {
        events.info(format!(
            "evaluation ({:?}): complete={} ({})",
            e.evaluator, e.complete, e.reason
        ));
    }
    Ended::Session { end, evaluation }
}

/// Runs the task's setup actions: one whose result differs from its expectation fails the
/// task; one the executor could not carry out (its means failed: a jail, an MCP server)
/// leaves it unprepared, an infrastructure error that is retried.
async fn run_setup(
    task: &Task,
    executor: &mut dyn Executor,
    events: &TaskEvents,
) -> Result<(), Ended> {
    for (i, action) in task.setup.iter().enumerate() {
        let command = ToolCall::action(&action.action, action.parameters.clone());
        events.info(format!(
            "setup {}/{}: {}",
            i + 1,
            task.setup.len(),
            command.action_string()
        ));
        let result = executor.execute(&command).await;
        if let Some(fault) = executor.fault() {
            return Err(Ended::Broken(fault.context(|f| {
                format!(
                    "setup step {} `{}` could not run: {f}",
                    i + 1,
                    crate::text::shorten(&command.action_string(), 120)
                )
            })));
        }
        let diffs = action.differences(&result);
        if !diffs.is_empty() {
            return Err(Ended::Broken(Failure::new(
                Blame::TaskFile,
                format!(
                    "setup step {} `{}` failed: {}",
                    i + 1,
                    crate::text::shorten(&command.action_string(), 120),
                    diffs.join("; ")
                ),
            )));
        }
    }
    Ok(())
}

fn stage_name(stage: Stage) -> &'static str {
    match stage {
        Stage::Setup => "setup",
        Stage::Session => "the session",
        Stage::Evaluation => "evaluation",
    }
}
