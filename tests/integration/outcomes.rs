//! Task outcomes and the result files: failing checks, divergent replays, errors that do
//! not stop the batch, and summary files that agree with the per-task records.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::helpers::{Project, read_json, shell_plan};

#[test]
fn a_failing_check_fails_the_task_and_says_what_it_found() {
    let p = Project::new();
    p.task(
        "total.json",
        json!({"request": "write 41", "actions": [
            {"action": "write_file", "parameters": {"path": "total.txt", "content": "41\n"}}],
            "evaluate": [{"type": "file_exists", "path": "total.txt"},
                         {"type": "file_equals", "path": "total.txt", "content": "42\n"}]}),
    );
    let out = p.run(&[]);
    out.expect_code(1);
    let status = out.status("total");
    assert_eq!(status["status"], "failed");
    assert_eq!(status["complete"], "no");
    assert_eq!(
        status["error"],
        "check failed: file_equals total.txt: `total.txt` line 1 is \"41\", expected \"42\""
    );
    let eval: Value =
        serde_json::from_str(out.task_file("total", "evaluation.log").trim()).unwrap();
    assert_eq!(eval["complete"], "no");
    assert_eq!(eval["type"], "evaluation_result");
    assert_eq!(eval["level"], "session");
    assert_eq!(eval["sub_scores"][0]["evaluation"], "yes");
    assert_eq!(eval["sub_scores"][1]["evaluation"], "no");
    let md = out.task_file("total", "output.md");
    assert!(md.contains("- **Status**: ❌ failed"), "{md}");
    assert!(
        md.contains(
            "  - ❌ `file_equals total.txt`: `total.txt` line 1 is \"41\", expected \"42\""
        ),
        "{md}"
    );
}

#[test]
fn a_divergent_replay_fails_at_the_step_that_differs() {
    let p = Project::new();
    p.task(
        "diverge.json",
        json!({"request": "count", "actions": [
            {"action": "execute_command", "parameters": {"command": "echo 3"}, "expect": {"exit_code": 0, "stdout": "2"}},
            {"action": "execute_command", "parameters": {"command": "touch after"}}]}),
    );
    let out = p.run(&[]);
    out.expect_code(1);
    let status = out.status("diverge");
    assert_eq!(status["status"], "failed");
    assert_eq!(status["steps"], 1);
    let error = status["error"].as_str().unwrap();
    assert!(
        error.starts_with(
            "step 1 `execute_command(command=\"echo 3\")` diverged from the recording"
        ),
        "{error}"
    );
    assert!(
        error.ends_with("stdout line 1 is \"3\", expected \"2\""),
        "{error}"
    );
    assert!(
        !p.path()
            .join("results/proj/diverge/workspace/after")
            .exists()
    );
    let steps: Vec<Value> = out
        .task_file("diverge", "response.log")
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(steps.len(), 1);
    assert_eq!(steps[0]["status"], "FAIL");
    assert_eq!(
        steps[0]["action"][0]["divergence"],
        "stdout line 1 is \"3\", expected \"2\""
    );
}

#[test]
fn a_failing_command_without_expect_fails_the_replay() {
    let p = Project::new();
    p.task("fails.json", shell_plan("x", &["ls no-such-file"]));
    let out = p.run(&[]);
    let error = out.status("fails")["error"].as_str().unwrap().to_string();
    assert!(
        error.contains("failed: exit code 2: ls: cannot access 'no-such-file'")
            && !error.contains("diverged"),
        "{error}"
    );
}

#[test]
fn errors_do_not_stop_the_batch() {
    let p = Project::new();
    p.task(
        "setup_fails.json",
        json!({"request": "x", "setup": [{"action": "execute_command", "parameters": {"command": "exit 7"}}], "actions": []}),
    )
    .file("tasks/broken.json", "not json")
    .task("missing_input.json", json!({"request": "x", "setup": [{"action": "read_file", "parameters": {"path": "input.txt"}}], "actions": []}));
    for i in 0..5 {
        p.task(&format!("ok{i}.json"), shell_plan("ok", &["echo ok"]));
    }
    let out = p.run(&["--jobs", "2"]);
    out.expect_code(1);
    for i in 0..5 {
        assert_eq!(out.status_of(&format!("ok{i}")), "passed");
    }
    let setup = out.status("setup_fails");
    assert_eq!(setup["status"], "error");
    assert!(
        setup["error"]
            .as_str()
            .unwrap()
            .starts_with("setup step 1 `execute_command(command=\"exit 7\")` failed"),
        "{setup}"
    );
    assert_eq!(out.status_of("broken"), "error");
    assert_eq!(out.status_of("missing_input"), "error");
    assert!(
        out.stderr
            .contains("8 tasks: 5 passed, 0 failed, 3 error in"),
        "{}",
        out.stderr
    );
}

