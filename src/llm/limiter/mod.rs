//! How many LLM calls may be in flight to one endpoint, run-wide, adapting to the
//! provider's limit. A rate-limit or overload answer (429, 503, 529) lowers the limit
//! once per round of calls: to the number of calls the provider served among those in
//! flight when it refused one, or to half when it served none. The limit grows back by
//! one per limit's worth of successes, but not past what the provider served until
//! [`PROBE_AFTER`] has passed (each probe past it costs a refusal and maybe a pause). A `Retry-After` pauses the whole endpoint, not one
//! request. Waiting for a slot is not a retry. A call refused for `give_up_after` is
//! given up: on its own when the endpoint served other calls meanwhile, and for the whole
//! run when it served none (then every call fails at once, so the run stops promptly).

use std::sync::Mutex;
use std::time::Duration;

use tokio::sync::Notify;
use tokio::time::Instant;

use super::LlmError;

mod adapt;

use adapt::Round;

/// How long the limit stays below a level the provider refused before trying it again.
const PROBE_AFTER: Duration = Duration::from_secs(30);

/// What one call's answer says about the provider's capacity.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Answer {
    /// Answered.
    Served,
    /// Failed for a reason that is not about load (a timeout, a 500, no connection).
    Failed,
    /// Rate limited or overloaded, maybe with the wait the provider asked for.
    Limited(Option<Duration>),
}

/// Figures for the progress line, the summary and run.json.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub(crate) struct LimiterStats {
    /// Calls started.
    pub(crate) calls: u64,
    /// Calls in flight now.
    pub(crate) in_flight: usize,
    /// Calls allowed in flight now.
    pub(crate) limit: usize,
    /// The configured most (`max_connections`).
    pub(crate) max: usize,
    /// The most calls that were in flight at once.
    pub(crate) peak: usize,
    /// Rate-limit and overload answers.
    pub(crate) rate_limited: u64,
    /// Time calls spent waiting for a slot, a pause or a backoff after a rate-limit
    /// answer, summed over calls.
    pub(crate) waited_s: f64,
}

/// Why no slot is free now.
#[derive(Debug)]
pub(crate) enum Busy {
    /// The endpoint is paused until then.
    Paused(Instant),
    /// The limit's worth of calls is in flight.
    Full,
    /// The run gave the endpoint up.
    GaveUp(LlmError),
}

/// What to do about a call the provider keeps refusing.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Verdict {
    /// Wait on.
    Wait,
    /// Give this call up: refused this long while other calls were served.
    GiveUpCall(Duration),
    /// Give the endpoint up: it served no call for this long.
    GiveUpEndpoint(Duration),
}

#[derive(Debug)]
struct State {
    limit: f64,
    in_flight: usize,
    paused_until: Option<Instant>,
    /// Bumped at each lowering: a refusal of a call started before it says nothing new.
    epoch: u64,
    round: Option<Round>,
    /// The level last refused, and when.
    ceiling: Option<(f64, Instant)>,
    /// When a call was last served.
    last_served: Option<Instant>,
    /// Set once the endpoint has refused everything for too long: every call fails so.
    gave_up: Option<LlmError>,
    calls: u64,
    peak: usize,
    rate_limited: u64,
    waited: Duration,
}

/// The limiter of one endpoint.
#[derive(Debug)]
pub(crate) struct Limiter {
    max: usize,
    adaptive: bool,
    longest_pause: Duration,
    give_up_after: Duration,
    state: Mutex<State>,
    freed: Notify,
}

/// A call's slot: give it back with what the answer said. Dropped unfinished (its task
/// was cancelled), it is given back as [`Answer::Failed`].
#[derive(Debug)]
pub(crate) struct Slot<'a> {
    limiter: &'a Limiter,
    epoch: u64,
    done: bool,
}

