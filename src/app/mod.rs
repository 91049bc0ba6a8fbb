//! The subcommands: each turns its options into calls of the library and its result into
//! an exit code. What `run` shows goes through the reporters; the other subcommands
//! print their one result here.

mod compare;
mod export;
mod merge;
mod read_document;
mod report;
mod run;
mod sandbox_exec;
mod signals;
mod stdout;
mod tools;
mod validate;

use crate::cli::{Cli, Subcommand};
use crate::error::Error;

/// Runs a parsed command line; returns the process exit code.
pub(crate) fn dispatch(cli: Cli) -> Result<u8, Error> {
    crate::resources::limit_allocator_arenas();
    // Whatever the command, the usual LLM keys never reach what it prints or writes.
    crate::secrets::register_env_keys([]);
    match cli.command {
        Subcommand::Run(args) => run::run(*args),
        Subcommand::Validate(args) => validate::validate(&args),
        Subcommand::Report(args) => report::report(&args),
        Subcommand::Tools(args) => tools::tools(&args),
        Subcommand::Compare(args) => compare::compare(&args),
        Subcommand::Merge(args) => merge::merge(&args),
        Subcommand::Export(args) => export::export(&args),
        Subcommand::SandboxExec(args) => sandbox_exec::sandbox_exec(&args),
        Subcommand::ReadDocument(args) => Ok(read_document::read_document(&args)),
    }
}
