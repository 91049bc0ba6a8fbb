//! The barrier on Linux: one `syncfs` of each file system holding a staged file.

use std::os::fd::AsRawFd;
use std::os::unix::fs::MetadataExt;

/// One `syncfs` per file system of `batch` (each item's file is `file` of it);
/// returns what was synced, what failed and why, and how many syncs ran.
pub(super) fn sync_file_systems<T>(
    batch: Vec<T>,
    file: impl Fn(&T) -> &std::path::Path,
) -> (Vec<T>, Vec<(T, std::io::Error)>, u64) {
    let mut ready = Vec::with_capacity(batch.len());
    let mut failed = Vec::new();
    // Each file system's outcome, by device number.
    let mut done: Vec<(u64, Result<(), std::sync::Arc<std::io::Error>>)> = Vec::new();
    let mut syncs = 0;
    for item in batch {
        let device = match std::fs::metadata(file(&item)) {
            Ok(meta) => meta.dev(),
            Err(e) => {
                failed.push((item, e));
                continue;
            }
        };
        let outcome = match done.iter().find(|(d, _)| *d == device) {
            Some((_, outcome)) => outcome.clone(),
            None => {
                syncs += 1;
                let outcome = syncfs(file(&item)).map_err(std::sync::Arc::new);
                done.push((device, outcome.clone()));
                outcome
            }
        };
        match outcome {
            Ok(()) => ready.push(item),
            Err(e) => failed.push((item, std::io::Error::new(e.kind(), e))),
        }
    }
    (ready, failed, syncs)
}

/// Syncs the file system that holds `file`.
pub(super) fn syncfs(file: &std::path::Path) -> std::io::Result<()> {
    let file = std::fs::File::open(file)?;
    // SAFETY: `file` is an open descriptor for the whole call.
    if unsafe { libc::syncfs(file.as_raw_fd()) } == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}
