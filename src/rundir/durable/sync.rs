//! The syncs that make moves durable: a `syncfs` of the file system on Linux, a sync of
//! the folder on other Unix systems, and elsewhere each file of a task synced.

use std::path::{Path, PathBuf};

#[cfg(not(target_os = "linux"))]
use super::Pending;
#[cfg(target_os = "linux")]
use super::linux;
#[cfg(not(target_os = "linux"))]
use crate::rundir::atomic::count_syncs;

/// What one [`settle`] of `path` covers: its file system on Linux (told apart by the
/// folder's device), its folder elsewhere.
pub(super) fn settle_scope(path: &Path) -> PathBuf {
    let folder = path.parent().unwrap_or(Path::new(".")).to_path_buf();
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::fs::MetadataExt;
        if let Ok(meta) = std::fs::metadata(&folder) {
            return PathBuf::from(format!("dev:{}", meta.dev()));
        }
    }
    folder
}

/// Makes the moves into `path`'s folder durable: on Linux with a `syncfs` (its file
/// system's every folder), on other Unix systems with a sync of the folder; Windows has
/// no folder sync (NTFS journals the rename).
pub(super) fn settle(path: &Path) -> std::io::Result<()> {
    #[cfg(target_os = "linux")]
    return linux::syncfs(path);
    #[cfg(all(unix, not(target_os = "linux")))]
    return sync_folder(path);
    #[cfg(not(unix))]
    {
        let _ = path;
        Ok(())
    }
}

/// Syncs the folder holding `path`.
#[cfg(all(unix, not(target_os = "linux")))]
fn sync_folder(path: &Path) -> std::io::Result<()> {
    match path.parent() {
        Some(dir) => std::fs::File::open(dir)?.sync_all(),
        None => Ok(()),
    }
}

/// Syncs a task's written files and its staged file one by one, then (on Unix) their
/// folder, so that the moves that put the written files in place are durable before
/// the status says the task is final. Each file is opened for writing: Windows flushes
/// only a handle with write access.
#[cfg(not(target_os = "linux"))]
pub(super) fn sync_files(pending: &Pending) -> std::io::Result<()> {
    for file in pending
        .written
        .iter()
        .map(PathBuf::as_path)
        .chain([pending.staged.temp()])
    {
        count_syncs(1);
        match std::fs::OpenOptions::new().write(true).open(file) {
            Ok(opened) => opened.sync_all()?,
            // A log the task never wrote.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
    }
    #[cfg(unix)]
    {
        count_syncs(1);
        sync_folder(pending.staged.temp())?;
    }
    Ok(())
}
