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

/// The calls in flight when the limit was last lowered, followed to their end.
#[derive(Debug)]
struct Round {
    /// The epoch those calls started in.
    epoch: u64,
    /// The limit before it was lowered.
    before: f64,
    /// Of those calls, how many are still in flight.
    outstanding: usize,
    /// And how many were served.
    served: usize,
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

    fn release(&self, epoch: u64, answer: Answer) {
        {
            let mut s = self.lock();
            s.in_flight = s.in_flight.saturating_sub(1);
            let now = Instant::now();
            let mut opened = false;
            match answer {
                Answer::Served => {
                    s.last_served = Some(now);
                    // Grown only while in use: a limit never reached says nothing.
                    let in_use = s.in_flight + 1 >= s.limit.floor() as usize;
                    if self.adaptive && epoch == s.epoch && in_use {
                        self.grow(&mut s, now);
                    }
                }
                Answer::Failed => {}
                Answer::Limited(wait) => {
                    s.rate_limited += 1;
                    if self.adaptive && epoch == s.epoch {
                        // This refusal opens a round; it is not one of the round's calls.
                        opened = true;
                        let before = s.limit;
                        s.round = (s.in_flight > 0).then_some(Round {
                            epoch: s.epoch,
                            before,
                            outstanding: s.in_flight,
                            served: 0,
                        });
                        s.epoch += 1;
                        s.limit = (before / 2.0).floor().max(1.0);
                        s.ceiling = Some((before.floor(), now));
                    }
                    if let Some(wait) = wait {
                        let until = now + wait.min(self.longest_pause);
                        s.paused_until = Some(s.paused_until.map_or(until, |p| p.max(until)));
                    }
                }
            }
            if !opened {
                Self::follow_round(&mut s, epoch, answer);
            }
        }
        self.freed.notify_waiters();
    }

    /// One more call per limit's worth of successes, up to the most, and below a level
    /// the provider refused lately.
    fn grow(&self, s: &mut State, now: Instant) {
        let mut next = (s.limit + 1.0 / s.limit).min(self.max as f64);
        if let Some((ceiling, at)) = s.ceiling
            && now.duration_since(at) < PROBE_AFTER
        {
            next = next.min((ceiling - 1.0).max(s.limit));
        }
        s.limit = next;
    }

