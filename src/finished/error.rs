//! Why a command over finished run dirs could not be carried out.

use std::path::PathBuf;

use crate::rundir::{FileError, FileErrors, RunDirError, RunLayout, RunLock};

/// Refuses the run dir at `dir` while a runner works in it (see `RunLock::reading`);
/// the guard keeps one from starting there until dropped.
pub(crate) fn idle(dir: &std::path::Path) -> Result<Option<RunLock>, FinishedError> {
    RunLock::reading(&RunLayout::new(dir)).map_err(|e| match e {
        RunDirError::Locked { dir, holder } => FinishedError::Busy { dir, holder },
        other => FinishedError::Read {
            path: dir.to_path_buf(),
            source: std::io::Error::other(other.to_string()),
        },
    })
}

/// A run dir that cannot be read or written as asked.
#[derive(Debug, thiserror::Error)]
pub(crate) enum FinishedError {
    /// A runner is working in the run dir (its files change under a re-render).
    #[error(
        "{holder} is running in {}: its files are still being written; try again once it has ended",
        dir.display()
    )]
    Busy {
        /// The run dir.
        dir: PathBuf,
        /// Who holds it, in words.
        holder: String,
    },
    /// The folder is not a ufo-batch run dir.
    #[error("{} is not a ufo-batch run dir (no run.json)", .0.display())]
    NotRunDir(PathBuf),
    /// Some task records of a run dir cannot be read.
    #[error("cannot read {} ({count} unreadable files): {first}", dir.display())]
    Unreadable {
        /// The run dir.
        dir: PathBuf,
        /// How many records cannot be read.
        count: usize,
        /// The first of them, with why.
        first: String,
    },
    /// `export` replaces only a job it wrote itself.
    #[error(
        "{} already exists and is not a job ufo-batch exported; export into another folder",
        .0.display()
    )]
    NotAnExport(PathBuf),
    /// `merge` writes into a new folder only.
    #[error("{} already exists and is not empty; merge into a new folder", .0.display())]
    NotEmpty(PathBuf),
    /// A folder could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The folder.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A task folder could not be copied.
    #[error("cannot copy {}: {source}", path.display())]
    Copy {
        /// The task folder.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A result file could not be written.
    #[error(transparent)]
    File(#[from] FileError),
    /// Some result files could not be written.
    #[error(transparent)]
    Files(#[from] FileErrors),
}
