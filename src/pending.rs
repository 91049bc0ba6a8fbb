//! Results handed to the reporters and not yet written. The pool starts no new task
//! while too many wait (see [`Backlog::below`]): a runner whose disk is slower than its
//! tasks would otherwise hold a queue of results that grows with the batch.
//!
//! A result is counted from when the pool sends it until the last holder of its
//! [`Pending`] lets go: the reporters hold it with the result, until its files are
//! written.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::sync::Notify;

/// The count of results not yet written, shared by the pool and the results.
#[derive(Clone, Debug, Default)]
pub(crate) struct Backlog(Arc<Shared>);

#[derive(Debug, Default)]
struct Shared {
    count: AtomicUsize,
    drained: Notify,
}

impl Backlog {
    /// One more result not yet written, until the returned hold is let go.
    pub(crate) fn hold(&self) -> Pending {
        self.0.count.fetch_add(1, Ordering::AcqRel);
        Pending(self.clone())
    }

    /// How many results wait.
    pub(crate) fn len(&self) -> usize {
        self.0.count.load(Ordering::Acquire)
    }

    /// Returns once fewer than `limit` results wait.
    pub(crate) async fn below(&self, limit: usize) {
        loop {
            let drained = self.0.drained.notified();
            tokio::pin!(drained);
            drained.as_mut().enable();
            if self.len() < limit {
                return;
            }
            drained.await;
        }
    }
}

/// A result not yet written: counted until dropped.
#[derive(Debug)]
pub(crate) struct Pending(Backlog);

impl Clone for Pending {
    fn clone(&self) -> Self {
        self.0.hold()
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        self.0.0.count.fetch_sub(1, Ordering::AcqRel);
        self.0.0.drained.notify_waiters();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_wait_ends_once_enough_results_are_let_go() {
        let backlog = Backlog::default();
        let held: Vec<Pending> = (0..5).map(|_| backlog.hold()).collect();
        let copy = held[0].clone();
        assert_eq!(backlog.len(), 6);
        let waiting = tokio::spawn({
            let backlog = backlog.clone();
            async move { backlog.below(3).await }
        });
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        assert!(!waiting.is_finished(), "six wait: the pool waits");
        drop(copy);
        drop(held);
        tokio::time::timeout(std::time::Duration::from_secs(5), waiting)
            .await
            .expect("the wait ends once they are let go")
            .unwrap();
        assert_eq!(backlog.len(), 0);
    }
}
