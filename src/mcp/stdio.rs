//! A stdio MCP server of one task: started through the task's executor (so in its
//! workspace and sandbox, as its commands are), spoken to over its pipes, ended with the
//! task. `{workspace}` in its arguments and environment is the workspace.

use std::path::Path;
use std::time::Duration;

use super::config::{McpServer, Transport};
use super::connection::Connection;
use crate::executor::{Executor, Service, ServiceSpec, ShellExecutor, ShellSettings, StderrTail};
use crate::tool::{Blame, Blamed, Failure};

/// Characters of a failed server's stderr shown (its end).
const STDERR_SHOWN: usize = 600;

/// How long a server that failed may take to end (and so to finish writing its stderr).
const STDERR_SETTLE: Duration = Duration::from_secs(2);

/// A running stdio server and the session with it.
pub(crate) struct StdioServer {
    connection: Connection,
    service: Service,
    /// Why its output was cut off, once it was (too long a message, a malformed one).
    refusal: super::bounded::Refusal,
}

impl StdioServer {
    /// Starts `server` through `executor` for the task whose workspace is `workspace`.
    pub(crate) async fn start(
        server: &McpServer,
        executor: &mut dyn Executor,
        workspace: &Path,
    ) -> Result<Self, Failure> {
        let Transport::Stdio {
            command,
            args,
            env,
            cwd,
        } = &server.transport
        else {
            return Err(Failure::new(
                Blame::Config,
                format!("`{}` is not a stdio server", server.name),
            ));
        };
        let place = |text: &str| text.replace("{workspace}", &workspace.display().to_string());
        let argv: Vec<String> = std::iter::once(command)
            .chain(args)
            .map(|a| place(a))
            .collect();
        let env: Vec<(String, String)> = env.iter().map(|(k, v)| (k.clone(), place(v))).collect();
        // `cwd` is relative to the workspace already.
        let cwd = cwd.clone();
        let mut service = executor
            .start_service(&ServiceSpec {
                argv: &argv,
                env: &env,
                cwd: cwd.as_deref(),
            })
            .await?;
        let (Some(to), Some(from)) = (service.stdin.take(), service.stdout.take()) else {
            return Err(Failure::environment("the server's pipes are missing"));
        };
        let from = super::bounded::BoundedLines::new(from, super::bounded::MAX_MESSAGE);
        let refusal = from.refusal();
        match Connection::over_pipes(from, to).await {
            Ok(connection) => Ok(Self {
                refusal,
                connection,
                service,
            }),
            Err(e) => {
                service.stderr.settled(STDERR_SETTLE).await;
                // The server's doing (it would not speak MCP): the environment's.
                Err(Failure::new(
                    e.blame(),
                    with_stderr(e.to_string(), &service.stderr),
                ))
            }
        }
    }

    /// Starts `server` on its own in `dir` (to list its tools before tasks run),
    /// confined and limited by `settings` as a task's commands are: a server that writes
    /// as it starts writes in `dir` only.
    pub(crate) async fn start_alone(
        server: &McpServer,
        dir: &Path,
        settings: ShellSettings,
    ) -> Result<Self, Failure> {
        let mut shell = ShellExecutor::with_tmp(dir.to_path_buf(), None, settings);
        Self::start(server, &mut shell, dir).await
    }

    /// The session.
    pub(crate) fn connection(&self) -> &Connection {
        &self.connection
    }

    /// `why`, with the end of what the server (gone) wrote to stderr.
    pub(crate) fn explain(&self, why: String) -> impl Future<Output = String> + Send + 'static {
        let stderr = self.service.stderr.clone();
        let refusal = self.refusal.clone();
        async move {
            // Its own output cut off: the server's doing, said in the runner's words.
            if let Some(refused) = refusal.get() {
                return format!("{why}: {refused}, and its session was closed");
            }
            stderr.settled(STDERR_SETTLE).await;
            with_stderr(why, &stderr)
        }
    }

    /// Ends the session (the server sees its stdin close) and the server.
    pub(crate) async fn stop(self) {
        self.connection.close().await;
        drop(self.service);
    }
}

fn with_stderr(why: String, stderr: &StderrTail) -> String {
    let stderr = stderr.text();
    if stderr.is_empty() {
        why
    } else {
        let chars: Vec<char> = stderr.chars().collect();
        let tail: String = chars[chars.len().saturating_sub(STDERR_SHOWN)..]
            .iter()
            .collect();
        format!("{why}; its stderr ends: {}", tail.trim())
    }
}
