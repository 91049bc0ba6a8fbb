//! The subcommands: each turns its options into a call of the library and its result
//! into an exit code. Human output of `run` goes through the reporters; the other
//! commands print their one result here.

use std::io::IsTerminal;
use std::path::PathBuf;

use crate::cli::{
    Cli, CompareArgs, MergeArgs, Progress, ReportArgs, RunArgs, SandboxExecArgs, Subcommand,
};
use crate::config::{ConfigFile, DEFAULT_CONFIG_FILE, RunConfig};
use crate::error::Error;
use crate::report::{self, Display, DisplayMode, RunStats};
use crate::{executor, pool, resources, run, signals, task};

/// Runs a parsed command line; returns the process exit code.
pub fn dispatch(cli: Cli) -> Result<u8, Error> {
    match cli.command {
        Subcommand::Run(args) => run_command(*args),
        Subcommand::Validate(args) => {
            let loaded = task::load(&args.paths, None, executor::shell_tools())?;
            let (text, bad) = report::validation_report(&loaded);
            print!("{text}");
            if bad {
                Err(Error::Invalid("some task files have problems".into()))
            } else {
                Ok(0)
            }
        }
        Subcommand::Report(args) => report_command(&args),
        Subcommand::Compare(args) => compare_command(&args),
        Subcommand::Merge(args) => merge_command(&args),
        Subcommand::SandboxExec(args) => sandbox_exec(&args),
    }
}

fn run_command(args: RunArgs) -> Result<u8, Error> {
    let (overrides, config_path, progress, summary_json) = args.into_overrides();
    let (file, used) = read_config(config_path)?;
    let config = RunConfig::resolve(overrides, file, used)?;
    let mode = match progress {
        Progress::Auto if std::io::stderr().is_terminal() => DisplayMode::Bar,
        Progress::Auto | Progress::Lines => DisplayMode::Lines,
        Progress::Bar => DisplayMode::Bar,
        Progress::Quiet => DisplayMode::Quiet,
    };
    let display = Display::new(mode, Box::new(std::io::stderr()));
    resources::raise_open_file_limit();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::Internal(format!("cannot start the async runtime: {e}")))?;
    let stats = runtime.block_on(async {
        let stop = pool::StopTokens::default();
        let watcher = signals::watch(stop.clone(), config.grace);
        let stats = run::run(&config, display, stop).await;
        watcher.abort();
        stats
    })?;
    if summary_json {
        println!("{}", summary_line_json(&stats));
    }
    Ok(stats.exit_code())
}

/// The one-line machine-readable summary of `--summary-json`.
fn summary_line_json(s: &RunStats) -> serde_json::Value {
    let count = |st| s.count(st);
    use crate::record::TaskStatus::{Cancelled, Error as Err, Failed, Passed, Timeout};
    serde_json::json!({
        "run_dir": s.run_dir,
        "summary": s.run_dir.join("summary.json"),
        "report": s.run_dir.join("report.md"),
        "junit": s.run_dir.join("junit.xml"),
        "total": s.total,
        "passed": count(Passed),
        "failed": count(Failed),
        "error": count(Err),
        "timeout": count(Timeout),
        "cancelled": count(Cancelled),
        "pass_rate": (s.pass_rate() * 10_000.0).round() / 10_000.0,
        "tokens": s.usage.total(),
        "cost_usd": s.cost.usd(),
        "seconds": (s.elapsed.as_secs_f64() * 1000.0).round() / 1000.0,
        "stopped": s.stopped,
        "exit_code": s.exit_code(),
    })
}

fn report_command(args: &ReportArgs) -> Result<u8, Error> {
    let done = report::rerender(&args.run_dir).map_err(Error::Input)?;
    for p in &done.problems {
        eprintln!("problem: {p}");
    }
    let t = &done.totals;
    println!(
        "re-rendered {} ({} tasks, {} trajectories): {} passed, {} failed, {} error, {} timeout, {} cancelled",
        args.run_dir.display(),
        done.tasks,
        done.trajectories,
        t.passed,
        t.failed,
        t.error,
        t.timeout,
        t.cancelled
    );
    Ok(if done.problems.is_empty() { 0 } else { 1 })
}

fn compare_command(args: &CompareArgs) -> Result<u8, Error> {
    let c = report::compare(&args.a, &args.b).map_err(Error::Input)?;
    let text = if args.json {
        serde_json::to_string_pretty(&c).map_err(|e| Error::Internal(e.to_string()))? + "\n"
    } else {
        report::compare_md(&c)
    };
    print!("{text}");
    if let Some(out) = &args.out {
        report::write_atomic(out, text.as_bytes())
            .map_err(|e| Error::Input(format!("cannot write {}: {e}", out.display())))?;
    }
    Ok(u8::from(c.regressed()))
}

fn merge_command(args: &MergeArgs) -> Result<u8, Error> {
    let merged = report::merge(&args.out, &args.inputs).map_err(Error::Input)?;
    print!(
        "{}",
        report::merge_summary(&args.out, &args.inputs, &merged)
    );
    let all_passed = merged
        .totals
        .as_ref()
        .is_some_and(|t| t.passed == t.total && t.total > 0);
    Ok(if !merged.consistent() {
        2
    } else if all_passed {
        0
    } else {
        1
    })
}

/// `sandbox-exec`: becomes the command under Landlock; returns only on failure.
#[cfg(target_os = "linux")]
fn sandbox_exec(args: &SandboxExecArgs) -> Result<u8, Error> {
    let limits = executor::ResourceLimits {
        memory_bytes: args.memory,
        cpu_seconds: args.cpu,
    };
    let why = executor::sandbox::shim::exec(&args.writable, !args.no_landlock, limits, &args.argv);
    eprintln!("ufo-batch sandbox: {why}");
    Ok(126)
}

#[cfg(not(target_os = "linux"))]
fn sandbox_exec(_args: &SandboxExecArgs) -> Result<u8, Error> {
    eprintln!("ufo-batch sandbox: Landlock exists only on Linux");
    Ok(126)
}

/// The config file: the one named, or `ufo-batch.toml` if it exists.
fn read_config(path: Option<PathBuf>) -> Result<(ConfigFile, Option<PathBuf>), Error> {
    match path {
        Some(p) => Ok((ConfigFile::load(&p, true)?, Some(p))),
        None => {
            let p = PathBuf::from(DEFAULT_CONFIG_FILE);
            let exists = p.exists();
            Ok((ConfigFile::load(&p, false)?, exists.then_some(p)))
        }
    }
}
