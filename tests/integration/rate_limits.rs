//! A provider at its rate limit slows the run down and never fails its tasks: the
//! loopback server refuses calls beyond a concurrency or token limit (429 with and
//! without `Retry-After`, `retry-after-ms`, 503 "overloaded"), and every task passes
//! without spending its retries; a provider that refuses everything stops the run.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::helpers::{Project, read_json};
use crate::llm::{llm_project, run_with};
use crate::mock_llm::{Limits, MockLlm, Refusal, Reply, marker};

/// `n` request tasks (`t000` ...), for a mock that gives each `steps` calls.
fn request_tasks(n: usize) -> Project {
    let p = llm_project();
    for i in 0..n {
        p.task(
            &format!("t{i:03}.json"),
            json!({"request": format!("task {i}: say done")}),
        );
    }
    p
}

/// Every task passed, none spent a retry, and the rate limits were recorded.
#[track_caller]
fn all_passed_without_retries(out: &crate::helpers::Output, n: usize) -> (u64, f64) {
    let mut refused = 0;
    let mut waited = 0.0;
    for i in 0..n {
        let id = format!("t{i:03}");
        let status = out.status(&id);
        assert_eq!(status["status"], "passed", "{id}: {status}");
        assert_eq!(
            status["llm"]["retries"], 0,
            "{id}: rate limits are not retries"
        );
        assert_eq!(status["attempts"].as_array().unwrap().len(), 1, "{id}");
        refused += status["llm"]["rate_limited"].as_u64().unwrap();
        waited += status["llm"]["waited_s"].as_f64().unwrap();
    }
    (refused, waited)
}

fn run_json(out: &crate::helpers::Output) -> Value {
    read_json(&out.run_dir("proj").join("run.json"))
}

