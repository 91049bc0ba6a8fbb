//! Executors: what carries out an agent's commands (design.md §3). One trait; the
//! `shell` executor runs commands and file tools inside a task's workspace, each
//! command in its own process group, killed with its whole tree on timeout.

mod capture;
mod process;
mod shell;

use async_trait::async_trait;

pub use shell::{ShellExecutor, ShellSettings, shell_tools};

use crate::command::{Command, CommandResult, ResultStatus, ToolSpec};

/// Carries out commands.
#[async_trait]
pub trait Executor: Send {
    /// The namespace written into results (`shell`).
    fn namespace(&self) -> &str;

    /// The tools it offers.
    fn tools(&self) -> Vec<ToolSpec>;

    /// Runs one command. Failures are results, never panics or errors.
    async fn execute(&mut self, command: &Command) -> CommandResult;

    /// Ends whatever the commands left running (background processes). Returns a note
    /// for the task log when there was something to end.
    async fn shutdown(&mut self) -> Option<String>;
}

/// Runs commands in order; after the first failure the rest are `skipped` (UFO's
/// CommandRouter with `early_exit=True`).
pub async fn execute_all(executor: &mut dyn Executor, commands: &[Command]) -> Vec<CommandResult> {
    let mut results = Vec::with_capacity(commands.len());
    let mut failed = false;
    for command in commands {
        if failed {
            results.push(CommandResult::skipped(command));
            continue;
        }
        let result = executor.execute(command).await;
        failed = result.status == ResultStatus::Failure;
        results.push(result);
    }
    results
}
