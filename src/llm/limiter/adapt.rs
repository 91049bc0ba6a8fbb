//! How the limit adapts to the answers: lowered once per round of calls on a refusal,
//! set to what the provider served of that round, grown back one per limit's worth of
//! successes, paused for a `Retry-After`.

use tokio::time::Instant;

use super::{Answer, Limiter, PROBE_AFTER, State};

/// The calls in flight when the limit was last lowered, followed to their end.
#[derive(Debug)]
pub(super) struct Round {
    /// The epoch those calls started in.
    epoch: u64,
    /// The limit before it was lowered.
    before: f64,
    /// Of those calls, how many are still in flight.
    outstanding: usize,
    /// And how many were served.
    served: usize,
}

impl Limiter {
    pub(super) fn release(&self, epoch: u64, answer: Answer) {
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
}
