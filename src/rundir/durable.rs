//! Group commit of finished tasks. A finished task's files are written without waiting
//! for the disk and its new `status.json` is staged beside the old one; the
//! [`Committer`] then makes everything written so far durable with one barrier and only
//! after it moves each staged `status.json` into its place. Tasks that finish while a
//! barrier runs share the next one, so a task costs at most one sync, and far less when
//! many finish together.
//!
//! On Linux the barrier is one `syncfs` of each file system holding a staged file
//! (its data and metadata, everything written before it). Elsewhere each written file
//! and the staged file are synced, then the folder (on Unix). The moves themselves are
//! made durable before a flush is answered (a flush comes before the run-level files,
//! which count the tasks as final): one more `syncfs`, or a sync of the folder.
//!
//! So after a crash or a power cut a task is either final with every file of its
//! result, or not final and runs again on resume.
//!
//! [`put_in_place`] does the same at once, on the caller's thread, for files that are
//! replaced together (the run-level files at the end of a run): two syncs for all.

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use super::atomic::{Staged, count_syncs};
use super::error::{FileError, FileErrors};

/// A staged final `status.json` and the files of its task written before it.
pub(crate) struct Pending {
    /// The staged file.
    pub(crate) staged: Staged,
    /// The task's other files written for this result, or that it may have written
    /// (synced one by one where there is no `syncfs`; one that is not there is skipped).
    #[cfg_attr(target_os = "linux", allow(dead_code))]
    pub(crate) written: Vec<PathBuf>,
}

enum Message {
    Commit(Pending),
    Flush(mpsc::SyncSender<()>),
}

/// A thread that commits finished tasks in groups.
pub(crate) struct Committer {
    tx: Option<mpsc::Sender<Message>>,
    handle: Option<JoinHandle<()>>,
    errors: Arc<Mutex<Vec<String>>>,
}

impl Committer {
    /// Starts the committing thread.
    pub(crate) fn start() -> Self {
        let (tx, rx) = mpsc::channel::<Message>();
        let errors = Arc::new(Mutex::new(Vec::new()));
        let kept = Arc::clone(&errors);
        let handle = std::thread::Builder::new()
            .name("committer".into())
            .spawn(move || {
                crate::priority::lower_this_thread();
                serve(&rx, &kept)
            })
            .expect("spawning the committer thread");
        Self {
            tx: Some(tx),
            handle: Some(handle),
            errors,
        }
    }

    /// Queues `pending` to be put in place once it is durable.
    pub(crate) fn commit(&self, pending: Pending) {
        let queued = self
            .tx
            .as_ref()
            .is_some_and(|tx| tx.send(Message::Commit(pending)).is_ok());
        if !queued {
            self.error("the committer stopped: a finished task stays unfinished on disk".into());
        }
    }

    /// Waits until everything queued so far is in place.
    pub(crate) fn flush(&self) {
        let (tx, rx) = mpsc::sync_channel(1);
        if self
            .tx
            .as_ref()
            .is_some_and(|t| t.send(Message::Flush(tx)).is_ok())
        {
            let _ = rx.recv();
        }
    }

