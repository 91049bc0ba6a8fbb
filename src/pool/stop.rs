//! Stopping a run: `drain` stops scheduling (running tasks finish), `kill` ends running
//! attempts at once (they become `cancelled`). Whoever stops the run says why; the first
//! reason wins.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use tokio_util::sync::CancellationToken;

/// The stop tokens of a run, shared by the pool, the signal watcher and the stop rules.
#[derive(Clone, Debug, Default)]
pub(crate) struct StopTokens {
    /// Stop starting tasks.
    pub(crate) drain: CancellationToken,
    /// End running tasks.
    pub(crate) kill: CancellationToken,
    /// Why the run is stopping.
    reason: Arc<Mutex<Option<String>>>,
    /// Set when the stop came from the user or the system (Ctrl-C, SIGTERM).
    interrupted: Arc<AtomicBool>,
    /// How long running tasks may still take after a signal.
    grace: Arc<Mutex<Option<std::time::Duration>>>,
    /// Set once the pool has begun (until then there is nothing to drain).
    started: Arc<AtomicBool>,
}

impl StopTokens {
    /// Stops scheduling, recording why (the first reason wins).
    pub(crate) fn stop(&self, reason: impl Into<String>) {
        let mut slot = self.reason.lock().unwrap_or_else(|e| e.into_inner());
        slot.get_or_insert_with(|| reason.into());
        self.drain.cancel();
    }

    /// Stops scheduling because of a signal (`Ctrl-C`, `SIGTERM`); running tasks get
    /// `grace` to finish.
    pub(crate) fn interrupt(&self, signal: &str, grace: std::time::Duration) {
        self.interrupted.store(true, Ordering::SeqCst);
        *self.grace.lock().unwrap_or_else(|e| e.into_inner()) = Some(grace);
        self.stop(format!("interrupted ({signal})"));
    }

    /// The grace period running tasks have, when a signal stopped the run.
    pub(crate) fn grace(&self) -> Option<std::time::Duration> {
        *self.grace.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Says the pool has begun running tasks.
    pub(crate) fn mark_started(&self) {
        self.started.store(true, Ordering::SeqCst);
    }

    /// True once the pool has begun.
    pub(crate) fn started(&self) -> bool {
        self.started.load(Ordering::SeqCst)
    }

    /// True once a signal stopped the run.
    pub(crate) fn interrupted(&self) -> bool {
        self.interrupted.load(Ordering::SeqCst)
    }

    /// Why the run stopped, if it did.
    pub(crate) fn reason(&self) -> Option<String> {
        self.reason
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}
