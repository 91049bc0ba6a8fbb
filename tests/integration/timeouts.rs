//! Per-task timeouts kill whole process trees; per-command timeouts end one command.

use serde_json::json;

use crate::helpers::{Project, processes_running};

#[test]
fn task_timeout_kills_the_process_tree() {
    let p = Project::new();
    p.task(
        "hang.json",
        json!({
            "request": "hang with a background child",
            "timeout": 1,
            "actions": [{"action": "execute_command", "parameters": {
                "command": "sleep 301.4242 & sleep 300", "timeout": 600}}]
        }),
    )
    .task("quick.json", crate::helpers::shell_plan("quick", &["true"]));
    let out = p.run(&["--jobs", "2"]);
    out.expect_code(1);
    let status = out.status("hang");
    assert_eq!(status["status"], "timeout");
    assert!(
        status["error"]
            .as_str()
            .unwrap()
            .starts_with("timed out after 1s during the session"),
        "{status}"
    );
    assert_eq!(
        out.status_of("quick"),
        "passed",
        "a hanging task must not hold up the others"
    );
    assert!(
        crate::helpers::eventually(|| processes_running("sleep 301.4242").is_empty()),
        "the background sleeper outlived its task: {:?}",
        processes_running("sleep 301.4242")
    );
    assert!(out.stderr.contains("TIMEOUT hang"), "{}", out.stderr);
}

#[test]
fn run_timeout_applies_to_tasks_without_their_own() {
    let p = Project::new();
    p.task(
        "slow.json",
        crate::helpers::shell_plan("slow", &["sleep 30"]),
    );
    let out = p.run(&["--timeout", "1s"]);
    out.expect_code(1);
    assert_eq!(out.status_of("slow"), "timeout");
}

#[test]
fn command_timeout_fails_the_step_not_the_run() {
    let p = Project::new();
    p.task(
        "cmd.json",
        json!({"request": "a command that hangs", "actions": [
            {"action": "execute_command", "parameters": {"command": "sleep 30", "timeout": 1}},
            {"action": "execute_command", "parameters": {"command": "echo never"}}
        ]}),
    );
    let out = p.run(&[]);
    out.expect_code(1);
    let status = out.status("cmd");
    assert_eq!(status["status"], "failed");
    let error = status["error"].as_str().unwrap();
    assert!(error.contains("the command timed out after 1s"), "{error}");
    assert_eq!(
        status["steps"], 1,
        "the step after the failure must not run"
    );
}