    /// Commits that failed, in words.
    pub(crate) fn errors(&self) -> Vec<String> {
        self.errors
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    fn error(&self, e: String) {
        self.errors
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(e);
    }
}

impl Drop for Committer {
    /// Commits what is queued, then ends the thread.
    fn drop(&mut self) {
        self.tx = None;
        if let Some(handle) = self.handle.take() {
            let _ = handle.join();
        }
    }
}

/// The committing thread: takes every message waiting, commits the batch, answers the
/// flushes.
fn serve(rx: &mpsc::Receiver<Message>, errors: &Mutex<Vec<String>>) {
    // A status moved into place since the last sync: its move is made durable before a
    // flush is answered (the run-level files written next count it as final).
    let mut unsettled: Option<PathBuf> = None;
    while let Ok(first) = rx.recv() {
        let mut batch = Vec::new();
        let mut flushes = Vec::new();
        for message in std::iter::once(first).chain(rx.try_iter()) {
            match message {
                Message::Commit(p) => batch.push(p),
                Message::Flush(done) => flushes.push(done),
            }
        }
        let (mut failed, moved) = commit_all(batch);
        unsettled = moved.or(unsettled);
        if !flushes.is_empty()
            && let Some(path) = unsettled.take()
        {
            count_syncs(1);
            if let Err(e) = settle(&path) {
                failed.push(format!(
                    "cannot make the moves of the last finished tasks' status.json durable ({e}); after a power cut they may run again on resume"
                ));
            }
        }
        if !failed.is_empty() {
            errors
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .extend(failed);
        }
        for done in flushes {
            let _ = done.send(());
        }
    }
}

/// Makes `batch` durable and puts each staged file in place; returns what failed and
/// the last file put in place.
fn commit_all(batch: Vec<Pending>) -> (Vec<String>, Option<PathBuf>) {
    let mut failed = Vec::new();
    let mut moved = None;
    #[cfg(target_os = "linux")]
    let batch = {
        let (ready, errors, count) = linux::sync_file_systems(batch, |p: &Pending| p.staged.temp());
        failed.extend(
            errors
                .into_iter()
                .map(|(p, e)| not_durable(p.staged.path(), &e)),
        );
        count_syncs(count);
        ready
    };
    for pending in batch {
        #[cfg(not(target_os = "linux"))]
        if let Err(e) = sync_files(&pending) {
            failed.push(not_durable(pending.staged.path(), &e));
            continue;
        }
        let path = pending.staged.path().to_path_buf();
        if let Err(e) = pending.staged.commit() {
            failed.push(format!("cannot write {}: {e}", path.display()));
            continue;
        }
        moved = Some(path);
    }
    (failed, moved)
}

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

/// What one [`settle`] of `path` covers: its file system on Linux (told apart by the
/// folder's device), its folder elsewhere.
fn settle_scope(path: &Path) -> PathBuf {
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
fn settle(path: &Path) -> std::io::Result<()> {
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

/// Why a task stays unfinished on disk.
fn not_durable(path: &Path, e: &std::io::Error) -> String {
    format!(
        "cannot make {} durable ({e}); the task stays unfinished on disk and runs again on resume",
        path.display()
    )
}

/// Syncs a task's written files and its staged file one by one, then (on Unix) their
/// folder, so that the moves that put the written files in place are durable before
/// the status says the task is final. Each file is opened for writing: Windows flushes
/// only a handle with write access.
#[cfg(not(target_os = "linux"))]
fn sync_files(pending: &Pending) -> std::io::Result<()> {
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

#[cfg(target_os = "linux")]
mod linux {
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rundir::atomic::stage;

    #[test]
    fn staged_files_take_their_place_in_groups_and_flush_waits_for_them() {
        let dir = tempfile::tempdir().unwrap();
        let committer = Committer::start();
        for i in 0..20 {
            let path = dir.path().join(format!("t{i}/status.json"));
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, "old").unwrap();
            let staged = stage(&path, b"new").unwrap();
            committer.commit(Pending {
                staged,
                written: Vec::new(),
            });
        }
        committer.flush();
        for i in 0..20 {
            let path = dir.path().join(format!("t{i}/status.json"));
            assert_eq!(std::fs::read_to_string(path).unwrap(), "new");
        }
        assert!(committer.errors().is_empty());
        // No staged file is left behind.
        for i in 0..20 {
            let left = std::fs::read_dir(dir.path().join(format!("t{i}")))
                .unwrap()
                .count();
            assert_eq!(left, 1);
        }
    }

    #[test]
    fn files_put_in_place_together_replace_their_old_versions_and_leave_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let old = dir.path().join("summary.csv");
        std::fs::write(&old, "old").unwrap();
        let staged = ["summary.csv", "report.md", "sub/junit.xml"]
            .map(|name| {
                crate::rundir::atomic::stage_with(&dir.path().join(name), |out| {
                    out.write_all(name.as_bytes())
                })
                .unwrap()
            })
            .into();
        // Nothing is in place before they all are.
        assert_eq!(std::fs::read_to_string(&old).unwrap(), "old");
        put_in_place(staged).unwrap();
        for name in ["summary.csv", "report.md", "sub/junit.xml"] {
            assert_eq!(
                std::fs::read_to_string(dir.path().join(name)).unwrap(),
                name
            );
        }
        assert_eq!(
            crate::testutil::names_in(dir.path()),
            ["report.md", "sub", "summary.csv"]
        );
    }

    #[test]
    fn a_file_put_in_place_whose_folder_went_is_an_error_naming_it_and_the_rest_are_placed() {
        let dir = tempfile::tempdir().unwrap();
        let gone = dir.path().join("gone/report.md");
        let kept = dir.path().join("summary.json");
        let staged = vec![
            crate::rundir::atomic::stage_with(&gone, |out| out.write_all(b"x")).unwrap(),
            crate::rundir::atomic::stage_with(&kept, |out| out.write_all(b"y")).unwrap(),
        ];
        std::fs::remove_dir_all(gone.parent().unwrap()).unwrap();
        let errors = put_in_place(staged).unwrap_err().to_string();
        assert!(errors.contains("gone/report.md"), "{errors}");
        assert_eq!(std::fs::read_to_string(&kept).unwrap(), "y");
    }

    #[test]
    fn a_staged_file_whose_folder_went_is_an_error_and_the_rest_commit() {
        let dir = tempfile::tempdir().unwrap();
        let committer = Committer::start();
        let gone = dir.path().join("gone/status.json");
        std::fs::create_dir_all(gone.parent().unwrap()).unwrap();
        let staged = stage(&gone, b"x").unwrap();
        std::fs::remove_dir_all(gone.parent().unwrap()).unwrap();
        committer.commit(Pending {
            staged,
            written: Vec::new(),
        });
        let kept = dir.path().join("status.json");
        committer.commit(Pending {
            staged: stage(&kept, b"y").unwrap(),
            written: Vec::new(),
        });
        committer.flush();
        assert_eq!(std::fs::read_to_string(&kept).unwrap(), "y");
        let errors = committer.errors();
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert!(errors[0].contains("gone/status.json"), "{errors:?}");
    }
}
