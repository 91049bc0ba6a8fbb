//! Whose failure it is decides the status (README, "Whose failure it is"): an app that
//! crashes under a task is the machine's `error`, retried, never a replay's divergence;
//! a command that exits non-zero and a control that is not there are the agent's: its
//! step fails, it sees why in its next request, and it may still finish the task. (A
//! device or MCP server refusing the runner's own argument: `ufo_real`; `files` that
//! cannot be written: `task_rights`.)

use std::time::Duration;

use serde_json::json;

use crate::desktop::desktop_stack;
use crate::desktop_agents::{app, host_finish, select, steps};
use crate::helpers::{Project, processes_running};
use crate::llm::{llm_project, run_with};
use crate::mock_llm::{MockLlm, Reply, action, finish, marker, message_text, verdict};

/// Kills (SIGSEGV) the process whose command line holds `needle` each time one shows,
/// `times` times, within `limit`; returns how many it killed.
fn crash_each_time(
    needle: &'static str,
    times: usize,
    limit: Duration,
) -> std::thread::JoinHandle<usize> {
    std::thread::spawn(move || {
        let start = std::time::Instant::now();
        let mut killed = 0;
        while killed < times && start.elapsed() < limit {
            let pids = processes_running(needle);
            if pids.is_empty() {
                std::thread::sleep(Duration::from_millis(100));
                continue;
            }
            // Once it shows its window and the plan has begun.
            std::thread::sleep(Duration::from_secs(3));
            for pid in &pids {
                // SAFETY: a plain kill(2) of a pid this test found.
                unsafe { libc::kill(*pid, libc::SIGSEGV) };
            }
            killed += 1;
            while !processes_running(needle).is_empty() && start.elapsed() < limit {
                std::thread::sleep(Duration::from_millis(100));
            }
        }
        killed
    })
}

#[test]
#[cfg_attr(skip_desktop, ignore = "UFO_BATCH_SKIP_TESTS: needs desktop")]
fn an_app_that_crashes_mid_session_is_the_machines_error_and_is_retried() {
    desktop_stack();
    let p = Project::new();
    p.file("tasks/crash-note.txt", "first line\n");
    let read = json!({"action": "texts", "parameters": {"control_type": "Edit"}, "expect": {"text": "first line"}});
    p.task(
        "crash.json",
        json!({"request": "read the note twice", "object": "crash-note.txt", "timeout": 120,
               "actions": [read, {"action": "wait", "parameters": {"seconds": 6}}, read]}),
    );
    // Both attempts crash: an `error`, the machine's, tried twice.
    let killer = crash_each_time("mousepad crash-note.txt", 2, Duration::from_secs(200));
    let out = p.run(&["--retries", "1"]);
    assert_eq!(killer.join().unwrap(), 2, "{}", out.stderr);
    let status = out.status("crash");
    assert_eq!(status["status"], "error", "{status}");
    assert_eq!(status["blame"], "environment", "{status}");
    let attempts = status["attempts"].as_array().unwrap();
    assert_eq!(attempts.len(), 2, "retried: {status}");
    for attempt in attempts {
        let why = attempt["error"].as_str().unwrap();
        assert!(why.contains("was killed by signal 11"), "{why}");
        assert!(!why.contains("diverge"), "not the plan's divergence: {why}");
    }
    // The machine's error is run again by a resumed run, and passes.
    let again = p.run(&[]);
    let status = again.status("crash");
    assert_eq!(status["status"], "passed", "{status}");
    assert!(status.get("blame").is_none(), "{status}");
    assert_eq!(status["attempts"].as_array().unwrap().len(), 3, "{status}");
}

#[test]
fn a_command_that_exits_non_zero_is_the_agents_to_see_and_mend() {
    let mock = MockLlm::start();
    mock.script(
        "nonzero",
        vec![
            action(
                "execute_command",
                json!({"command": "ls no-such-file"}),
                "CONTINUE",
            ),
            action(
                "execute_command",
                json!({"command": "echo found > found.txt"}),
                "CONTINUE",
            ),
            finish("found.txt written"),
        ],
    )
    .judge("nonzero", vec![verdict("yes", "found.txt is there")]);
    let p = llm_project();
    p.task(
        "nonzero.json",
        json!({"request": format!("Write found.txt {}", marker("nonzero"))}),
    );
    let out = run_with(&p, &mock, &["--retries", "2"]);
    out.expect_code(0);
    let status = out.status("nonzero");
    assert_eq!(status["status"], "passed", "{status}");
    assert!(status.get("blame").is_none(), "{status}");
    assert_eq!(status["attempts"].as_array().unwrap().len(), 1, "{status}");
    let log = steps(&out, "nonzero");
    assert_eq!(
        log[0]["action"][0]["result"]["status"], "failure",
        "{}",
        log[0]
    );
    // Its next request says how the command ended.
    let second = &mock.received_for("nonzero")[1].body;
    let said = second["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(message_text)
        .collect::<Vec<_>>()
        .join("\n");
    assert!(said.contains("exit code 2"), "{said}");
}

#[test]
#[cfg_attr(skip_desktop, ignore = "UFO_BATCH_SKIP_TESTS: needs desktop")]
fn a_control_that_is_not_there_is_the_agents_to_see_and_mend() {
    desktop_stack();
    let mock = MockLlm::start();
    mock.script(
        "nowhere",
        vec![
            select("nowhere-note", "ASSIGN", "Read the note"),
            Reply::Content(app(
                "click_input",
                json!({"id": "999", "name": "No Such Button", "control_type": "Button"}),
                "CONTINUE",
            )),
            Reply::Content(app("", json!({}), "FINISH")),
            host_finish(),
        ],
    )
    .judge("nowhere", vec![verdict("yes", "read")]);
    let p = llm_project();
    p.file("files/nowhere-note.txt", "first line\n");
    p.task(
        "nowhere.json",
        json!({"task": format!("Read the note {}", marker("nowhere")), "object": "nowhere-note.txt", "app": "notepad"}),
    );
    let out = run_with(&p, &mock, &["--retries", "2"]);
    out.expect_code(0);
    let status = out.status("nowhere");
    assert_eq!(status["status"], "passed", "{status}");
    assert_eq!(status["attempts"].as_array().unwrap().len(), 1, "{status}");
    let requests = mock.received_for("nowhere");
    let next = requests[2].body["messages"].to_string();
    assert!(
        next.contains("No Such Button"),
        "the AppAgent is told: {next}"
    );
    let log = steps(&out, "nowhere");
    let clicked = log
        .iter()
        .find(|s| s["action"][0]["result"]["status"] == "failure")
        .expect("the click's step failed");
    let error = clicked["action"][0]["result"]["error"].as_str().unwrap();
    assert!(error.contains("No Such Button"), "{error}");
}
