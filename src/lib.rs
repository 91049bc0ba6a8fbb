//! ufo-batch runs batches of computer-use agent tasks: a folder of task files (UFO
//! request files, step plans, recorded plans) becomes one session per file, run many at
//! once, each in its own workspace, each ending in a definite status and a readable
//! trajectory.
//!
//! How a run flows, and where each part lives:
//!
//! ```text
//! cli ─► config ─► run ─► task (load, validate)
//!                     ├─► resume (what to run again)
//!                     └─► pool ─► attempt ─► session ─► agent ─► executor
//!                           │                      (Round, Context)    (shell)
//!                           └──── event ────► report (stats, files, terminal)
//! ```
//!
//! The core (everything left of `event`) never prints; reporters do. Dependencies run
//! one way: nothing in the core imports `report` or `cli`.

pub mod agent;
pub mod attempt;
pub mod cli;
pub mod command;
pub mod config;
pub mod error;
pub mod eval;
pub mod event;
pub mod executor;
pub mod hash;
pub mod layout;
pub mod llm;
pub mod paths;
pub mod pool;
pub mod record;
pub mod report;
pub mod resources;
pub mod resume;
pub mod retry;
pub mod run;
pub mod session;
pub mod shard;
pub mod signals;
pub mod task;
pub mod text;
pub mod timestamp;

#[cfg(test)]
mod testutil;

use std::io::IsTerminal;
use std::path::PathBuf;

use cli::{Cli, Command, Progress};
use config::{ConfigFile, DEFAULT_CONFIG_FILE, RunConfig};
use error::Error;
use report::{Display, DisplayMode};

/// Runs a parsed command line; returns the process exit code.
pub fn execute(cli: Cli) -> Result<u8, Error> {
    match cli.command {
        Command::Run(args) => {
            let args = *args;
            let (overrides, config_path, progress) = args.into_overrides();
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
            Ok(stats.exit_code())
        }
        Command::SandboxExec(args) => sandbox_exec(&args),
        Command::Merge(args) => {
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
        Command::Validate(args) => {
            let loaded = task::load(&args.paths, None, &executor::shell_tools())?;
            let (text, bad) = report::validation_report(&loaded);
            print!("{text}");
            if bad {
                Err(Error::Invalid("some task files have problems".into()))
            } else {
                Ok(0)
            }
        }
    }
}

/// `sandbox-exec`: becomes the command under Landlock; returns only on failure.
#[cfg(target_os = "linux")]
fn sandbox_exec(args: &cli::SandboxExecArgs) -> Result<u8, Error> {
    let why = executor::sandbox::shim::exec(&args.writable, &args.argv);
    eprintln!("ufo-batch sandbox: {why}");
    Ok(126)
}

#[cfg(not(target_os = "linux"))]
fn sandbox_exec(_args: &cli::SandboxExecArgs) -> Result<u8, Error> {
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
