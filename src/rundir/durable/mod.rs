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

#[cfg(target_os = "linux")]
mod linux;
mod place;
mod sync;

pub(crate) use place::put_in_place;
use sync::settle;
#[cfg(not(target_os = "linux"))]
use sync::sync_files;

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

/// Why a task stays unfinished on disk.
fn not_durable(path: &Path, e: &std::io::Error) -> String {
    format!(
        "cannot make {} durable ({e}); the task stays unfinished on disk and runs again on resume",
        path.display()
    )
}

#[cfg(test)]
mod tests;
