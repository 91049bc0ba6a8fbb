//! Files replaced together put in place at once, on the caller's thread, durably: two
//! syncs for all of them.

use std::path::PathBuf;

#[cfg(target_os = "linux")]
use super::linux;
use super::sync::{settle, settle_scope};
use crate::rundir::atomic::{Staged, count_syncs};
use crate::rundir::error::{FileError, FileErrors};

/// Puts `staged` files in their places now, together and durably: the contents of all of
/// them reach the disk before any is moved into place (one `syncfs` on Linux, a sync of
/// each elsewhere), and the moves before this returns (one more `syncfs`, or a sync of
/// the folder). After a crash each file is its old or its new version, never torn, as
/// with `write_atomic`, for two syncs however many files there are (the run-level files
/// at the end of a run).
pub(crate) fn put_in_place(staged: Vec<Staged>) -> Result<(), FileErrors> {
    let mut errors = FileErrors::default();
    let mut moved: Vec<PathBuf> = Vec::new();
    #[cfg(target_os = "linux")]
    let staged = {
        let (ready, failed, count) = linux::sync_file_systems(staged, |s: &Staged| s.temp());
        count_syncs(count);
        for (s, e) in failed {
            errors.keep(Err(FileError::write(s.path(), e)));
        }
        ready
    };
    for s in staged {
        #[cfg(not(target_os = "linux"))]
        {
            count_syncs(1);
            let synced = std::fs::OpenOptions::new()
                .write(true)
                .open(s.temp())
                .and_then(|f| f.sync_all());
            if let Err(e) = synced {
                errors.keep(Err(FileError::write(s.path(), e)));
                continue;
            }
        }
        let path = s.path().to_path_buf();
        match s.commit() {
            Ok(()) => moved.push(path),
            Err(e) => errors.keep(Err(FileError::write(&path, e))),
        }
    }
    // The moves: one sync of each file system (Linux) or folder holding them.
    let mut settled: Vec<PathBuf> = Vec::new();
    for path in moved {
        let within = settle_scope(&path);
        if settled.contains(&within) {
            continue;
        }
        if cfg!(unix) {
            count_syncs(1);
        }
        if let Err(e) = settle(&path) {
            errors.keep(Err(FileError::write(&path, e)));
        }
        settled.push(within);
    }
    errors.into_result()
}
