//! Executors: what carries out an agent's commands (design.md §3). One trait; the
//! `shell` executor runs commands and file tools inside a task's workspace, each
//! command in its own process group, killed with its whole tree on timeout; the
//! `desktop` executor adds UFO's app tools on the task's own desktop.

mod capture;
mod desktop;
mod fetch;
mod process;
pub(crate) mod sandbox;
mod screen;
mod shell;

use async_trait::async_trait;

pub(crate) use desktop::{DesktopExecutor, DesktopSettings};
pub(crate) use fetch::{Fetch, FetchKind};
pub(crate) use process::{ResourceLimits, Service, StderrTail, wait_for_supervisors};
pub(crate) use screen::{Listed, Scope, ScreenView, StepScreens};
pub(crate) use shell::{ShellExecutor, ShellSettings, shell_tools};

use crate::tool::{Blame, Failure, ResultStatus, ToolCall, ToolResult};

/// Every tool a recorded plan may use: the shell's and the desktop's (its UI tools, the
/// apps' API tools and the computer-use tools).
pub(crate) fn all_tools() -> &'static [crate::tool::ToolSpec] {
    static TOOLS: std::sync::LazyLock<Vec<crate::tool::ToolSpec>> =
        std::sync::LazyLock::new(|| {
            let mut all = shell_tools().to_vec();
            all.extend_from_slice(crate::desktop::tools::desktop_tools());
            all.extend_from_slice(crate::desktop::office::office_tools());
            all.extend_from_slice(crate::desktop::computer::computer_tools());
            all
        });
    &TOOLS
}

/// Carries out commands.
#[async_trait]
pub(crate) trait Executor: Send {
    /// Runs one command. Failures are results, never panics or errors.
    async fn execute(&mut self, command: &ToolCall) -> ToolResult;

    /// Set once the executor itself has failed (not a command: the means of running
    /// commands), so the session ends as an `error`, its status decided by whose
    /// failure it was.
    fn fault(&self) -> Option<Failure> {
        None
    }

    /// Makes ready what the session needs beyond the workspace (a desktop task's
    /// desktop and app), after the task's setup ran; returns a note for the task log.
    /// Failing, the task cannot run.
    async fn prepare(&mut self) -> Result<Option<String>, Failure> {
        Ok(None)
    }

    /// Says that session step `step` begins, for an agent of `scope`; a desktop
    /// executor observes the screen, saves it and says what the agent is shown.
    async fn begin_step(&mut self, _step: u32, _scope: Scope) -> Option<StepScreens> {
        None
    }

    /// Says that the session ended and evaluation is next: a desktop executor takes the
    /// final screenshot and closes the app, so that the checks read what it saved.
    /// Returns a note for the task log.
    async fn end_session(&mut self) -> Option<String> {
        None
    }

    /// The tools this executor offers, when they are not the built-in ones (a remote
    /// device's): what an LLM agent is given.
    fn tools(&self) -> Option<Vec<crate::tool::ToolSpec>> {
        None
    }

    /// Brings the files the checks read (relative to the task's folder) into the local
    /// workspace, where checks read them: a remote executor fetches them; a local one has
    /// them already. `Err` says why the checks cannot be made here (the executor then
    /// counts it as its fault: no verdict is given).
    async fn fetch(&mut self, _wanted: &[Fetch]) -> Result<(), Failure> {
        Ok(())
    }

    /// Starts a helper process that runs beside the task's commands until the task
    /// ends (a stdio MCP server), confined as they are, with pipes to it.
    async fn start_service(&mut self, spec: &ServiceSpec<'_>) -> Result<Service, Failure> {
        Err(Failure::new(
            Blame::Config,
            format!(
                "cannot start {}: this executor starts no processes",
                spec.argv.first().map_or("a process", String::as_str)
            ),
        ))
    }

    /// Scores the session as OSWorld's own evaluator does, on the desktop that ran it
    /// (its postconfig, getters and metric), `last` saying how the agent ended; `None`
    /// where the task's desktop is not an OSWorld task's.
    async fn osworld_evaluate(
        &mut self,
        _last: crate::osworld::LastAction,
    ) -> Option<Result<crate::osworld::Scored, Failure>> {
        None
    }

    /// Ends whatever the commands left running (background processes). Returns a note
    /// for the task log when there was something to end.
    async fn shutdown(&mut self) -> Option<String>;
}

/// A helper process to start for a task.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ServiceSpec<'a> {
    /// The program and its arguments.
    pub(crate) argv: &'a [String],
    /// Variables added to the environment commands get.
    pub(crate) env: &'a [(String, String)],
    /// Its working directory, relative to the workspace (default: the workspace).
    pub(crate) cwd: Option<&'a str>,
}

/// A command's result and how long it took.
#[derive(Clone, Debug)]
pub(crate) struct Executed {
    /// The result.
    pub(crate) result: ToolResult,
    /// Seconds it took.
    pub(crate) duration_s: f64,
}

/// Runs commands in order; after the first failure the rest are `skipped` (UFO's
/// CommandRouter with `early_exit=True`).
pub(crate) async fn execute_all(
    executor: &mut dyn Executor,
    commands: &[ToolCall],
) -> Vec<Executed> {
    let mut out = Vec::with_capacity(commands.len());
    let mut failed = false;
    for command in commands {
        if failed {
            out.push(Executed {
                result: ToolResult::skipped(command),
                duration_s: 0.0,
            });
            continue;
        }
        let clock = std::time::Instant::now();
        let result = executor.execute(command).await;
        failed = result.status == ResultStatus::Failure;
        out.push(Executed {
            result,
            duration_s: crate::units::seconds(clock.elapsed()),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::RecordingExecutor;

    /// Fails every command whose tool is `fail`.
    struct FailNamed(RecordingExecutor);

    #[async_trait]
    impl Executor for FailNamed {
        async fn execute(&mut self, command: &ToolCall) -> ToolResult {
            if command.tool_name == "fail" {
                return ToolResult::failure(
                    command,
                    "test",
                    Failure::agent("no"),
                    serde_json::Value::Null,
                );
            }
            self.0.execute(command).await
        }
        async fn shutdown(&mut self) -> Option<String> {
            None
        }
    }

    #[tokio::test]
    async fn commands_after_a_failure_are_skipped() {
        let mut ex = FailNamed(RecordingExecutor::default());
        let cmds: Vec<ToolCall> = ["a", "fail", "c"]
            .iter()
            .map(|t| ToolCall::action(*t, Default::default()))
            .collect();
        let out = execute_all(&mut ex, &cmds).await;
        let statuses: Vec<ResultStatus> = out.iter().map(|e| e.result.status).collect();
        assert_eq!(
            statuses,
            [
                ResultStatus::Success,
                ResultStatus::Failure,
                ResultStatus::Skipped
            ]
        );
        assert_eq!(ex.0.commands.len(), 1, "c never reached the executor");
    }
}
