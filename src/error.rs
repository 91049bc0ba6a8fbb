//! The errors that stop a command before or outside the running of tasks, with their
//! exit codes. A task that fails is not an error here: it is a result.

use crate::config::ConfigError;
use crate::resume::RunDirError;
use crate::task::LoadError;

/// A command-level error.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Bad configuration or options.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The task paths given cannot be read.
    #[error(transparent)]
    Load(#[from] LoadError),
    /// The run folder cannot be used.
    #[error(transparent)]
    RunDir(#[from] RunDirError),
    /// Input that cannot be used (a folder that is not a run dir, ...).
    #[error("{0}")]
    Input(String),
    /// `validate` found problems (already printed).
    #[error("{0}")]
    Invalid(String),
    /// A bug or an environment failure (no async runtime, a crashed reporter).
    #[error("internal error: {0}")]
    Internal(String),
}

impl Error {
    /// The process exit code: 2 for bad usage, configuration or input.
    pub fn exit_code(&self) -> u8 {
        match self {
            Self::Config(_)
            | Self::Load(_)
            | Self::RunDir(_)
            | Self::Input(_)
            | Self::Invalid(_) => 2,
            Self::Internal(_) => 1,
        }
    }

    /// The message with its chain of causes, one per line.
    pub fn render(&self) -> String {
        let mut text = format!("error: {self}");
        let mut source = std::error::Error::source(self);
        // Transparent variants repeat their inner message as the first source.
        let mut last = self.to_string();
        while let Some(s) = source {
            let msg = s.to_string();
            if msg != last {
                text.push_str(&format!("\n  caused by: {msg}"));
            }
            last = msg;
            source = s.source();
        }
        text
    }
}