impl Limiter {
    /// At most `max` calls at once; with `adaptive`, fewer while the provider refuses
    /// calls. A pause the provider asks for is cut to `longest_pause`; a call refused
    /// for `give_up_after` is given up.
    pub(crate) fn new(
        max: usize,
        adaptive: bool,
        longest_pause: Duration,
        give_up_after: Duration,
    ) -> Self {
        let max = max.max(1);
        Self {
            max,
            adaptive,
            longest_pause,
            give_up_after,
            state: Mutex::new(State {
                limit: max as f64,
                in_flight: 0,
                paused_until: None,
                epoch: 0,
                round: None,
                ceiling: None,
                last_served: None,
                gave_up: None,
                calls: 0,
                peak: 0,
                rate_limited: 0,
                waited: Duration::ZERO,
            }),
            freed: Notify::new(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// A slot now, if one is free and the endpoint is not paused.
    pub(crate) fn try_acquire(&self) -> Result<Slot<'_>, Busy> {
        let mut s = self.lock();
        if let Some(e) = &s.gave_up {
            return Err(Busy::GaveUp(e.clone()));
        }
        match s.paused_until {
            Some(until) if until > Instant::now() => Err(Busy::Paused(until)),
            _ => {
                s.paused_until = None;
                if (s.in_flight as f64) >= s.limit.floor().max(1.0) {
                    return Err(Busy::Full);
                }
                s.in_flight += 1;
                s.calls += 1;
                s.peak = s.peak.max(s.in_flight);
                Ok(Slot {
                    limiter: self,
                    epoch: s.epoch,
                    done: false,
                })
            }
        }
    }

    /// Waits for a slot (and for any pause of the endpoint to end); fails once the run
    /// has given the endpoint up.
    pub(crate) async fn acquire(&self) -> Result<Slot<'_>, LlmError> {
        let clock = Instant::now();
        loop {
            let notified = self.freed.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            match self.try_acquire() {
                Ok(slot) => {
                    self.add_wait(clock.elapsed());
                    return Ok(slot);
                }
                Err(Busy::GaveUp(e)) => return Err(e),
                Err(Busy::Paused(until)) => {
                    tokio::select! {
                        () = tokio::time::sleep_until(until) => {}
                        () = notified => {}
                    }
                }
                Err(Busy::Full) => notified.await,
            }
        }
    }

    /// What to do about a call refused since `since` (its first refusal): wait on,
    /// give it up, or give the endpoint up (it served nothing since).
    pub(crate) fn verdict(&self, since: Instant) -> Verdict {
        let refused_for = since.elapsed();
        if refused_for < self.give_up_after {
            return Verdict::Wait;
        }
        let served_since = self.lock().last_served.is_some_and(|t| t >= since);
        if served_since {
            Verdict::GiveUpCall(refused_for)
        } else {
            Verdict::GiveUpEndpoint(refused_for)
        }
    }

    /// Fails every call from now on with `error`.
    pub(crate) fn give_up(&self, error: LlmError) {
        self.lock().gave_up.get_or_insert(error);
        self.freed.notify_waiters();
    }

    /// Adds time a call spent backing off after a rate-limit answer.
    pub(crate) fn add_wait(&self, waited: Duration) {
        self.lock().waited += waited;
    }

    /// The figures now.
    pub(crate) fn stats(&self) -> LimiterStats {
        let s = self.lock();
        LimiterStats {
            calls: s.calls,
            in_flight: s.in_flight,
            limit: s.limit.floor() as usize,
            max: self.max,
            peak: s.peak,
            rate_limited: s.rate_limited,
            waited_s: s.waited.as_secs_f64(),
        }
    }
}

impl Slot<'_> {
    /// Gives the slot back, saying what the answer was.
    pub(crate) fn finish(mut self, answer: Answer) {
        self.done = true;
        self.limiter.release(self.epoch, answer);
    }
}

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        if !self.done {
            self.limiter.release(self.epoch, Answer::Failed);
        }
    }
}

#[cfg(test)]
mod tests;
