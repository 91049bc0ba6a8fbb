//! Faults injected by the loopback LLM: 429 with Retry-After, 5xx, a hang past the
//! timeout, a malformed body, fenced and wrongly shaped replies, unknown tools,
//! persistent garbage, an unreachable server and a wrong key. Each ends in a definite
//! status with the retries counted, the batch goes on, and the key is never written.

use std::time::Duration;

use serde_json::json;

use crate::helpers::Project;
use crate::llm::{llm_project, run_with};
use crate::mock_llm::{MockLlm, Reply, action, finish, marker};

fn status(code: u16, retry_after: Option<&'static str>) -> Reply {
    Reply::Status {
        code,
        retry_after,
        body: json!({"error": {"message": format!("injected {code}")}}).to_string(),
    }
}

#[test]
fn every_fault_ends_in_a_definite_status_and_the_batch_goes_on() {
    let mock = MockLlm::start();
    let done = || finish("done");
    mock.script("r429", vec![status(429, Some("1")), done()])
        .script("r500", vec![status(500, None), status(502, None), done()])
        .script(
            "hang",
            vec![Reply::Hang(Duration::from_secs(5), "{}".into()), done()],
        )
        .script(
            "malformed",
            vec![Reply::Raw("{\"choices\": [".into()), done()],
        )
        .script(
            "fenced",
            vec![Reply::Content(format!(
                "```json\n{}\n```",
                json!({"action": {"function": "", "arguments": {}, "status": "FINISH"}})
            ))],
        )
        .script(
            "schema",
            vec![Reply::Content(json!({"answer": 42}).to_string()), done()],
        )
        .script(
            "tool",
            vec![
                action("run_shell", json!({"cmd": "ls"}), "CONTINUE"),
                done(),
            ],
        )
        .script("garbage", vec![Reply::Content("no".into()); 4])
        .script("down", vec![status(502, None); 4]);
    let p = llm_project();
    for name in [
        "r429",
        "r500",
        "hang",
        "malformed",
        "fenced",
        "schema",
        "tool",
        "garbage",
        "down",
    ] {
        p.task(
            &format!("{name}.json"),
            json!({"request": format!("task {}", marker(name))}),
        );
    }
    let out = run_with(&p, &mock, &["--jobs", "4", "--eval", "none"]);
    out.expect_code(1);
    let llm = |id: &str| out.status(id)["llm"].clone();
    for (id, retries, bad) in [
        ("r429", 0, 0),
        ("r500", 2, 0),
        ("hang", 1, 0),
        ("malformed", 1, 0),
        ("fenced", 0, 0),
        ("schema", 0, 1),
        ("tool", 0, 1),
    ] {
        assert_eq!(out.status_of(id), "passed", "{id}: {}", out.status(id));
        assert_eq!(llm(id)["retries"], retries, "{id}");
        assert_eq!(llm(id)["bad_replies"], bad, "{id}");
    }
    // A rate limit is waited out, not retried.
    assert_eq!(llm("r429")["rate_limited"], 1);
    let log = out.task_file("r429", "task.log");
    assert!(
        log.contains("429") && log.contains("every call to it waits 1.0s, as the server asked"),
        "{log}"
    );
    let log = out.task_file("hang", "task.log");
    assert!(log.contains("no answer within 2s"), "{log}");
    let told = mock.received_for("tool")[1].body["messages"].to_string();
    assert!(
        told.contains("unknown function `run_shell`; the functions are: execute_command"),
        "{told}"
    );

    // Garbage after every retry: the model failed the task; each reply is quoted.
    let garbage = out.status("garbage");
    assert_eq!(garbage["status"], "failed");
    assert!(
        garbage["error"]
            .as_str()
            .unwrap()
            .starts_with("the model's replies could not be used (4 tries"),
        "{garbage}"
    );
    assert_eq!(garbage["llm"]["bad_replies"], 4);
    let log = out.task_file("garbage", "task.log");
    assert_eq!(log.matches("--- reply ---\n    no").count(), 4, "{log}");
    let steps: Vec<serde_json::Value> = out
        .task_file("garbage", "response.log")
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(steps[0]["status"], "ERROR");

    // The server down after every retry: an infrastructure error.
    let down = out.status("down");
    assert_eq!(down["status"], "error");
    assert!(
        down["error"]
            .as_str()
            .unwrap()
            .starts_with("the LLM was unreachable after 4 attempts; last: 502"),
        "{down}"
    );
    assert_eq!(
        down["llm"]["retries"], 3,
        "the retries of a call that never succeeded count too"
    );
    assert!(
        out.stderr.contains("9 tasks: 7 passed, 1 failed, 1 error"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_wrong_key_stops_the_run_and_is_never_written_anywhere() {
    let secret = "sk-test-SECRET-0123456789abcdef";
    let mock = MockLlm::start();
    mock.script("a", vec![Reply::EchoAuth])
        .script("b", vec![finish("done")])
        .script("c", vec![finish("done")]);
    let p = llm_project();
    // A task that looks for the key in its environment, and two that the stop cancels.
    p.task(
        "a.json",
        json!({"request": format!("first {}", marker("a")),
            "setup": [{"action": "execute_command", "parameters": {"command": "env > env.txt"}}]}),
    )
    .task(
        "b.json",
        json!({"request": format!("second {}", marker("b"))}),
    )
    .task(
        "c.json",
        json!({"request": format!("third {}", marker("c"))}),
    );
    let url = mock.url();
    let out = p.cmd_env(
        &[
            "run",
            "tasks",
            "--llm-base-url",
            &url,
            "--jobs",
            "1",
            "--progress",
            "lines",
        ],
        &[("OPENAI_API_KEY", secret)],
    );
    out.expect_code(1);
    let a = out.status("a");
    assert_eq!(a["status"], "error");
    let error = a["error"].as_str().unwrap();
    assert!(
        error.starts_with(
            "the LLM server refused the request (401): Incorrect API key provided: Bearer ***"
        ),
        "{error}"
    );
    assert!(
        error.ends_with("check the API key in $OPENAI_API_KEY"),
        "{error}"
    );
    assert!(
        out.stderr.contains("(every task would fail the same way)"),
        "{}",
        out.stderr
    );
    assert_eq!(out.row("b")["status"], "cancelled");
    assert_eq!(out.row("c")["status"], "cancelled");
    // The key went in the header, and nowhere else.
    assert_eq!(
        mock.received()[0].headers["authorization"],
        format!("Bearer {secret}")
    );
    assert!(
        !out.task_file("a", "workspace/env.txt").contains("OPENAI"),
        "commands must not see the key"
    );
    let mut leaks = Vec::new();
    for entry in walkdir::WalkDir::new(p.path().join("results"))
        .into_iter()
        .flatten()
    {
        if entry.file_type().is_file()
            && std::fs::read_to_string(entry.path())
                .unwrap_or_default()
                .contains("SECRET-0123")
        {
            leaks.push(entry.path().display().to_string());
        }
    }
    assert!(leaks.is_empty(), "the key was written to {leaks:?}");
    assert!(!out.stderr.contains("SECRET-0123") && !out.stdout.contains("SECRET-0123"));
    let run = crate::helpers::read_json(&out.run_dir("proj").join("run.json"));
    assert_eq!(
        run["config"]["llm"]["api_key"],
        "set (from $OPENAI_API_KEY)"
    );
    // The configuration's error: kept by a resumed run while the key is the same, run
    // again once it changes.
    assert_eq!(a["blame"], "config", "{a}");
    let resume = |key: &str| {
        p.cmd_env(
            &[
                "run",
                "tasks",
                "--llm-base-url",
                &url,
                "--jobs",
                "1",
                "--progress",
                "lines",
            ],
            &[("OPENAI_API_KEY", key)],
        )
    };
    let again = resume(secret);
    assert_eq!(
        again.status("a")["attempts"].as_array().unwrap().len(),
        1,
        "kept"
    );
    let changed = resume("sk-test-OTHER-0123456789abcdef");
    assert_eq!(
        changed.status("a")["attempts"].as_array().unwrap().len(),
        2,
        "{}",
        changed.stderr
    );
}

#[test]
fn no_key_for_openai_is_a_config_error() {
    let p = Project::new();
    p.task("t.json", json!({"request": "x"}));
    let out = p.run(&["--model", "gpt-4o"]);
    out.expect_code(2);
    assert!(
        out.stderr
            .contains("no API key for https://api.openai.com/v1: set $OPENAI_API_KEY"),
        "{}",
        out.stderr
    );
}

#[test]
fn an_endless_answer_is_refused_without_reading_it_all() {
    // A 50 MB body once took the runner to 1.5 GB; now it is refused at 8 MiB.
    let mock = MockLlm::start();
    let huge = format!(
        "{{\"choices\": [{{\"message\": {{\"content\": \"{}\"}}}}]}}",
        "x".repeat(50 << 20)
    );
    mock.script("huge", vec![Reply::Raw(huge), finish("done")]);
    let p = llm_project();
    p.task(
        "t.json",
        json!({"request": format!("task {}", marker("huge"))}),
    );
    let out = run_with(&p, &mock, &["--eval", "none"]);
    out.expect_code(0);
    let log = out.task_file("t", "task.log");
    assert!(
        log.contains("the answer was refused: it is larger than 8 MiB"),
        "{log}"
    );
    assert_eq!(out.status("t")["llm"]["retries"], 1);
}