#[test]
fn a_concurrency_limit_slows_the_run_and_every_task_passes() {
    // 128 tasks of 3 calls at --jobs 64 against a provider that serves 8 at a time,
    // 0.2s each, and answers 429 with Retry-After: 1 beyond that.
    const TASKS: usize = 128;
    const CALLS: usize = 3;
    const LIMIT: usize = 8;
    const CALL_S: f64 = 0.2;
    let mock = MockLlm::start();
    mock.serve_steps(CALLS, Duration::from_secs_f64(CALL_S))
        .limit(Limits {
            concurrency: LIMIT,
            tokens: None,
            answer: Refusal::RetryAfter("1"),
        });
    let p = request_tasks(TASKS);
    let clock = Instant::now();
    let out = run_with(
        &p,
        &mock,
        &["--jobs", "64", "--eval", "none", "--summary-json"],
    );
    let makespan = clock.elapsed().as_secs_f64();
    out.expect_code(0);
    let (refused, waited) = all_passed_without_retries(&out, TASKS);
    let served = mock.limit_stats();
    let ideal = (TASKS * CALLS) as f64 * CALL_S / LIMIT as f64;
    eprintln!(
        "makespan {makespan:.1}s, provider-bound ideal {ideal:.1}s ({:.2}x); {} refused, peak {} served at once",
        makespan / ideal,
        served.refused,
        served.peak
    );
    // The makespan is measured by scripts/ratelimit-bench.sh, not asserted here.
    assert_eq!(
        served.served,
        (TASKS * CALLS) as u64,
        "one served call per step"
    );
    assert!(served.refused > 0, "the limit was reached");
    assert_eq!(
        refused, served.refused,
        "each refusal is on a task's record"
    );
    assert!(waited > 0.0);
    // Bounded: the limiter settles below the limit instead of hammering it.
    assert!(
        served.refused < (TASKS * CALLS) as u64 / 2,
        "{} refusals for {} calls",
        served.refused,
        TASKS * CALLS
    );

    // The run's figures: on the summary line, in run.json and in --summary-json.
    let run = run_json(&out);
    let llm = &run["llm"];
    assert_eq!(llm["calls"].as_u64(), Some(served.served + served.refused));
    assert_eq!(llm["rate_limited"].as_u64(), Some(served.refused));
    assert_eq!(llm["max"], 64, "max_connections defaults to --jobs");
    assert!(llm["peak"].as_u64().unwrap() >= LIMIT as u64, "{llm}");
    assert!(llm["limit"].as_u64().unwrap() <= LIMIT as u64 + 1, "{llm}");
    let summary: Value = serde_json::from_str(out.stdout.trim()).unwrap();
    assert_eq!(summary["llm"], *llm);
    assert!(
        out.stderr
            .contains("LLM     the provider is rate limiting:"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains(&format!(
            "; LLM: {} calls, at most ",
            served.served + served.refused
        )) && out.stderr.contains("rate-limit answer"),
        "{}",
        out.stderr
    );
    for i in 0..TASKS {
        let log = out.task_file(&format!("t{i:03}"), "task.log");
        assert!(!log.contains("retrying in"), "a 429 is not a retry: {log}");
    }
}

#[test]
fn every_kind_of_refusal_is_waited_out() {
    // A token limit answered without a hint, retry-after-ms, and 503 "overloaded".
    for (name, limits) in [
        (
            "tokens",
            Limits {
                concurrency: 100,
                // 4 calls' worth of tokens per half second.
                tokens: Some((480, Duration::from_millis(500))),
                answer: Refusal::Bare,
            },
        ),
        (
            "retry-after-ms",
            Limits {
                concurrency: 2,
                tokens: None,
                answer: Refusal::RetryAfterMs("300"),
            },
        ),
        (
            "overloaded",
            Limits {
                concurrency: 2,
                tokens: None,
                answer: Refusal::Overloaded,
            },
        ),
    ] {
        let mock = MockLlm::start();
        mock.serve_steps(2, Duration::from_millis(100))
            .limit(limits);
        let p = request_tasks(16);
        let out = run_with(&p, &mock, &["--jobs", "16", "--eval", "none"]);
        out.expect_code(0);
        let (refused, _) = all_passed_without_retries(&out, 16);
        let served = mock.limit_stats();
        assert!(served.refused > 0, "{name}: the limit was reached");
        assert_eq!(refused, served.refused, "{name}");
        assert_eq!(served.served, 32, "{name}");
        let logs: String = (0..16)
            .map(|i| out.task_file(&format!("t{i:03}"), "task.log"))
            .collect();
        let expected = match name {
            "tokens" => {
                "429 Too Many Requests: Rate limit reached; the provider is at its limit: this call waits"
            }
            "retry-after-ms" => "every call to it waits 0.3s, as the server asked",
            _ => "503 Service Unavailable: The server is overloaded; the provider is at its limit",
        };
        assert!(logs.contains(expected), "{name}: {logs}");
    }
}

#[test]
fn waiting_for_the_provider_does_not_count_against_the_timeout() {
    // One call at a time, 0.8s each, 8 tasks at once: the last waits ~5.6s for its
    // slot, past its 3s limit, and passes.
    let mock = MockLlm::start();
    mock.serve_steps(1, Duration::from_millis(800))
        .limit(Limits {
            concurrency: 100,
            tokens: None,
            answer: Refusal::Bare,
        });
    let p = request_tasks(8);
    p.file(
        "ufo-batch.toml",
        "[llm]\nmodel = \"test-model\"\ntimeout = \"5s\"\nmax_connections = 1\n",
    );
    let out = run_with(
        &p,
        &mock,
        &["--jobs", "8", "--eval", "none", "--timeout", "3s"],
    );
    out.expect_code(0);
    let waited: Vec<f64> = (0..8)
        .map(|i| {
            out.status(&format!("t{i:03}"))["llm"]["waited_s"]
                .as_f64()
                .unwrap()
        })
        .collect();
    let longest = waited.iter().copied().fold(0.0, f64::max);
    assert!(longest > 3.0, "some task waited past its limit: {waited:?}");
    assert_eq!(
        run_json(&out)["llm"]["peak"],
        1,
        "max_connections = 1 holds"
    );
}

#[test]
fn a_provider_that_refuses_everything_stops_the_run() {
    let mock = MockLlm::start();
    mock.serve_steps(1, Duration::ZERO).limit(Limits {
        concurrency: 0,
        tokens: None,
        answer: Refusal::RetryAfter("1"),
    });
    let p = request_tasks(40);
    p.file(
        "ufo-batch.toml",
        "[llm]\nmodel = \"test-model\"\ngive_up_after = \"3s\"\nretry_max = \"1s\"\n",
    );
    let clock = Instant::now();
    let out = run_with(&p, &mock, &["--jobs", "4", "--eval", "none"]);
    let took = clock.elapsed();
    out.expect_code(1);
    // Once given up, every running task's call fails at once.
    assert!(took < Duration::from_secs(15), "stopped early: {took:?}");
    let summary = out.summary();
    let totals = &summary["totals"];
    let errors = totals["error"].as_u64().unwrap();
    assert!((1..=4).contains(&errors), "the running tasks: {totals}");
    assert_eq!(totals["passed"], 0, "{totals}");
    assert!(
        totals["cancelled"].as_u64().unwrap() > 20,
        "the rest did not start: {totals}"
    );
    let errored = summary["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["status"] == "error")
        .unwrap();
    let why = errored["error"].as_str().unwrap();
    assert!(
        why.contains("served no call for ")
            && why.contains("s (rate limit or overload; ")
            && why.contains("lower --max-connections or raise [llm] give_up_after"),
        "{why}"
    );
    assert!(out.stderr.contains("stopped early: "), "{}", out.stderr);
}

#[test]
fn a_server_asking_for_no_wait_is_not_hammered() {
    // Retry-After: 0 on every call: each call still backs off on its own.
    let mock = MockLlm::start();
    mock.serve_steps(1, Duration::ZERO).limit(Limits {
        concurrency: 0,
        tokens: None,
        answer: Refusal::RetryAfter("0"),
    });
    let p = request_tasks(4);
    p.file(
        "ufo-batch.toml",
        "[llm]\nmodel = \"test-model\"\ngive_up_after = \"2s\"\nretry_base = \"50ms\"\nretry_max = \"1s\"\n",
    );
    let out = run_with(&p, &mock, &["--jobs", "4", "--eval", "none"]);
    out.expect_code(1);
    let refused = mock.limit_stats().refused;
    // 4 calls backing off 50ms, 100ms, 200ms ... for 2s: about 6 refusals each.
    assert!(refused <= 60, "{refused} refusals in 2s");
}

#[test]
fn a_call_the_provider_never_serves_fails_alone() {
    // One task's request is refused every time while the others are served: that task
    // is an error after give_up_after, and the run goes on.
    let mock = MockLlm::start();
    let refused = Reply::Status {
        code: 429,
        retry_after: None,
        body: json!({"error": {"message": "Rate limit reached"}}).to_string(),
    };
    mock.serve_steps(3, Duration::from_millis(300))
        .script("stuck", vec![refused; 1000]);
    let p = request_tasks(12);
    p.task(
        "a-stuck.json",
        json!({"request": format!("never served {}", marker("stuck"))}),
    );
    p.file(
        "ufo-batch.toml",
        "[llm]\nmodel = \"test-model\"\ngive_up_after = \"2s\"\nretry_base = \"50ms\"\nretry_max = \"500ms\"\n",
    );
    let out = run_with(&p, &mock, &["--jobs", "4", "--eval", "none"]);
    out.expect_code(1);
    let stuck = out.status("a-stuck");
    assert_eq!(stuck["status"], "error", "{stuck}");
    let why = stuck["error"].as_str().unwrap();
    assert!(
        why.starts_with("the LLM refused this call for ")
            && why.contains("s while it answered other calls (")
            && why.ends_with("last: 429 Too Many Requests: Rate limit reached"),
        "{why}"
    );
    all_passed_without_retries(&out, 12);
    assert!(!out.stderr.contains("stopped early"), "{}", out.stderr);
}

#[test]
fn an_account_without_quota_stops_the_run() {
    let mock = MockLlm::start();
    mock.serve_steps(1, Duration::ZERO).script(
        "quota",
        vec![Reply::Status {
            code: 429,
            retry_after: None,
            body: json!({"error": {"message": "You exceeded your current quota, please check your plan and billing details.", "type": "insufficient_quota", "code": "insufficient_quota"}}).to_string(),
        }],
    );
    let p = request_tasks(5);
    p.task(
        "a-quota.json",
        json!({"request": format!("no quota {}", marker("quota"))}),
    );
    let out = run_with(&p, &mock, &["--jobs", "1", "--eval", "none"]);
    out.expect_code(1);
    let quota = out.status("a-quota");
    assert_eq!(quota["status"], "error", "{quota}");
    assert!(
        quota["error"]
            .as_str()
            .unwrap()
            .starts_with("the LLM provider says the account has no quota left (429): You exceeded"),
        "{quota}"
    );
    assert_eq!(quota["llm"]["rate_limited"], 0, "not waited out");
    assert!(out.stderr.contains("stopped early: "), "{}", out.stderr);
}
