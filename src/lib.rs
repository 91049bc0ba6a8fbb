//! ufo-batch runs batches of computer-use agent tasks: a folder of task files (UFO
//! request files, step plans, recorded plans, OSWorld's tasks) becomes one session per file, run many at
//! once, each in its own workspace, each ending in a definite status and a readable
//! trajectory.
//!
//! The floors, top to bottom; each module imports only from floors below it (checked by
//! `scripts/imports.py`; a module's own files may use their parent's items):
//!
//! ```text
//! app                 the subcommands (run, validate, report, compare, merge)
//! cli, error          clap's view of the command line; command-level errors, exit codes
//! config              the validated configuration
//! batch               prepare a batch (load, shard, repeat, resume) and execute it
//! pool                SessionPool: bounded attempts, retries, stop rules; emits events
//! attempt             one attempt of one task: workspace, setup, session, evaluation;
//!                     whose failure decides the status (attempt::outcome)
//! agent, device       ReplayAgent, LinuxAgent, the desktop agents, EvaluationAgent;
//!                     UFO's device clients (AIP over WebSocket) as remote workers
//! session, eval, mcp, Session, Round, Context, the Agent trait; deterministic checks;
//!   finished, reporter   MCP servers; commands over finished run dirs; live reporters
//! executor, experience, what carries out tool calls (the Executor trait); experience;
//!   osworld, render      OSWorld's server and evaluator on a task's desktop; the text
//!                        of every derived file
//! event, rundir       the one interface between the core and the reporters; the on-disk
//!                     layout: paths, atomic writes, the group commit, records, resume
//! desktop, record,    a task's own desktop (the Backend trait); the persisted schema;
//!   shard                sharding
//! task                task files: shapes, ids, loading, the apps a task names
//! confined            files a task names: opened beneath its folder, no links
//! jail, llm,          a task's jail, runner's side; the OpenAI-compatible client;
//!   regular_file         bounded reads of regular files
//! tool, relpath,      tool calls, results, specs and whose failure a result is;
//!   parallel             relative paths; data-parallel helpers
//! units, text, hash, backoff, resources, secrets, stats, document, caps, tls, ...   leaves
//! ```
//!
//! The core (everything above `event`) never prints; reporters and `app` do.

mod agent;
mod app;
mod attempt;
mod backoff;
mod batch;
#[cfg(target_os = "linux")]
mod caps;
pub mod cli;
mod config;
mod confined;
mod desktop;
mod device;
mod document;
pub mod error;
mod eval;
mod event;
mod executor;
mod experience;
mod finished;
mod hash;
#[cfg(target_os = "linux")]
mod jail;
mod llm;
mod mcp;
mod osworld;
mod parallel;
mod pending;
mod pool;
mod priority;
mod record;
mod regular_file;
mod relpath;
mod render;
mod reporter;
mod resources;
mod rundir;
mod secrets;
mod session;
mod shard;
mod stats;
mod task;
mod text;
mod tls;
mod tool;
mod units;

#[cfg(test)]
mod testutil;

pub use secrets::ScrubbedStderr;

/// Runs a parsed command line; returns the process exit code.
pub fn execute(cli: cli::Cli) -> Result<u8, error::Error> {
    app::dispatch(cli)
}
