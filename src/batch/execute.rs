//! Executing a prepared batch: the events of the run go to the sink handed in (the
//! reporters, or anything else that wants them), the pool runs the work, and the sink is
//! handed back once it has seen the last event.

use std::sync::Arc;

use super::prepare::Prepared;
use super::{BatchError, RunSettings};
use crate::attempt::AttemptSettings;
use crate::backoff::Backoff;
use crate::device::{DeviceHub, DeviceNews};
use crate::event::Level;
use crate::event::{
    Event, EventSender, EventSink, RunFinished, RunStarted, TaskFinished, spawn_sink,
};
use crate::executor::ShellSettings;
use crate::llm::LlmClient;
use crate::pending::Backlog;
use crate::pool::{Budget, RetryPolicy, SessionPool, StopTokens};
use crate::record::{SessionType, ShapeName};
use crate::record::{TaskRecord, TaskStatus};
use crate::resources::Resources;
use crate::task::InvalidTask;
use crate::units::Timestamp;

/// Runs `batch` to its end (or until `stop`), telling `sink` everything; returns the
/// sink once it has handled the last event.
pub(crate) async fn execute<S: EventSink>(
    config: &RunSettings,
    mut batch: Prepared,
    sink: S,
    stop: StopTokens,
) -> Result<S, BatchError> {
    // The run starts: the old run dir that `--fresh` replaces goes now, before anything
    // of this run is written (refused before this point, it is left as it was).
    batch.discarding.start()?;
    let (events, sink) = spawn_sink(sink);
    events.send(Event::RunStarted(Box::new(run_started(config, &mut batch))));
    let settings = attempt_settings(config, &batch);
    if !batch.kept.is_empty() {
        events.send(Event::TasksKept(Box::new(batch.kept)));
    }
    for bad in batch.invalid {
        events.send(Event::TaskFinished(Arc::new(invalid_result(bad))));
    }
    // run.json must be on disk before the first task folder is: a runner killed in
    // between would leave a folder that a resume refuses as not a run folder.
    events.handled().await;
    let device_news = batch
        .devices
        .clone()
        .map(|hub| tokio::spawn(report_devices(hub, events.clone(), stop.clone())));
    if let Some(hub) = &batch.devices {
        // From here a signal stops the run the usual way (run.json says so).
        stop.mark_started();
        wait_for_devices(hub, &events, &stop).await;
    }
    let llm = settings.llm.clone();
    let ticker = llm
        .clone()
        .map(|client| tokio::spawn(report_llm_load(client, events.clone())));
    let clock = tokio::spawn(tick(events.clone()));
    let pool = session_pool(config, settings, &events, batch.spend);
    let stopped = pool.run(batch.work, stop.clone()).await;
    // Commands ended without their task waiting (timeouts, cancellations): their
    // supervisors end what they left before the run does.
    let still_ending = crate::executor::wait_for_supervisors(SUPERVISORS_AT_THE_END).await;
    // Every jail has ended with its task: the factory that made them goes too.
    #[cfg(target_os = "linux")]
    let _ = tokio::task::spawn_blocking(crate::jail::close_factory).await;
    if let Some(hub) = &batch.devices {
        hub.close();
    }
    for ticker in [ticker, device_news, Some(clock)].into_iter().flatten() {
        ticker.abort();
        // Its last figures must not come after the end.
        let _ = ticker.await;
    }
    events.send(Event::RunFinished(RunFinished {
        finished: Timestamp::now(),
        stopped,
        interrupted: stop.interrupted(),
        runner: Resources::now(),
        llm: llm
            .map(|client| client.load())
            .filter(|load| load.calls > 0),
        still_ending,
    }));
    drop(events);
    let sink = sink.join().ok_or_else(|| {
        BatchError::Internal("the reporter thread panicked; result files may be incomplete".into())
    });
    batch.discarding.finish();
    drop(batch.lock);
    sink
}

/// What the run's start tells: its place, its counts, its settings and its warnings.
/// The selection and the notes move into it.
fn run_started(config: &RunSettings, batch: &mut Prepared) -> RunStarted {
    RunStarted {
        name: config.run_name.clone(),
        dir: config.run_dir.clone(),
        started: batch.began_at,
        began: batch.began,
        total: batch.work.len() + batch.kept.len() + batch.invalid.len(),
        to_run: batch.work.len() + batch.invalid.len(),
        kept_passed: batch
            .kept
            .statuses()
            .iter()
            .filter(|s| **s == crate::record::TaskStatus::Passed)
            .count(),
        jobs: config.jobs.get(),
        config: config.to_json(),
        previous_invocations: batch.previous_invocations,
        rerun: std::mem::take(&mut batch.rerun),
        sandbox: batch.sandbox.to_string(),
        warnings: crate::executor::sandbox::as_root_warning()
            .into_iter()
            .chain(batch.sandbox_warning.take())
            .chain(std::mem::take(&mut batch.experience_notes))
            .chain(
                batch
                    .mcp
                    .iter()
                    .flat_map(|m| m.notes().map(str::to_string))
                    .collect::<Vec<_>>(),
            )
            .chain(batch.devices.as_deref().map(device_hint))
            .collect(),
        shard: config.shard,
        // Shared as it is (a copy of a million ids was the run's peak).
        selection: Arc::new(std::mem::take(&mut batch.selection)),
    }
}

/// How a UFO device client joins this run.
fn device_hint(hub: &DeviceHub) -> String {
    format!(
        "tasks run on UFO device clients: python -m ufo.client.client --ws --ws-server \"ws://HOST:{}/ws?token=${}\" --client-id ID --platform linux|windows (listening on {})",
        hub.addr.port(),
        hub.settings.token_env,
        hub.addr
    )
}

