//! Why a batch could not start, or could not finish writing its results.

use crate::rundir::RunDirError;
use crate::task::LoadError;

/// A batch that cannot run (nothing ran), or whose reporting broke.
#[derive(Debug, thiserror::Error)]
pub(crate) enum BatchError {
    /// The task paths given cannot be read.
    #[error(transparent)]
    Load(#[from] LoadError),
    /// The run folder cannot be used.
    #[error(transparent)]
    RunDir(#[from] RunDirError),
    /// The configuration cannot work on this machine (no sandbox of the kind asked for,
    /// no API key for a hosted LLM).
    #[error("{0}")]
    Refused(String),
    /// The runner itself failed (the HTTP client, the reporter thread).
    #[error("internal error: {0}")]
    Internal(String),
}

impl BatchError {
    /// True when nothing ran because of the user's input or configuration.
    pub(crate) fn is_usage(&self) -> bool {
        !matches!(self, Self::Internal(_))
    }
}
