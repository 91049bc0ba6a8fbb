//! `ufo-batch run`: load the tasks, open the run dir, decide what to resume, start the
//! reporter, run the pool, and return the run's statistics. This is the wiring; each
//! part lives in its own module.

use crate::attempt::AttemptSettings;
use crate::config::RunConfig;
use crate::error::Error;
use crate::event::{self, Event, RunFinished, RunStarted, TaskFinished};
use crate::executor::shell_tools;
use crate::layout::RunLayout;
use crate::pool::{Scheduled, SessionPool, StopTokens};
use crate::record::{TaskRecord, TaskStatus};
use crate::report::{Display, Reporter, RunStats, Store};
use crate::resume::{self, Decision};
use crate::task::{self, InvalidTask, SessionKind, Shape};
use crate::timestamp::Timestamp;

/// Runs a batch to its end (or until `stop`), reporting through `display`.
pub async fn run(
    config: &RunConfig,
    display: Display,
    stop: StopTokens,
) -> Result<RunStats, Error> {
    let tools = shell_tools();
    let loaded = task::load(&config.paths, Some(&config.out_root), &tools)?;
    let layout = RunLayout::new(&config.run_dir);
    let previous_invocations = resume::prepare_run_dir(&layout, config.resume)?;

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
    })));
    for bad in loaded.invalid {
        events.send(Event::TaskFinished(Box::new(invalid_result(bad))));
    }
    for record in kept {
        events.send(Event::TaskSkipped(Box::new(record)));
    }

    let settings = AttemptSettings {
        layout,
        shell: config.shell.clone(),
        timeout: config.timeout,
        max_steps: config.max_steps,
        max_rounds: config.max_rounds,
        eval: config.eval,
    };
    let pool = SessionPool::new(
        config.jobs.get(),
        std::sync::Arc::new(settings),
        events.clone(),
    );
    let stopped = pool.run(work, stop.clone()).await;
    events.send(Event::RunFinished(RunFinished {
        finished: Timestamp::now(),
        stopped,
        interrupted: stop.interrupted(),
    }));
    drop(events);
    reporter.join().map_err(|_| {
        Error::Internal("the reporter thread panicked; result files may be incomplete".into())
    })
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
    TaskFinished {
        record,
        trajectory: Vec::new(),
        evaluation: None,
        plan: None,
        problems: bad.problems,
    }
}
