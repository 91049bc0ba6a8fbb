//! A task's time spent waiting for the LLM provider (a call slot, a pause the provider
//! asked for, a backoff after a rate-limit answer), kept in a task-local clock so that
//! the attempt's wall-clock limit can leave it out and its record can show it. The
//! client marks its waits; the attempt reads the clock.

use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::time::Instant;

tokio::task_local! {
    static CLOCK: Arc<WaitClock>;
}

/// One attempt's waiting for the provider.
#[derive(Debug, Default)]
pub(crate) struct WaitClock {
    state: Mutex<ClockState>,
    /// Told when the last open wait closes.
    closed: tokio::sync::Notify,
}

#[derive(Debug, Default)]
struct ClockState {
    total: Duration,
    /// Waits going on now, and since when.
    open: u32,
    since: Option<Instant>,
    rate_limited: u32,
}

impl WaitClock {
    fn lock(&self) -> std::sync::MutexGuard<'_, ClockState> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Runs `future` with this clock as its task's clock.
    pub(crate) async fn scope<F: Future>(self: &Arc<Self>, future: F) -> F::Output {
        CLOCK.scope(Arc::clone(self), future).await
    }

    /// Time waited so far, a wait going on now included.
    pub(crate) fn waited(&self) -> Duration {
        let s = self.lock();
        s.total + s.since.map_or(Duration::ZERO, |t| t.elapsed())
    }

    /// Rate-limit and overload answers this task's calls got.
    pub(crate) fn rate_limited(&self) -> u32 {
        self.lock().rate_limited
    }

    /// Sleeps until `limit` has passed since `start`, not counting the time waited for
    /// the provider.
    pub(crate) async fn deadline(&self, start: Instant, limit: Duration) {
        loop {
            let closed = self.closed.notified();
            tokio::pin!(closed);
            closed.as_mut().enable();
            let (open, waited) = {
                let s = self.lock();
                let open = s.open > 0;
                (
                    open,
                    s.total + s.since.map_or(Duration::ZERO, |t| t.elapsed()),
                )
            };
            if open {
                // The deadline moves with the wait: nothing can strike before it ends.
                closed.await;
                continue;
            }
            let until = start + limit + waited;
            if Instant::now() >= until {
                return;
            }
            tokio::time::sleep_until(until).await;
        }
    }

    fn open(&self) {
        let mut s = self.lock();
        if s.open == 0 {
            s.since = Some(Instant::now());
        }
        s.open += 1;
    }

    fn close(&self) {
        let mut s = self.lock();
        s.open = s.open.saturating_sub(1);
        if s.open == 0
            && let Some(since) = s.since.take()
        {
            s.total += since.elapsed();
            self.closed.notify_waiters();
        }
    }
}

/// Runs `future` as time waited for the provider, on the current task's clock (if it
/// has one).
pub(crate) async fn waiting<F: Future>(future: F) -> F::Output {
    let clock = CLOCK.try_with(Arc::clone).ok();
    let _guard = clock.map(|c| {
        c.open();
        Guard(c)
    });
    future.await
}

/// Counts a rate-limit answer on the current task's clock.
pub(crate) fn count_rate_limited() {
    let _ = CLOCK.try_with(|c| c.lock().rate_limited += 1);
}

/// Closes a wait however its future ends (done, or dropped with its task).
struct Guard(Arc<WaitClock>);

impl Drop for Guard {
    fn drop(&mut self) {
        self.0.close();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn the_deadline_leaves_out_the_time_waited() {
        let clock = Arc::new(WaitClock::default());
        let start = Instant::now();
        let body = clock.scope(async {
            tokio::time::sleep(Duration::from_secs(3)).await;
            waiting(tokio::time::sleep(Duration::from_secs(10))).await;
            count_rate_limited();
            tokio::time::sleep(Duration::from_secs(3)).await;
        });
        tokio::select! {
            () = body => panic!("the body needs 16s of a 5s limit"),
            () = clock.deadline(start, Duration::from_secs(5)) => {}
        }
        assert_eq!(
            start.elapsed(),
            Duration::from_secs(15),
            "5s of work, 10s waited"
        );
        assert_eq!(clock.waited(), Duration::from_secs(10));
        assert_eq!(clock.rate_limited(), 1);
        // Outside any attempt, waiting is not counted anywhere (and does not fail).
        waiting(async {}).await;
        count_rate_limited();
    }
}
