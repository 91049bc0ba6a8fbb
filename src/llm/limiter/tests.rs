//! Tests of the limiter: the limit held, lowered to what was served, grown back,
//! paused, and given up.

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
