//! The few threads that make attempts' folders, in the order asked. A wave of tasks
//! starting together would otherwise ask tokio's blocking pool for a thread each (it
//! makes one for every job that finds none idle: over a hundred in a wave of 256, each
//! dearer to make than the folders it makes), or queue for a permit to, and every
//! hand-off then wakes one more thread. Here a thread takes the next job as soon as it
//! ends one, so a wave costs a few wake-ups, the first tasks' folders are made first,
//! and each task's LLM call goes out as soon as its own folders are made.

use std::sync::{Arc, Mutex, OnceLock, mpsc};

/// How many: enough that a network file system's waits overlap; more made no
/// difference on a local disk.
const THREADS: usize = 8;

type Job = Box<dyn FnOnce() + Send>;

/// The queue the threads take jobs from, once they are started; the error says why
/// none could be.
fn queue() -> Result<&'static Mutex<mpsc::Sender<Job>>, &'static str> {
    static QUEUE: OnceLock<Result<Mutex<mpsc::Sender<Job>>, String>> = OnceLock::new();
    QUEUE
        .get_or_init(|| {
            let (tx, rx) = mpsc::channel::<Job>();
            let rx = Arc::new(Mutex::new(rx));
            let mut started = 0;
            let mut failed = None;
            for i in 0..THREADS {
                let rx = Arc::clone(&rx);
                match std::thread::Builder::new()
                    .name(format!("preparer-{i}"))
                    .spawn(move || serve(&rx))
                {
                    Ok(_) => started += 1,
                    Err(e) => failed = Some(e.to_string()),
                }
            }
            match (started, failed) {
                (0, Some(e)) => Err(e),
                _ => Ok(Mutex::new(tx)),
            }
        })
        .as_ref()
        .map_err(String::as_str)
}

/// One thread's loop: the next job, until the process ends. A job that panics ends
/// alone (its caller learns of it); the thread goes on.
fn serve(jobs: &Mutex<mpsc::Receiver<Job>>) {
    loop {
        let job = jobs.lock().unwrap_or_else(|p| p.into_inner()).recv();
        let Ok(job) = job else { return };
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
    }
}

/// Runs `job` on a preparer thread; the error says why it gave no answer.
pub(super) async fn run<R: Send + 'static>(
    job: impl FnOnce() -> R + Send + 'static,
) -> Result<R, String> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    let queue = queue().map_err(|e| format!("no thread to make them ({e})"))?;
    let sent = queue
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .send(Box::new(move || {
            let _ = tx.send(job());
        }));
    if sent.is_err() {
        return Err("their threads stopped".into());
    }
    rx.await
        .map_err(|_| "their thread stopped in the middle".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn jobs_answer_and_one_that_panics_stops_neither_its_thread_nor_the_others() {
        assert_eq!(run(|| 2 + 2).await, Ok(4));
        let panicked = run(|| -> u32 { panic!("a job that panics") }).await;
        assert_eq!(panicked, Err("their thread stopped in the middle".into()));
        let answers =
            futures_util::future::join_all((0..4 * THREADS).map(|i| run(move || i))).await;
        assert_eq!(answers, (0..4 * THREADS).map(Ok).collect::<Vec<_>>());
    }

    #[tokio::test]
    async fn jobs_run_in_the_order_asked_when_they_queue() {
        let order = Arc::new(Mutex::new(Vec::new()));
        let waits: Vec<_> = (0..64)
            .map(|i| {
                let order = Arc::clone(&order);
                run(move || order.lock().unwrap().push(i))
            })
            .collect();
        futures_util::future::join_all(waits).await;
        let order = order.lock().unwrap().clone();
        // Several threads take them: each is begun in order, and none waits behind the
        // whole queue.
        let late = order
            .iter()
            .enumerate()
            .filter(|(at, i)| at.abs_diff(**i) > THREADS)
            .count();
        assert_eq!(late, 0, "{order:?}");
    }
}
