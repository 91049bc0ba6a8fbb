//! The few threads that make attempts' folders, in the order asked. A wave of tasks
//! starting together would otherwise ask tokio's blocking pool for a thread each (it
//! makes one for every job that finds none idle: over a hundred in a wave of 256, each
//! dearer to make than the folders it makes), or queue for a permit to, and every
//! hand-off then wakes one more thread. Here a thread takes the next job as soon as it
//! ends one, so a wave costs a few wake-ups, the first tasks' folders are made first,
//! and each task's LLM call goes out as soon as its own folders are made.

use std::sync::{Arc, Mutex, mpsc};

/// How many: enough that a network file system's waits overlap, and that a slow job (the
/// removal of a large old workspace) holds few of them. From 2 to 16 measured the same on
/// a local disk; idle ones cost nothing.
const THREADS: usize = 16;

type Job = Box<dyn FnOnce() + Send>;

/// Why a job gave no answer: the runner's own failure.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub(super) enum PreparerError {
    /// No thread could be started to run it.
    #[error("no thread to make them ({0})")]
    NoThread(String),
    /// It panicked.
    #[error("internal error: it panicked: {0}")]
    Panicked(String),
    /// Its thread went away before it answered.
    #[error("internal error: its thread stopped")]
    Stopped,
}

/// Threads fed from one queue.
struct Pool {
    threads: usize,
    name: &'static str,
    /// The queue, once its threads are started.
    queue: Mutex<Option<mpsc::Sender<Job>>>,
}

impl Pool {
    const fn new(threads: usize, name: &'static str) -> Self {
        Self {
            threads,
            name,
            queue: Mutex::new(None),
        }
    }

    /// Queues `job`; starts the threads when none run. Failing to start any is an error
    /// for this job alone: the next one tries again.
    fn submit(&self, job: Job) -> Result<(), PreparerError> {
        let mut queue = self.queue.lock().unwrap_or_else(|p| p.into_inner());
        let job = match queue.as_ref() {
            Some(tx) => match tx.send(job) {
                Ok(()) => return Ok(()),
                Err(mpsc::SendError(job)) => job,
            },
            None => job,
        };
        let (tx, rx) = mpsc::channel::<Job>();
        let rx = Arc::new(Mutex::new(rx));
        let mut started = 0;
        let mut failed = String::new();
        for i in 0..self.threads {
            let rx = Arc::clone(&rx);
            match std::thread::Builder::new()
                .name(format!("{}-{i}", self.name))
                .spawn(move || serve(&rx))
            {
                Ok(_) => started += 1,
                Err(e) => failed = e.to_string(),
            }
        }
        if started == 0 {
            return Err(PreparerError::NoThread(failed));
        }
        let _ = tx.send(job);
        *queue = Some(tx);
        Ok(())
    }

    /// Runs `job` on one of the threads; the error says why it gave no answer.
    async fn run<R: Send + 'static>(
        &self,
        job: impl FnOnce() -> R + Send + 'static,
    ) -> Result<R, PreparerError> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        self.submit(Box::new(move || {
            // Its attempt ended while it waited (the run killed it): not made.
            if tx.is_closed() {
                return;
            }
            let answer =
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(job)).map_err(|payload| {
                    PreparerError::Panicked(crate::text::panic_text(&*payload).to_string())
                });
            let _ = tx.send(answer);
        }))?;
        rx.await.map_err(|_| PreparerError::Stopped)?
    }
}

/// One thread's loop: the next job, until the queue goes.
fn serve(jobs: &Mutex<mpsc::Receiver<Job>>) {
    loop {
        let job = jobs.lock().unwrap_or_else(|p| p.into_inner()).recv();
        let Ok(job) = job else { return };
        job();
    }
}

static PREPARERS: Pool = Pool::new(THREADS, "preparer");

/// Runs `job` on a preparer thread; the error says why it gave no answer.
pub(super) async fn run<R: Send + 'static>(
    job: impl FnOnce() -> R + Send + 'static,
) -> Result<R, PreparerError> {
    PREPARERS.run(job).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Barrier;
    use std::time::Duration;

    #[tokio::test]
    async fn a_job_that_panics_is_an_error_saying_so_and_every_thread_goes_on() {
        let pool = Pool::new(4, "test-preparer");
        assert_eq!(pool.run(|| 2 + 2).await, Ok(4));
        let panicked = pool.run(|| -> u32 { panic!("a job that panics") }).await;
        assert_eq!(
            panicked,
            Err(PreparerError::Panicked("a job that panics".into()))
        );
        assert_eq!(
            panicked.unwrap_err().to_string(),
            "internal error: it panicked: a job that panics"
        );
        // Four jobs that can only end together: each needs a thread of its own.
        let barrier = Arc::new(Barrier::new(4));
        let jobs = (0..4).map(|i| {
            let barrier = Arc::clone(&barrier);
            pool.run(move || {
                barrier.wait();
                i
            })
        });
        let answers = tokio::time::timeout(
            Duration::from_secs(10),
            futures_util::future::join_all(jobs),
        )
        .await
        .expect("a thread stopped after the panic");
        assert_eq!(answers, vec![Ok(0), Ok(1), Ok(2), Ok(3)]);
    }

    #[tokio::test]
    async fn jobs_run_in_the_order_asked() {
        let pool = Pool::new(1, "test-preparer");
        let order = Arc::new(Mutex::new(Vec::new()));
        let jobs = (0..64).map(|i| {
            let order = Arc::clone(&order);
            pool.run(move || order.lock().unwrap().push(i))
        });
        futures_util::future::join_all(jobs).await;
        assert_eq!(*order.lock().unwrap(), (0..64).collect::<Vec<_>>());
    }

    #[tokio::test]
    async fn a_job_whose_caller_is_gone_is_not_run() {
        use futures_util::FutureExt;
        use std::sync::atomic::{AtomicBool, Ordering};
        let pool = Pool::new(1, "test-preparer");
        // The one thread is held until the gate opens.
        let gate = Arc::new(Barrier::new(2));
        let held = Arc::clone(&gate);
        let mut blocker = Box::pin(pool.run(move || {
            held.wait();
        }));
        assert!((&mut blocker).now_or_never().is_none());
        let ran = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&ran);
        let mut abandoned = Box::pin(pool.run(move || flag.store(true, Ordering::SeqCst)));
        assert!((&mut abandoned).now_or_never().is_none());
        // Its attempt ends (the run killed it) while it waits in the queue.
        drop(abandoned);
        gate.wait();
        assert_eq!(blocker.await, Ok(()));
        // Queued after it: once this one has run, the abandoned one was passed over.
        assert_eq!(pool.run(|| 1).await, Ok(1));
        assert!(!ran.load(Ordering::SeqCst));
    }
}