    /// Counts a call of the last lowered round; once all have ended, the limit is what
    /// the provider served of them (when it served any).
    fn follow_round(s: &mut State, epoch: u64, answer: Answer) {
        let Some(round) = s.round.as_mut() else {
            return;
        };
        if epoch > round.epoch {
            return;
        }
        if answer == Answer::Served {
            round.served += 1;
        }
        round.outstanding = round.outstanding.saturating_sub(1);
        if round.outstanding == 0 {
            let served = round.served as f64;
            let before = round.before;
            s.round = None;
            if served > 0.0 {
                // It served that many at once and refused one more.
                s.limit = served.min(before - 1.0).max(1.0);
                if let Some((ceiling, _)) = s.ceiling.as_mut() {
                    *ceiling = s.limit + 1.0;
                }
            }
        }
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
mod tests {
    use super::*;

    /// `n` calls served one after another while the rest of the limit is in flight.
    async fn served_at_the_limit(l: &Limiter, n: usize) {
        let mut held = Vec::new();
        while held.len() + 1 < l.stats().limit {
            held.push(l.acquire().await.unwrap());
        }
        for _ in 0..n {
            l.acquire().await.unwrap().finish(Answer::Served);
        }
        for slot in held {
            slot.finish(Answer::Served);
        }
    }

    fn limiter(max: usize) -> Limiter {
        Limiter::new(max, true, Duration::from_secs(60), Duration::from_secs(300))
    }

    #[tokio::test]
    async fn at_most_the_limit_in_flight_and_a_dropped_slot_is_given_back() {
        let l = limiter(2);
        let a = l.acquire().await.unwrap();
        let b = l.acquire().await.unwrap();
        assert!(
            tokio::time::timeout(Duration::from_millis(50), l.acquire())
                .await
                .is_err(),
            "a third call got a slot"
        );
        a.finish(Answer::Served);
        let c = l.acquire().await.unwrap();
        assert_eq!((l.stats().in_flight, l.stats().peak), (2, 2));
        b.finish(Answer::Served);
        drop(c);
        assert_eq!(l.stats().in_flight, 0);
        assert_eq!(l.stats().calls, 3);
    }

    #[tokio::test]
    async fn an_overshoot_lowers_the_limit_to_what_the_provider_served() {
        // 64 calls in flight against a provider that serves 8: 56 refusals lower the
        // limit once, and when the round is over it is the 8 that were served.
        let l = limiter(64);
        let mut slots = Vec::new();
        for _ in 0..64 {
            slots.push(l.acquire().await.unwrap());
        }
        let served: Vec<_> = slots.drain(..8).collect();
        for s in slots.drain(..) {
            s.finish(Answer::Limited(None));
        }
        assert_eq!(l.stats().limit, 32, "halved once while the round is open");
        assert_eq!(l.stats().rate_limited, 56);
        for s in served {
            s.finish(Answer::Served);
        }
        assert_eq!(l.stats().limit, 8, "the round served 8");
        // It does not try 9 again soon: that is where the provider refused.
        served_at_the_limit(&l, 50).await;
        assert_eq!(l.stats().limit, 8);
    }

    #[tokio::test(start_paused = true)]
    async fn growth_stops_below_a_refused_level_until_it_is_probed_again() {
        let l = limiter(16);
        // 9 in flight: the ninth is refused, eight are served.
        l.lock().limit = 9.0;
        let mut slots = Vec::new();
        for _ in 0..9 {
            slots.push(l.acquire().await.unwrap());
        }
        slots.pop().unwrap().finish(Answer::Limited(None));
        for s in slots {
            s.finish(Answer::Served);
        }
        assert_eq!(l.stats().limit, 8);
        served_at_the_limit(&l, 50).await;
        assert_eq!(l.stats().limit, 8, "stays below the refused 9");
        tokio::time::advance(PROBE_AFTER).await;
        served_at_the_limit(&l, 50).await;
        assert!(l.stats().limit > 8, "probes again later: {:?}", l.stats());
    }

    #[tokio::test]
    async fn refusals_with_nothing_served_halve_and_fixed_limits_stay() {
        let l = limiter(8);
        l.acquire().await.unwrap().finish(Answer::Limited(None));
        assert_eq!(l.stats().limit, 4);
        // It grows back by one per limit's worth of successes at the limit, and not
        // while fewer calls are in flight.
        for _ in 0..20 {
            l.acquire().await.unwrap().finish(Answer::Served);
        }
        assert_eq!(l.stats().limit, 4, "one call at a time says nothing of 5");
        served_at_the_limit(&l, 5).await;
        assert_eq!(l.stats().limit, 5);
        let fixed = Limiter::new(8, false, Duration::from_secs(60), Duration::from_secs(300));
        fixed.acquire().await.unwrap().finish(Answer::Limited(None));
        assert_eq!(fixed.stats().limit, 8, "not adaptive: the limit stays");
        assert_eq!(fixed.stats().rate_limited, 1);
    }

    #[tokio::test(start_paused = true)]
    async fn retry_after_pauses_the_whole_endpoint_up_to_the_longest_pause() {
        let l = Limiter::new(4, true, Duration::from_secs(5), Duration::from_secs(300));
        l.acquire()
            .await
            .unwrap()
            .finish(Answer::Limited(Some(Duration::from_secs(2))));
        let clock = Instant::now();
        l.acquire().await.unwrap().finish(Answer::Served);
        assert_eq!(clock.elapsed(), Duration::from_secs(2));
        assert!(l.stats().waited_s >= 2.0);
        l.acquire()
            .await
            .unwrap()
            .finish(Answer::Limited(Some(Duration::from_secs(3600))));
        let clock = Instant::now();
        l.acquire().await.unwrap().finish(Answer::Served);
        assert_eq!(
            clock.elapsed(),
            Duration::from_secs(5),
            "cut to the longest pause"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_call_refused_too_long_is_given_up_and_the_endpoint_only_if_it_served_none() {
        let l = limiter(4);
        let since = Instant::now();
        l.acquire().await.unwrap().finish(Answer::Limited(None));
        tokio::time::advance(Duration::from_secs(299)).await;
        assert_eq!(l.verdict(since), Verdict::Wait);
        tokio::time::advance(Duration::from_secs(1)).await;
        let five_minutes = Duration::from_secs(300);
        assert_eq!(l.verdict(since), Verdict::GiveUpEndpoint(five_minutes));
        // Another call served since: only this call is given up.
        l.acquire().await.unwrap().finish(Answer::Served);
        assert_eq!(l.verdict(since), Verdict::GiveUpCall(five_minutes));
        // A refusal long after the last success starts its own clock.
        tokio::time::advance(Duration::from_secs(3600)).await;
        assert_eq!(l.verdict(Instant::now()), Verdict::Wait);
        // Once the endpoint is given up, every call fails at once, waiting ones too.
        let error = LlmError::Transient("gone".into());
        let full: Vec<_> = {
            let mut v = Vec::new();
            while let Ok(slot) = l.try_acquire() {
                v.push(slot);
            }
            v
        };
        let (waiter, ()) = tokio::join!(l.acquire(), async {
            tokio::task::yield_now().await;
            l.give_up(error);
        });
        assert!(matches!(waiter, Err(LlmError::Transient(_))));
        drop(full);
        assert!(l.acquire().await.is_err());
    }
}