#[test]
fn result_files_parse_and_agree() {
    let p = Project::new();
    p.task("a/pass.json", shell_plan("pass", &["echo a > a.txt"]))
        .task("a/fail.json", json!({"request": "f", "actions": [], "evaluate": [{"type": "file_exists", "path": "nope"}]}))
        .task("b/error.json", json!({"request": "e", "setup": [{"action": "execute_command", "parameters": {"command": "exit 3"}}], "actions": []}))
        .file("tasks/b/bad.json", "{");
    let out = p.run(&[]);
    out.expect_code(1);
    let root = out.run_dir("proj");
    let summary = out.summary();
    let rows = summary["tasks"].as_array().unwrap();
    let mut from_tasks: BTreeMap<String, u64> = BTreeMap::new();
    for row in rows {
        let id = row["id"].as_str().unwrap();
        let status = read_json(&root.join(id).join("status.json"));
        assert_eq!(status["status"], row["status"], "{id}");
        *from_tasks
            .entry(status["status"].as_str().unwrap().to_string())
            .or_default() += 1;
        for file in ["output.md", "task.log"] {
            assert!(root.join(id).join(file).exists(), "{id}/{file}");
        }
    }
    let totals = &summary["totals"];
    assert_eq!(totals["total"], 4);
    for (status, n) in &from_tasks {
        assert_eq!(totals[status.as_str()].as_u64(), Some(*n), "{status}");
    }
    let csv = std::fs::read_to_string(root.join("summary.csv")).unwrap();
    let mut lines = csv.lines();
    assert_eq!(
        lines.next().unwrap(),
        "id,session,status,complete,attempts,rounds,steps,duration_s,prompt_tokens,completion_tokens,cost_usd,error,score"
    );
    assert_eq!(lines.count(), 4);
    // `true` is a verdict, as UFO reads it (done: skip it); an error is not one, and a
    // resumed run runs it again.
    let tasks_status = read_json(&root.join("tasks_status.json"));
    assert_eq!(
        tasks_status,
        json!({"a/fail": true, "a/pass": true, "b/bad": false, "b/error": false})
    );
    let run = read_json(&root.join("run.json"));
    assert_eq!(run["tool"], "ufo-batch");
    assert_eq!(run["state"], "finished");
    assert_eq!(run["totals"], summary["totals"]);
    // Every response.log line is JSON with UFO's key names.
    let line: Value = serde_json::from_str(
        out.task_file("a/pass", "response.log")
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    for key in [
        "agent_type",
        "session_step",
        "round_step",
        "round_num",
        "status",
        "request",
        "action",
        "observation",
        "thought",
    ] {
        assert!(line.get(key).is_some(), "response.log lacks {key}: {line}");
    }
}

#[test]
fn plan_json_replays_to_the_same_result() {
    let p = Project::new();
    p.task(
        "make.json",
        json!({"request": "make a file", "files": {"in.txt": "b\na\n"},
               "actions": [{"action": "execute_command", "parameters": {"command": "sort in.txt | tee out.txt"}}],
               "evaluate": [{"type": "file_equals", "path": "out.txt", "content": "a\nb\n"}]}),
    );
    p.run(&[]).expect_code(0);
    let plan = p.path().join("results/proj/make/plan.json");
    let replay = Project::new();
    replay.file("tasks/make.json", &std::fs::read_to_string(plan).unwrap());
    let out = replay.run(&[]);
    out.expect_code(0);
    let status = out.status("make");
    assert_eq!(status["status"], "passed");
    assert_eq!(status["complete"], "yes");
    let replayed = read_json(&out.run_dir("proj").join("make/plan.json"));
    assert_eq!(
        replayed["actions"][0]["expect"],
        json!({"status": "success", "exit_code": 0, "stdout": "a\nb\n"})
    );
}
