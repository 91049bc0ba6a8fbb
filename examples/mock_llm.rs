//! A loopback OpenAI-compatible server for benchmarks and demos: every request gets a
//! reply in UFO's schema after a fixed delay (a FINISH, or with `--steps N` an
//! `execute_command` of `true` until the task's Nth call). It is the tests' mock server
//! (`tests/integration/mock_llm.rs`), run on its own. With `--limit N` it serves N calls
//! at once and refuses the rest as a provider at its rate limit does.
//!
//! With `--play FILE` it plays the scripted agent of `scripts/try-llm.sh` instead
//! (examples/mock-llm/agent.json): a LinuxAgent, a HostAgent, an AppAgent and a judge
//! that answer the sample requests as the script says. A script, not a model.
//!
//! `cargo run --release --example mock_llm -- [--port 8099] [--delay-ms 200] [--steps 3]
//! [--limit 8] [--refusal retry-after=1|retry-after-ms=300|bare|overloaded]
//! [--stats FILE] [--play FILE]` prints the base URL to give `--llm-base-url`, then serves
//! until killed, writing what the limit did (`served N refused N peak N`) to FILE every
//! 0.2s.

#[expect(
    dead_code,
    reason = "the tests use the scripting half of the mock; this uses the fallback"
)]
#[path = "../tests/integration/mock_llm.rs"]
mod mock_llm;

use std::path::PathBuf;
use std::time::Duration;

use mock_llm::{Limits, MockLlm, Refusal, Reply};
use serde_json::{Value, json};

fn main() {
    let mut port = 0u16;
    let mut delay_ms = 0u64;
    let mut steps = 1usize;
    let mut limit = None;
    let mut refusal = Refusal::RetryAfter("1");
    let mut stats = None;
    let mut script = None;
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
            "--play" => {
                let quit = |why: String| -> ! {
                    eprintln!("mock_llm: {why}");
                    std::process::exit(2)
                };
                let text = std::fs::read_to_string(&value)
                    .unwrap_or_else(|e| quit(format!("cannot read --play {value}: {e}")));
                let mut parsed: Value = serde_json::from_str(&text)
                    .unwrap_or_else(|e| quit(format!("--play {value} is not JSON: {e}")));
                let Some(object) = parsed.as_object_mut() else {
                    quit(format!(
                        "--play {value} must hold a JSON object with `tasks`"
                    ));
                };
                // Named in what the scripted agent says of a request it does not know.
                object.insert("path".into(), json!(value));
                script = Some(parsed);
            }
            other => panic!(
                "unknown option {other}; use --port, --delay-ms, --steps, --limit, --refusal, --stats, --play"
            ),
        }
    }
    let mock = MockLlm::start_on(port);
    match script {
        Some(script) => mock.serve_all(
            Reply::computed(move |body| play(&script, body)),
            Duration::from_millis(delay_ms),
        ),
        None => mock.serve_steps(steps, Duration::from_millis(delay_ms)),
    };
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

/// `--play FILE`: the scripted agent of `scripts/try-llm.sh` (examples/mock-llm/agent.json
/// says how it reads). Every request gets the reply its script gives the agent that asks
/// (told by the system prompt) in the conversation that holds the entry's `when`, by how
/// many replies that conversation already has.
fn play(script: &Value, body: &Value) -> String {
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    let text_of = mock_llm::message_text;
    let system = messages.first().map(text_of).unwrap_or_default();
    if system.starts_with("You evaluate") {
        let judge = &script["judge"];
        let complete = judge["complete"].as_str().unwrap_or("yes");
        return json!({"reason": judge["reason"], "sub_scores": [{"name": "request", "evaluation": complete}],
                      "complete": complete})
        .to_string();
    }
    let agent = ["HostAgent", "AppAgent", "LinuxAgent"]
        .into_iter()
        .find(|a| system.starts_with(&format!("You are {a}")))
        .unwrap_or("LinuxAgent");
    let conversation: String = messages
        .iter()
        .skip(1)
        .map(text_of)
        .collect::<Vec<_>>()
        .join("\n");
    let replied = messages.iter().filter(|m| m["role"] == "assistant").count();
    let entry = script["tasks"].as_array().into_iter().flatten().find(|t| {
        t["agent"] == agent && t["when"].as_str().is_some_and(|w| conversation.contains(w))
    });
    let Some(entry) = entry else {
        return unscripted(agent, script["path"].as_str().unwrap_or("the script"));
    };
    let replies = entry["replies"].as_array().cloned().unwrap_or_default();
    let Some(reply) = replies.get(replied).or(replies.last()) else {
        return unscripted(agent, script["path"].as_str().unwrap_or("the script"));
    };
    let status = reply["status"].as_str().unwrap_or("FINISH");
    let thought = reply["thought"].as_str().unwrap_or("as scripted");
    match agent {
        "HostAgent" => {
            let arguments = reply["select"]
                .as_str()
                .map(|wanted| window(&messages.last().map(text_of).unwrap_or_default(), wanted))
                .unwrap_or_else(|| json!({}));
            let function = if arguments.as_object().is_some_and(|a| !a.is_empty()) {
                "select_application_window"
            } else {
                ""
            };
            json!({"observation": "the desktop's windows, as listed", "thought": thought,
                   "current_subtask": reply["subtask"], "message": [], "status": status, "plan": [],
                   "function": function, "arguments": arguments,
                   "comment": if status == "FINISH" { "the request is done" } else { "" }})
            .to_string()
        }
        _ => json!({"observation": "the workspace, as shown", "thought": thought,
                    "action": {"function": reply["function"], "arguments": reply["arguments"], "status": status},
                    "plan": [], "comment": if status == "FINISH" { "done, as scripted" } else { "" },
                    "save_screenshot": {"save": false, "reason": ""}})
        .to_string(),
    }
}

/// The window listed in the request (one JSON object a line) whose name holds `wanted`,
/// by its id and name; the only window when there is one; else the name alone.
fn window(request: &str, wanted: &str) -> Value {
    let listed: Vec<Value> = request
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["id"].is_string())
        .collect();
    let found = listed
        .iter()
        .find(|w| w["name"].as_str().is_some_and(|n| n.contains(wanted)))
        .or((listed.len() == 1).then(|| &listed[0]));
    match found {
        Some(w) => json!({"id": w["id"], "name": w["name"]}),
        None => json!({"name": wanted}),
    }
}

/// What the scripted agent says to a request its script does not know: it gives up,
/// saying why (the task then fails, as it should).
fn unscripted(agent: &str, script: &str) -> String {
    let why = format!("this request is not in {script}, the scripted agent's script");
    if agent == "HostAgent" {
        json!({"observation": why, "thought": why, "current_subtask": "", "message": [], "status": "FAIL",
               "plan": [], "function": "", "arguments": {}, "comment": why})
        .to_string()
    } else {
        json!({"observation": why, "thought": why, "action": {"function": "", "arguments": {}, "status": "FAIL"},
               "plan": [], "comment": why})
        .to_string()
    }
}
