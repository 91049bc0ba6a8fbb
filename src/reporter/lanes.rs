//! A few writer threads ("lanes") for per-task files. Every job of one task goes to the
//! same lane, so a task's files are written in event order; different tasks' writes
//! (and their fsyncs, which the file system commits together) overlap.

use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use crate::rundir::FileErrors;
use crate::task::TaskId;

/// A file-writing job; its error, if any, is kept for the final report.
pub(super) type Job = Box<dyn FnOnce() -> Result<(), FileErrors> + Send>;

enum Message {
    Run(Job),
    Flush(mpsc::SyncSender<()>),
}

/// The lanes.
pub(super) struct Lanes {
    lanes: Vec<mpsc::Sender<Message>>,
    handles: Vec<JoinHandle<()>>,
    errors: Arc<Mutex<Vec<String>>>,
}

impl Lanes {
    /// `n` lanes (at least one).
    pub(super) fn new(n: usize) -> Self {
        let errors = Arc::new(Mutex::new(Vec::new()));
        let mut lanes = Vec::new();
        let mut handles = Vec::new();
        for i in 0..n.max(1) {
            let (tx, rx) = mpsc::channel::<Message>();
            let errors = Arc::clone(&errors);
            let handle = std::thread::Builder::new()
                .name(format!("writer-{i}"))
                .spawn(move || {
                    crate::priority::lower_this_thread();
                    for message in rx {
                        match message {
                            Message::Run(job) => {
                                if let Err(e) = job() {
                                    errors
                                        .lock()
                                        .unwrap_or_else(|p| p.into_inner())
                                        .push(e.to_string());
                                }
                            }
                            Message::Flush(done) => {
                                let _ = done.send(());
                            }
                        }
                    }
                })
                .expect("spawning a writer thread");
            lanes.push(tx);
            handles.push(handle);
        }
        Self {
            lanes,
            handles,
            errors,
        }
    }

    /// Queues a job for `task`'s lane.
    pub(super) fn submit(&self, task: &TaskId, job: Job) {
        let lane =
            (crate::hash::fnv1a64(task.as_str().as_bytes()) % self.lanes.len() as u64) as usize;
        if self.lanes[lane].send(Message::Run(job)).is_err() {
            self.record_error(format!(
                "the writer for {task} stopped; its files may be incomplete"
            ));
        }
    }

    /// Waits until every job queued so far is done.
    pub(super) fn flush(&self) {
        let waits: Vec<mpsc::Receiver<()>> = self
            .lanes
            .iter()
            .filter_map(|lane| {
                let (tx, rx) = mpsc::sync_channel(1);
                lane.send(Message::Flush(tx)).ok().map(|()| rx)
            })
            .collect();
        for wait in waits {
            let _ = wait.recv();
        }
    }

    /// Errors so far.
    pub(super) fn errors(&self) -> Vec<String> {
        self.errors
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    fn record_error(&self, e: String) {
        self.errors
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(e);
    }
}

impl Drop for Lanes {
    fn drop(&mut self) {
        self.lanes.clear();
        for handle in self.handles.drain(..) {
            let _ = handle.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jobs_of_one_task_run_in_order_and_flush_waits() {
        let lanes = Lanes::new(3);
        let seen = Arc::new(Mutex::new(Vec::new()));
        let id = TaskId::parse("t").unwrap();
        for i in 0..50 {
            let seen = Arc::clone(&seen);
            lanes.submit(
                &id,
                Box::new(move || {
                    seen.lock().unwrap().push(i);
                    if i == 7 {
                        Err(crate::rundir::FileError::Render("boom".into()).into())
                    } else {
                        Ok(())
                    }
                }),
            );
        }
        lanes.flush();
        assert_eq!(*seen.lock().unwrap(), (0..50).collect::<Vec<_>>());
        assert_eq!(lanes.errors(), vec!["boom".to_string()]);
    }
}
