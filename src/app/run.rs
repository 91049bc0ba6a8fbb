//! `ufo-batch run`: the configuration resolved, the terminal chosen, signals watched,
//! the batch prepared and executed with the reporters as its sink, and the exit code
//! the run earned.

use std::io::IsTerminal;

use super::signals;
use crate::batch;
use crate::cli::{Progress, RunArgs};
use crate::config::{read_config, resolve};
use crate::error::Error;
use crate::pool::StopTokens;
use crate::record::TaskStatus;
use crate::reporter::{Reporter, ResultFiles, RunStats, Terminal, TerminalMode, summary_line};
use crate::resources;
use crate::rundir::layout::{JUNIT_XML, REPORT_MD, SUMMARY_JSON};

/// How many tasks a busy worker of the runtime runs from its own queue before it takes
/// one from the shared queue, where the tasks woken from other threads wait (a task
/// whose folders a preparer thread has made, a task the pool has just started). Left to
/// tokio, the interval grows with short polls, and while the workers were busy with
/// the HTTP work of a wave of starting tasks, a few tasks whose folders were ready
/// waited 30-40 ms to send their call: the last call of a wave of 256 went out that
/// much later.
const GLOBAL_QUEUE_INTERVAL: u32 = 8;

/// Runs a batch; the exit code says whether every task passed.
pub(super) fn run(args: RunArgs) -> Result<u8, Error> {
    let (overrides, config_path, progress, summary_json) = args.into_overrides();
    let (file, used) = read_config(config_path)?;
    let config = resolve(overrides, file, used)?;
    let mode = match progress {
        Progress::Auto if std::io::stderr().is_terminal() => TerminalMode::Bar,
        Progress::Auto | Progress::Lines => TerminalMode::Lines,
        Progress::Bar => TerminalMode::Bar,
        Progress::Quiet => TerminalMode::Quiet,
    };
    let terminal = Terminal::new(mode, Box::new(std::io::stderr()));
    resources::raise_open_file_limit();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .global_queue_interval(GLOBAL_QUEUE_INTERVAL)
        .build()
        .map_err(|e| Error::internal(format!("cannot start the async runtime: {e}")))?;
    let reporter = runtime.block_on(async {
        let stop = StopTokens::default();
        let watcher = signals::watch(stop.clone(), config.grace);
        let prepared = batch::prepare(&config).await?;
        let reporter = Reporter::new(ResultFiles::new(prepared.layout.clone()), terminal);
        let reporter = batch::execute(&config, prepared, reporter, stop).await;
        watcher.abort();
        reporter
    })?;
    let stats = reporter.finish();
    // The result on standard output, for a script or a log that keeps only it: the JSON
    // line of `--summary-json`, else the console's last line, unless standard output is
    // where the console already wrote it (the terminal, or one log for both).
    if summary_json {
        super::stdout::print(
            &format!("{}\n", summary_line_json(&stats)),
            super::stdout::Form::Json,
        )?;
    } else if !std::io::stdout().is_terminal() && !stdout_is_stderr() {
        // The console has said it: a stdout that cannot be written does not change the
        // run's exit code.
        let _ = super::stdout::print(
            &format!("{}\n", summary_line(&stats)),
            super::stdout::Form::Text,
        );
    }
    Ok(stats.exit_code())
}

/// True when standard output and standard error are one file (`> log 2>&1`).
fn stdout_is_stderr() -> bool {
    match (same_file::Handle::stdout(), same_file::Handle::stderr()) {
        (Ok(out), Ok(err)) => out == err,
        _ => false,
    }
}

/// The one-line machine-readable summary of `--summary-json`.
fn summary_line_json(s: &RunStats) -> serde_json::Value {
    use TaskStatus::{Cancelled, Error as Err, Failed, Passed, Timeout, Unsupported};
    let count = |st| s.count(st);
    serde_json::json!({
        "run_dir": s.run_dir,
        "summary": s.run_dir.join(SUMMARY_JSON),
        "report": s.run_dir.join(REPORT_MD),
        "junit": s.run_dir.join(JUNIT_XML),
        "total": s.total,
        "passed": count(Passed),
        "failed": count(Failed),
        "error": count(Err),
        "timeout": count(Timeout),
        "cancelled": count(Cancelled),
        "unsupported": count(Unsupported),
        "pass_rate": (s.pass_rate() * 10_000.0).round() / 10_000.0,
        "tokens": s.usage.total(),
        "cost_usd": s.cost.usd(),
        "seconds": (s.elapsed.as_secs_f64() * 1000.0).round() / 1000.0,
        "stopped": s.stopped,
        "llm": s.llm,
        "exit_code": s.exit_code(),
    })
}
