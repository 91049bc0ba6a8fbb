//! Whose a failure is. Every layer below the agents (the desktop backends, the jail,
//! the supervisor, MCP, devices, the document reader, the checks) says, with its typed
//! error, whose doing a failure was; a tool result carries it beside the message the
//! model sees, and `attempt::outcome` turns it into the task's status (the table in the
//! README, "Whose failure it is").

use serde::{Deserialize, Serialize};

/// Whose doing a failure was.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Blame {
    /// The agent's choice: a control that is not there, a command that exits non-zero,
    /// arguments a tool refuses. The step fails and the agent sees why.
    Agent,
    /// The task file: an object that cannot be found, a `files` key that cannot be
    /// written, a setup action that fails. The task is an `error`; running it again
    /// gives the same, so it is not retried, and a resumed run keeps it until the task
    /// file changes.
    TaskFile,
    /// The machine, an app or a device: an app that crashed, a bus that went away, a
    /// connection lost, a device that sends nothing. The task is an `error` and is
    /// retried: another try (or another device) may succeed.
    Environment,
    /// The run's configuration of a part the task uses: a device or an MCP server that
    /// refuses the argument the runner fills in, a wrong API key. The task is an
    /// `error`, not retried; a resumed run keeps it until the configuration changes.
    Config,
    /// The runner itself: a file of its own it cannot write, a bug. The task is an
    /// `error` and is retried.
    Runner,
}

impl Blame {
    /// The word used in files (`status.json`'s `blame`).
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::Agent => "agent",
            Self::TaskFile => "task_file",
            Self::Environment => "environment",
            Self::Config => "config",
            Self::Runner => "runner",
        }
    }
}

impl std::fmt::Display for Blame {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A failure, in words, and whose it is: what a layer's typed error becomes where
/// layers meet (an executor's fault, a tool's failed result).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub(crate) struct Failure {
    /// Whose it is.
    pub(crate) blame: Blame,
    /// What went wrong, for the model, the log and `status.json`.
    pub(crate) message: String,
}

impl Failure {
    /// A failure of `blame`'s, saying `message` (a text, or a typed error's words).
    pub(crate) fn new(blame: Blame, message: impl std::fmt::Display) -> Self {
        Self {
            blame,
            message: message.to_string(),
        }
    }

    /// The agent's failure.
    pub(crate) fn agent(message: impl std::fmt::Display) -> Self {
        Self::new(Blame::Agent, message)
    }

    /// The machine's, an app's or a device's failure.
    pub(crate) fn environment(message: impl std::fmt::Display) -> Self {
        Self::new(Blame::Environment, message)
    }

    /// The same failure, its message put in `context` (`format!`-like: `{}` is the
    /// message).
    pub(crate) fn context(self, context: impl FnOnce(&str) -> String) -> Self {
        Self {
            message: context(&self.message),
            ..self
        }
    }
}

/// A typed error that knows whose failure it is.
pub(crate) trait Blamed: std::error::Error {
    /// Whose failure it is.
    fn blame(&self) -> Blame;

    /// The error as a [`Failure`]: its message with its causes, and its blame.
    fn failure(&self) -> Failure {
        let mut message = self.to_string();
        let mut source = self.source();
        while let Some(s) = source {
            let more = s.to_string();
            if !message.contains(&more) {
                message.push_str(&format!(": {more}"));
            }
            source = s.source();
        }
        Failure::new(self.blame(), message)
    }
}
