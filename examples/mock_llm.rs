//! A loopback OpenAI-compatible server for benchmarks and demos: every request gets a
//! reply in UFO's schema after a fixed delay (a FINISH, or with `--steps N` an
//! `execute_command` of `true` until the task's Nth call). It is the tests' mock server
//! (`tests/integration/mock_llm.rs`), run on its own. With `--limit N` it serves N calls
//! at once and refuses the rest as a provider at its rate limit does.
//!
//! `cargo run --release --example mock_llm -- [--port 8099] [--delay-ms 200] [--steps 3]
//! [--limit 8] [--refusal retry-after=1|retry-after-ms=300|bare|overloaded]
//! [--stats FILE]` prints the base URL to give `--llm-base-url`, then serves until
//! killed, writing what the limit did (`served N refused N peak N`) to FILE every 0.2s.

#[expect(
    dead_code,
    reason = "the tests use the scripting half of the mock; this uses the fallback"
)]
#[path = "../tests/integration/mock_llm.rs"]
mod mock_llm;

use std::path::PathBuf;
use std::time::Duration;

use mock_llm::{Limits, MockLlm, Refusal};

fn main() {
    let mut port = 0u16;
    let mut delay_ms = 0u64;
    let mut steps = 1usize;
    let mut limit = None;
    let mut refusal = Refusal::RetryAfter("1");
    let mut stats = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let value = args.next().unwrap_or_default();
        let number = |what: &str| -> u64 {
            value
                .parse()
                .unwrap_or_else(|_| panic!("{what} takes a number, not {value:?}"))
        };
        match arg.as_str() {
            "--port" => port = number("--port") as u16,
            "--delay-ms" => delay_ms = number("--delay-ms"),
            "--steps" => steps = number("--steps") as usize,
            "--limit" => limit = Some(number("--limit") as usize),
            "--refusal" => refusal = parse_refusal(&value),
            "--stats" => stats = Some(PathBuf::from(&value)),
            other => panic!(
                "unknown option {other}; use --port, --delay-ms, --steps, --limit, --refusal, --stats"
            ),
        }
    }
    let mock = MockLlm::start_on(port);
    mock.serve_steps(steps, Duration::from_millis(delay_ms));
    if let Some(concurrency) = limit {
        mock.limit(Limits {
            concurrency,
            tokens: None,
            answer: refusal,
        });
    }
    println!("{}", mock.url());
    loop {
        std::thread::sleep(Duration::from_millis(200));
        if let Some(path) = &stats {
            let s = mock.limit_stats();
            let text = format!(
                "served {} refused {} peak {}\n",
                s.served, s.refused, s.peak
            );
            std::fs::write(path, text).expect("cannot write --stats");
        }
    }
}

fn parse_refusal(text: &str) -> Refusal {
    let leak = |s: &str| -> &'static str { Box::leak(s.to_string().into_boxed_str()) };
    match text.split_once('=') {
        Some(("retry-after", s)) => Refusal::RetryAfter(leak(s)),
        Some(("retry-after-ms", ms)) => Refusal::RetryAfterMs(leak(ms)),
        None if text == "bare" => Refusal::Bare,
        None if text == "overloaded" => Refusal::Overloaded,
        _ => panic!("--refusal: retry-after=S, retry-after-ms=MS, bare or overloaded"),
    }
}