/// What every attempt of the run shares.
fn attempt_settings(config: &RunSettings, batch: &Prepared) -> AttemptSettings {
    AttemptSettings {
        // Resolved once here (the run dir exists): each task's folders are then canonical.
        layout: batch.layout.clone().resolved(),
        shell: ShellSettings {
            sandbox: batch.sandbox.clone(),
            ..config.shell.clone()
        },
        desktop: config.desktop.clone(),
        timeout: config.timeout,
        max_steps: config.max_steps,
        max_rounds: config.max_rounds,
        eval: config.eval,
        llm: batch.llm.clone(),
        operator: batch.operator.clone(),
        mode: config.mode,
        agent: config.agent.clone(),
        mcp: batch.mcp.clone(),
        devices: batch.devices.clone(),
        experience: batch.experience.clone(),
        osworld: crate::osworld::OsWorldRun::new(config.osworld.clone()),
    }
}

/// The pool that runs the work: its budget, retries, failure limit and backlog.
fn session_pool(
    config: &RunSettings,
    settings: AttemptSettings,
    events: &EventSender,
    spend: Arc<crate::llm::Spend>,
) -> SessionPool {
    let mut pool = SessionPool::new(config.jobs.get(), Arc::new(settings), events.clone());
    if let Some(max_usd) = config.max_cost {
        pool = pool.with_budget(Budget { spend, max_usd });
    }
    let backoff = Backoff {
        base: config.retry_delay,
        max: config.retry_delay * 30,
    };
    pool.with_retries(RetryPolicy {
        retries: config.retries,
        backoff,
    })
    .with_max_fail(config.max_fail)
    // A result waits to be written for a moment; the writers keep up with twice the
    // sessions' results (and at least 64), and memory holds no more than that.
    .with_backlog(Backlog::default(), config.jobs.get().max(32) * 2)
}

/// How long the end of a run waits for commands' supervisors still ending processes.
const SUPERVISORS_AT_THE_END: std::time::Duration = std::time::Duration::from_secs(5);

/// Tells the reporters that a second went by, every second, until aborted.
async fn tick(events: EventSender) {
    let mut tick = tokio::time::interval(std::time::Duration::from_secs(1));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    tick.tick().await;
    loop {
        tick.tick().await;
        events.send(Event::Tick);
    }
}

/// Tells the reporters about the LLM calls in flight and the provider's rate limits,
/// once a second when they changed, until aborted.
async fn report_llm_load(client: Arc<LlmClient>, events: EventSender) {
    let mut last = None;
    let mut tick = tokio::time::interval(std::time::Duration::from_secs(1));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    loop {
        tick.tick().await;
        let load = client.load();
        if load.calls > 0 && last != Some(load) {
            events.send(Event::LlmLoad(load));
            last = Some(load);
        }
    }
}

/// Tells the reporters what happens to the devices, and how many are connected and
/// busy (once a second when that changed), until aborted; stops the run when news says
/// it cannot go on.
async fn report_devices(hub: Arc<DeviceHub>, events: EventSender, stop: StopTokens) {
    let Some(mut news) = hub.take_news() else {
        return;
    };
    let mut last = None;
    let mut tick = tokio::time::interval(std::time::Duration::from_secs(1));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    loop {
        tokio::select! {
            item = news.recv() => match item {
                Some(item) => {
                    if item.stops_run {
                        stop.stop(item.text.clone());
                    }
                    let load = hub.fleet.load();
                    events.send(Event::Devices { news: Some(item), load });
                    last = Some(load);
                }
                None => return,
            },
            _ = tick.tick() => {
                let load = hub.fleet.load();
                if last != Some(load) {
                    events.send(Event::Devices { news: None, load });
                    last = Some(load);
                }
            }
        }
    }
}

/// Waits for the devices `--devices-wait` asks for (at most `wait_for`, or until the
/// run is stopped), saying so; with none at all by then, the run stops.
async fn wait_for_devices(hub: &DeviceHub, events: &EventSender, stop: &StopTokens) {
    let wanted = hub.settings.wait;
    if wanted == 0 {
        return;
    }
    let say = |level, text: String| {
        events.send(Event::Devices {
            news: Some(DeviceNews {
                level,
                text,
                stops_run: false,
            }),
            load: hub.fleet.load(),
        });
    };
    let within = hub.settings.wait_for.as_secs();
    say(
        Level::Info,
        format!(
            "waiting for {} to connect (at most {within}s)",
            crate::text::plural(wanted, "device")
        ),
    );
    tokio::select! {
        waited = hub.fleet.wait_for(wanted, hub.settings.wait_for) => match waited {
            Ok(()) => {}
            Err(0) => {
                let why = format!("no device connected within {within}s");
                say(Level::Error, format!("{why}: the run stops"));
                stop.stop(why);
            }
            Err(connected) => say(
                Level::Warn,
                format!("only {connected} of the {wanted} devices waited for connected within {within}s; starting with them"),
            ),
        },
        () = stop.drain.cancelled() => {}
    }
}

/// The `error` result of a task file that cannot run.
fn invalid_result(bad: InvalidTask) -> TaskFinished {
    let first = bad.problems.first().map(|p| p.short()).unwrap_or_default();
    let more = match bad.problems.len() {
        0 | 1 => String::new(),
        n => format!(" (and {} more; see task.log)", n - 1),
    };
    let mut record = TaskRecord::new(
        bad.id,
        bad.source.display().to_string(),
        bad.source_hash,
        ShapeName::Invalid,
        SessionType::None,
        bad.request,
    );
    record.status = TaskStatus::Error;
    record.error = Some(format!("invalid task file: {first}{more}"));
    record.blame = Some(crate::tool::Blame::TaskFile);
    TaskFinished::without_run(record, bad.problems)
}
