//! The errors that stop a command before or outside the running of tasks, with their
//! exit codes. A task that fails is not an error here: it is a result.

use crate::batch::BatchError;
use crate::config::ConfigError;
use crate::finished::FinishedError;
use crate::rundir::FileError;
use crate::task::LoadError;

/// A command-level error: what went wrong, said once by `main`, and its exit code.
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub struct Error(#[from] Kind);

/// The kinds of command-level errors.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Kind {
    /// Bad configuration or options.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The task paths given cannot be read.
    #[error(transparent)]
    Load(#[from] LoadError),
    /// The batch cannot start, or its reporting broke.
    #[error(transparent)]
    Batch(#[from] BatchError),
    /// A finished run dir cannot be read or written as asked.
    #[error(transparent)]
    Finished(#[from] FinishedError),
    /// An output file cannot be written.
    #[error(transparent)]
    File(#[from] FileError),
    /// A bug or an environment failure (no async runtime, a crashed reporter).
    #[error("internal error: {0}")]
    Internal(String),
}

impl Error {
    /// An error of the runner itself (a bug, or an environment it cannot work in).
    pub(crate) fn internal(message: impl Into<String>) -> Self {
        Self(Kind::Internal(message.into()))
    }

    /// The process exit code: 2 for bad usage, configuration or input.
    pub fn exit_code(&self) -> u8 {
        use Kind::{Batch, Config, File, Finished, Internal, Load};
        match &self.0 {
            Config(_) | Load(_) | Finished(_) | File(_) => 2,
            Batch(e) if e.is_usage() => 2,
            Batch(_) | Internal(_) => 1,
        }
    }

    /// The message with its chain of causes, one per line; a cause whose words the
    /// message already carries is not repeated.
    pub fn render(&self) -> String {
        let scrubbed = crate::secrets::scrub(&self.render_raw()).into_owned();
        // Paths and texts from task files: shown, never obeyed by the terminal.
        crate::text::printable(&scrubbed).into_owned()
    }

    /// `render` before secrets are masked.
    fn render_raw(&self) -> String {
        let mut text = format!("error: {self}");
        let mut source = std::error::Error::source(self);
        while let Some(s) = source {
            let msg = s.to_string();
            if !text.contains(&msg) {
                text.push_str(&format!("\n  caused by: {msg}"));
            }
            source = s.source();
        }
        text
    }
}

macro_rules! from_kind {
    ($($error:ty),*) => {$(
        impl From<$error> for Error {
            fn from(e: $error) -> Self {
                Self(Kind::from(e))
            }
        }
    )*};
}

from_kind!(ConfigError, LoadError, BatchError, FinishedError, FileError);
