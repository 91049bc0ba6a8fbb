//! A loopback OpenAI-compatible server for benchmarks and demos: every request gets a
//! FINISH reply in UFO's schema after a fixed delay. It is the tests' mock server
//! (`tests/integration/mock_llm.rs`), run on its own.
//!
//! `cargo run --release --example mock_llm -- [--port 8099] [--delay-ms 200]`
//! prints the base URL to give `--llm-base-url`, then serves until killed.

#[expect(
    dead_code,
    reason = "the tests use the scripting half of the mock; this uses the fallback"
)]
#[path = "../tests/integration/mock_llm.rs"]
mod mock_llm;

use std::time::Duration;

fn main() {
    let mut port = 0u16;
    let mut delay_ms = 0u64;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let value = args.next().unwrap_or_default();
        match arg.as_str() {
            "--port" => port = value.parse().expect("--port takes a number"),
            "--delay-ms" => delay_ms = value.parse().expect("--delay-ms takes a number"),
            other => panic!("unknown option {other}; use --port N and --delay-ms N"),
        }
    }
    let mock = mock_llm::MockLlm::start_on(port);
    mock.serve_all(mock_llm::finish("done"), Duration::from_millis(delay_ms));
    println!("{}", mock.url());
    loop {
        std::thread::sleep(Duration::from_secs(3600));
    }
}
