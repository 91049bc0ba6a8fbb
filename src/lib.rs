//! ufo-batch runs batches of computer-use agent tasks: a folder of task files (UFO
//! request files, step plans, recorded plans) becomes one session per file, run many at
//! once, each in its own workspace, each ending in a definite status and a readable
//! trajectory.
//!
//! The floors, top to bottom; each module imports only from floors below it:
//!
//! ```text
//! app            the subcommands (run, validate, report, compare, merge)
//! cli, config    clap's view of the command line; the validated configuration
//! batch          prepare a batch (load, shard, repeat, resume) and execute it
//! pool           SessionPool: bounded attempts, retries, stop rules; emits events
//! attempt        one attempt of one task: workspace, setup, session, evaluation
//! session        Session, Round, Context, the Agent trait: a state machine
//! agent          ReplayAgent, LinuxAgent, EvaluationAgent
//! executor, llm  what carries out tool calls; the OpenAI-compatible client
//! desktop        a task's own desktop: display, buses, app; controls, keys, screenshots
//! device         UFO's device clients (AIP over WebSocket) as remote workers
//! jail           a task's jail (Linux namespaces, Landlock, seccomp), runner's side
//! eval, document deterministic checks; reading the documents they look into
//! confined       files a task names: opened beneath its folder, no links, the task's rights
//! task           task files: shapes, ids, loading
//! event          the one interface between the core and the reporters
//! reporter       live reporters: statistics, result files, the terminal
//! finished       commands over finished run dirs (report, compare, merge)
//! render         the text of every derived file
//! rundir         the on-disk layout: paths, atomic writes, the group commit, records, resume
//! record         the persisted schema (status.json, response.log, evaluation.log)
//! tool           tool calls, results and specs
//! units, text, hash, relpath, backoff, shard, resources, parallel, priority   leaves
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
mod tool;
mod units;

#[cfg(test)]
mod testutil;

pub use secrets::ScrubbedStderr;

/// Runs a parsed command line; returns the process exit code.
pub fn execute(cli: cli::Cli) -> Result<u8, error::Error> {
    app::dispatch(cli)
}
