//! `ufo-batch run`: load the tasks, open the run dir, decide what to resume, start the
//! reporter, run the pool, and return the run's statistics. This is the wiring; each
//! part lives in its own module.

use std::sync::Arc;

use crate::attempt::AttemptSettings;
use crate::config::{ConfigError, RunConfig, without_userinfo};
use crate::error::Error;
use crate::eval::EvalMode;
use crate::event::{self, Event, RunFinished, RunStarted, TaskFinished};
use crate::executor::ShellSettings;
use crate::executor::shell_tools;
use crate::layout::RunLayout;
use crate::llm::{ApiKey, LlmClient, Spend};
use crate::pool::{Budget, RetryPolicy, Scheduled, SessionPool, StopTokens};
use crate::record::{TaskRecord, TaskStatus};
use crate::report::{Display, Reporter, RunStats, Store};
use crate::resume::{self, Decision};
use crate::task::{self, InvalidTask, LoadedTasks, SessionKind, Shape, Task, TaskId, TaskKind};
use crate::units::Timestamp;

/// Runs a batch to its end (or until `stop`), reporting through `display`.
pub async fn run(
    config: &RunConfig,
    display: Display,
    stop: StopTokens,
) -> Result<RunStats, Error> {
    let mut loaded = if config.paths.is_empty() {
        LoadedTasks::default()
    } else {
        task::load(&config.paths, Some(&config.out_root), shell_tools())?
    };
    add_requests(&mut loaded, &config.requests);
    let selection = all_ids(&loaded);
    if let Some(shard) = config.shard {
        loaded.tasks.retain(|t| shard.contains(&t.id));
        loaded.invalid.retain(|t| shard.contains(&t.id));
    }
    if let Some(k) = config.repeat.filter(|k| *k > 1) {
        loaded.tasks = loaded
            .tasks
            .iter()
            .flat_map(|t| (1..=k).map(|n| t.repetition(n)))
            .collect();
    }
    let shim = std::env::current_exe().ok();
    let (sandbox, sandbox_warning) =
        crate::executor::sandbox::resolve(config.sandbox, shim.as_deref())
            .map_err(ConfigError::Invalid)?;
    let layout = RunLayout::new(&config.run_dir);
    let (previous_invocations, discarding) = resume::prepare_run_dir(&layout, config.resume)?;

    let mut kept = Vec::new();
    let mut work = Vec::new();
    for task in loaded.tasks {
        match resume::decide(
            &task,
            resume::previous_record(&layout, &task.id),
            config.resume,
        ) {
            Decision::Keep(record) => kept.push(record),
            Decision::Run(previous) => work.push(Scheduled { task, previous }),
        }
    }

    let spend = Arc::new(Spend::default());
    let llm = match &config.llm {
        Some(c) => Some(Arc::new(client(c, &work, config, spend.clone())?)),
        None => None,
    };

    let (events, receiver) = event::channel();
    let reporter = Reporter::new(Store::new(layout.clone()), display).spawn(receiver);
    events.send(Event::RunStarted(Box::new(RunStarted {
        name: config.run_name.clone(),
        dir: config.run_dir.clone(),
        started: Timestamp::now(),
        total: work.len() + kept.len() + loaded.invalid.len(),
        to_run: work.len() + loaded.invalid.len(),
        jobs: config.jobs.get(),
        config: config.to_json(),
        previous_invocations,
        sandbox: sandbox.to_string(),
        warnings: sandbox_warning.into_iter().collect(),
        shard: config.shard,
        selection,
    })));
    for bad in loaded.invalid {
        events.send(Event::TaskFinished(Arc::new(invalid_result(bad))));
    }
    for record in kept {
        events.send(Event::TaskSkipped(Box::new(record)));
    }

    let settings = AttemptSettings {
        layout,
        shell: ShellSettings {
            sandbox,
            ..config.shell.clone()
        },
        timeout: config.timeout,
        max_steps: config.max_steps,
        max_rounds: config.max_rounds,
        eval: config.eval,
        llm,
        agent: config.agent.clone(),
    };
    let mut pool = SessionPool::new(config.jobs.get(), Arc::new(settings), events.clone());
    if let Some(max_usd) = config.max_cost {
        pool = pool.with_budget(Budget { spend, max_usd });
    }
    let backoff = crate::backoff::Backoff {
        base: config.retry_delay,
        max: config.retry_delay * 30,
    };
    pool = pool
        .with_retries(RetryPolicy {
            retries: config.retries,
            backoff,
        })
        .with_max_fail(config.max_fail);
    let stopped = pool.run(work, stop.clone()).await;
    events.send(Event::RunFinished(RunFinished {
        finished: Timestamp::now(),
        stopped,
        interrupted: stop.interrupted(),
        runner: crate::resources::Resources::now(),
    }));
    drop(events);
    let stats = reporter.join().map_err(|_| {
        Error::Internal("the reporter thread panicked; result files may be incomplete".into())
    });
    discarding.finish();
    stats
}

/// The run's LLM client. A hosted service without a key is refused before anything
/// runs, but only when some task will actually talk to the LLM (a replay needs none).
fn client(
    c: &crate::llm::LlmConfig,
    work: &[Scheduled],
    config: &RunConfig,
    spend: Arc<Spend>,
) -> Result<LlmClient, Error> {
    let key = ApiKey::from_env(&c.api_key_env);
    let judged = |t: &Task| match config.eval {
        EvalMode::Llm => true,
        EvalMode::Auto => t.checks.is_empty(),
        EvalMode::Checks | EvalMode::None => false,
    };
    let needed = work
        .iter()
        .any(|s| !matches!(s.task.kind, TaskKind::RecordedPlan { .. }) || judged(&s.task));
    if needed && key.is_none() && c.needs_key() {
        return Err(ConfigError::Invalid(format!(
            "no API key for {}: set ${} (keys are read only from the environment)",
            without_userinfo(&c.base_url),
            c.api_key_env
        ))
        .into());
    }
    LlmClient::new(c.clone(), key, spend).map_err(Error::Internal)
}

/// Every id of the batch, valid and invalid, sorted.
fn all_ids(loaded: &LoadedTasks) -> Vec<TaskId> {
    let mut ids: Vec<TaskId> = loaded
        .tasks
        .iter()
        .map(|t| t.id.clone())
        .chain(loaded.invalid.iter().map(|t| t.id.clone()))
        .collect();
    ids.sort();
    ids
}

/// Tasks for `--request` texts: ids `request`, `request-2`, ...
fn add_requests(loaded: &mut LoadedTasks, requests: &[String]) {
    for (i, text) in requests.iter().enumerate() {
        let id = if i == 0 {
            "request".to_string()
        } else {
            format!("request-{}", i + 1)
        };
        let id = TaskId::parse(&id).expect("request ids are valid");
        loaded.tasks.push(Task::new(
            id,
            "--request",
            TaskKind::SeedRequest,
            text.clone(),
        ));
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
        Shape::Invalid,
        SessionKind::None,
        String::new(),
    );
    record.status = TaskStatus::Error;
    record.error = Some(format!("invalid task file: {first}{more}"));
    TaskFinished::without_run(record, bad.problems)
}
