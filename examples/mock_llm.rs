//! A loopback OpenAI-compatible server for benchmarks and demos: every request gets a
//! reply in UFO's schema after a fixed delay (a FINISH, or with `--steps N` an
//! `execute_command` of `true` until the task's Nth call). It is the tests' mock server
//! (`tests/integration/mock_llm.rs`), run on its own. With `--limit N` it serves N calls
//! at once and refuses the rest as a provider at its rate limit does.
//!
//! With `--play FILE` it plays the scripted agent of `scripts/try-llm.sh` instead
//! (scripts/mock-agent.json; docs/llm.md says how it reads): a LinuxAgent, a HostAgent,
//! an AppAgent, an operator (over chat completions, in UI-TARS's format), a judge and an
//! experience summarizer that answer the sample requests as the script says. A script,
//! not a model.
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

/// `--play FILE`: the scripted agent of `scripts/try-llm.sh` (scripts/mock-agent.json
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
    if system.starts_with("You are an expert summarizer") {
        let request = messages.get(1).map(text_of).unwrap_or_default();
        return summary(script, &request);
    }
    // The operator over chat completions (`[operator] provider = "chat"`, UI-TARS's
    // format: src/llm/computer/chat.rs) is told by its prompt.
    let operator = system.starts_with("You are a GUI agent");
    let agent = ["HostAgent", "AppAgent", "LinuxAgent"]
        .into_iter()
        .find(|a| system.starts_with(&format!("You are {a}")))
        .unwrap_or(if operator { "operator" } else { "LinuxAgent" });
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
        // UI-TARS's two lines: a thought and one action in its action space; `click`
        // is a point as fractions of the screenshot, made its pixels.
        "operator" => {
            let point = reply["click"].as_array().map(|p| {
                let at = |i: usize| p.get(i).and_then(Value::as_f64);
                (at(0), at(1))
            });
            let action = match point {
                Some((Some(fx), Some(fy))) => {
                    let (w, h) = last_screenshot_size(&messages).unwrap_or((1280, 800));
                    let (x, y) = ((fx * f64::from(w)).round(), (fy * f64::from(h)).round());
                    format!("click(start_box='<|box_start|>({x},{y})<|box_end|>')")
                }
                _ => reply["action"]
                    .as_str()
                    .unwrap_or("finished(content='as scripted')")
                    .to_string(),
            };
            format!("Thought: {thought}\nAction: {action}")
        }
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

/// The summarizer's reply (`src/agent/summarizer.rs`: UFO's ten keys) to a trajectory
/// (`[Agent Trajectory]:` a JSON array of steps, then `[Task to be completed]:`): its
/// first step that called a function is the example's action, with the arguments the
/// script gave it (the step shows only its action's text); the other steps are the plan;
/// the script's entry for the task may give the `tips`.
fn summary(script: &Value, request: &str) -> String {
    let trajectory = request
        .split_once("[Agent Trajectory]:")
        .map_or("", |(_, rest)| rest);
    let (steps, task) = trajectory
        .split_once("[Task to be completed]:")
        .unwrap_or((trajectory, ""));
    let task = task.trim();
    let steps: Vec<Value> = steps
        .find('[')
        .and_then(|at| serde_json::from_str(steps[at..].trim()).ok())
        .unwrap_or_default();
    let acted = steps
        .iter()
        .position(|s| s["Function"].as_str().is_some_and(|f| !f.is_empty()));
    let Some(first) = acted.map(|i| &steps[i]) else {
        let why = "the trajectory has no step that called a function";
        return json!({"Observation": why, "Thought": why, "ControlLabel": "", "ControlText": "",
                      "Function": "", "Args": {}, "Status": "FINISH", "Plan": "<FINISH>",
                      "Comment": why, "Tips": "- nothing to learn from this trajectory"})
        .to_string();
    };
    let function = first["Function"].as_str().unwrap_or_default();
    // The script's entry whose `when` (less its `<Request>`-like tag) the task holds.
    let entry = script["tasks"].as_array().into_iter().flatten().find(|t| {
        let when = t["when"].as_str().unwrap_or_default();
        let when = when.split_once("> ").map_or(when, |(_, w)| w);
        !when.is_empty() && task.contains(when)
    });
    let args = entry
        .and_then(|e| e["replies"].as_array())
        .into_iter()
        .flatten()
        .find(|r| r["function"] == function)
        .map_or_else(|| json!({}), |r| r["arguments"].clone());
    let rest: Vec<String> = steps[acted.unwrap_or(0) + 1..]
        .iter()
        .flat_map(|s| s["Action"].as_array().cloned().unwrap_or_default())
        .filter_map(|a| a.as_str().map(str::to_string))
        .filter(|a| !a.is_empty())
        .collect();
    let plan = if rest.is_empty() {
        "<FINISH>".to_string()
    } else {
        rest.join("\n")
    };
    let status = if rest.is_empty() {
        "FINISH"
    } else {
        "CONTINUE"
    };
    let tips = entry.and_then(|e| e["tips"].as_str()).map_or_else(
        || format!("- {function} did the first step of this task"),
        str::to_string,
    );
    json!({"Observation": format!("the agent took {} steps to do the task", steps.len()),
           "Thought": first["Thought"], "ControlLabel": first["ControlLabel"],
           "ControlText": first["ControlText"], "Function": function, "Args": args,
           "Status": status, "Plan": plan, "Comment": "summarized by the scripted agent",
           "Tips": tips})
    .to_string()
}

/// The width and height of the last screenshot in `messages` (a PNG data URL): the
/// pixels an operator's points are in.
fn last_screenshot_size(messages: &[Value]) -> Option<(u32, u32)> {
    use base64::Engine;
    let url = messages
        .iter()
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .filter_map(|part| part["image_url"]["url"].as_str().map(str::to_string))
        .next_back()?;
    let data = url.split_once("base64,")?.1;
    // The signature, IHDR's length and name, then its width and height.
    let head = base64::engine::general_purpose::STANDARD
        .decode(data.get(..32)?)
        .ok()?;
    let word = |at: usize| Some(u32::from_be_bytes(head.get(at..at + 4)?.try_into().ok()?));
    Some((word(16)?, word(20)?))
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
    if agent == "operator" {
        return format!("Thought: {why}\nAction: finished(content='{why}')");
    }
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
