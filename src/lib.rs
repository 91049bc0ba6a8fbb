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
pub mod backoff;
pub mod cli;
pub mod commands;
pub mod config;
pub mod error;
pub mod eval;
pub mod event;
pub mod executor;
pub mod hash;
pub mod layout;
pub mod llm;
pub mod pool;
pub mod record;
pub mod relpath;
pub mod report;
pub mod resources;
pub mod resume;
pub mod run;
pub mod session;
pub mod shard;
pub mod signals;
pub mod task;
pub mod text;
pub mod tool;
pub mod units;

#[cfg(test)]
mod testutil;

/// Runs a parsed command line; returns the process exit code.
pub fn execute(cli: cli::Cli) -> Result<u8, error::Error> {
    commands::dispatch(cli)
}
