//! Errors of a run dir: one that cannot be used, and files that could not be written,
//! each with the path it concerns.

use std::fmt;
use std::path::{Path, PathBuf};

/// A result file that could not be written.
#[derive(Debug, thiserror::Error)]
pub(crate) enum FileError {
    /// Writing (or creating its folder, or moving it) failed.
    #[error("cannot write {}: {source}", path.display())]
    Write {
        /// The file or folder.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The content could not be rendered.
    #[error("{0}")]
    Render(String),
}

impl FileError {
    /// Writing `path` failed with `source`.
    pub(crate) fn write(path: &Path, source: std::io::Error) -> Self {
        Self::Write {
            path: path.to_path_buf(),
            source,
        }
    }
}

/// Every file of one piece of work that could not be written (the rest were).
#[derive(Debug, Default)]
pub(crate) struct FileErrors(Vec<FileError>);

impl FileErrors {
    /// Keeps the error of `result`, if any.
    pub(crate) fn keep(&mut self, result: Result<(), FileError>) {
        if let Err(e) = result {
            self.0.push(e);
        }
    }

    /// Keeps every error of `other`.
    pub(crate) fn extend(&mut self, other: FileErrors) {
        self.0.extend(other.0);
    }

    /// `Ok` when nothing failed.
    pub(crate) fn into_result(self) -> Result<(), FileErrors> {
        if self.0.is_empty() { Ok(()) } else { Err(self) }
    }
}

impl From<FileError> for FileErrors {
    fn from(e: FileError) -> Self {
        Self(vec![e])
    }
}

impl fmt::Display for FileErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            write!(f, "{e}")?;
        }
        Ok(())
    }
}

impl std::error::Error for FileErrors {}

/// Why a run dir cannot be used.
#[derive(Debug, thiserror::Error)]
pub(crate) enum RunDirError {
    /// The folder exists, is not empty, and is not ours.
    #[error(
        "{0} exists and is not a ufo-batch run folder (it has no ufo-batch run.json); choose another --out or --name"
    )]
    NotOurs(String),
    /// Another runner is running in it.
    #[error(
        "{holder} is already running in {}; wait for it to end or stop it (two runners on one run folder would break each other's tasks)",
        dir.display()
    )]
    Locked {
        /// The run dir.
        dir: PathBuf,
        /// Who holds it, in words.
        holder: String,
    },
    /// Reading or deleting it failed.
    #[error("cannot use the run folder {path}: {source}")]
    Io {
        /// The folder.
        path: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}
