//! Results a user can trust: a resumed run keeps only results made the same way and says
//! what changed; a mistake in the setup is refused before anything runs and a fixed
//! command runs again what it could not do; UFO's own layouts and files run as UFO users
//! have them; replays never turn failures into passes; every task is counted.

use serde_json::json;

use crate::helpers::{Project, read_json, shell_plan};
use crate::llm::{llm_project, run_with};
use crate::mock_llm::{MockLlm, action, finish, marker, verdict};

#[test]
fn a_result_made_with_another_model_runs_again_and_the_start_line_says_why() {
    let mock = MockLlm::start();
    for _ in 0..2 {
        mock.script("m", vec![finish("done")]);
    }
    let p = llm_project();
    p.task(
        "agent.json",
        json!({"request": format!("do it {}", marker("m"))}),
    );
    p.task("replay.json", shell_plan("r", &["true"]));
    let out = run_with(&p, &mock, &["--eval", "none"]);
    out.expect_code(0);
    assert_eq!(
        out.status("agent")["inputs"]["settings"]["model"],
        "test-model"
    );
    assert!(
        out.status("replay")["inputs"]["settings"]
            .get("model")
            .is_none(),
        "a replay does not depend on the model"
    );
    mock.script("m", vec![finish("done again")]);
    let out = run_with(&p, &mock, &["--eval", "none", "--model", "other-model"]);
    out.expect_code(0);
    assert!(
        out.stderr.contains("1 already passed and is kept")
            && out
                .stderr
                .contains("1 task re-run: model changed test-model → other-model"),
        "{}",
        out.stderr
    );
    let agent = out.status("agent");
    assert_eq!(agent["inputs"]["settings"]["model"], "other-model");
    assert_eq!(agent["attempts"].as_array().unwrap().len(), 2);
    assert_eq!(
        out.status("replay")["attempts"].as_array().unwrap().len(),
        1
    );
}

#[test]
fn an_infrastructure_error_is_not_a_verdict_and_runs_again() {
    let p = Project::new();
    p.task(
        "needs_input.json",
        json!({"request": "r", "setup": [{"action": "read_file", "parameters": {"path": "in.txt"}}],
               "actions": [{"action": "execute_command", "parameters": {"command": "cat in.txt"}}]}),
    );
    p.task("failing.json", json!({"request": "f", "actions": [], "evaluate": [{"type": "file_exists", "path": "nope"}]}));
    let out = p.run(&[]);
    out.expect_code(1);
    assert_eq!(out.status_of("needs_input"), "error");
    // A setup action that fails is the task file's: not retried, run again on resume.
    assert_eq!(out.status("needs_input")["blame"], "task_file");
    assert_eq!(out.status_of("failing"), "failed");
    let out = p.run(&[]);
    out.expect_code(1);
    let again = out.status("needs_input");
    assert_eq!(
        again["attempts"].as_array().unwrap().len(),
        2,
        "an error runs again"
    );
    assert_eq!(
        out.status("failing")["attempts"].as_array().unwrap().len(),
        1,
        "a failure is a verdict and is kept"
    );
}

#[test]
fn an_unreachable_llm_is_refused_before_anything_runs() {
    let p = llm_project();
    p.task("a.json", json!({"request": "r"}));
    let out = p.run(&["--llm-base-url", "http://127.0.0.1:9/v1"]);
    out.expect_code(2);
    assert!(
        out.stderr
            .contains("cannot reach the LLM at http://127.0.0.1:9/v1: ")
            && out.stderr.contains("Connection refused")
            && out.stderr.contains("check --llm-base-url"),
        "{}",
        out.stderr
    );
    assert!(!out.run_dir("proj").join("a").exists(), "no task ran");
}

#[test]
fn an_llm_that_goes_away_stops_the_run_from_starting_more_tasks() {
    let mock = MockLlm::start();
    mock.serve_all(finish("done"), std::time::Duration::from_millis(500));
    let p = llm_project();
    for name in ["a", "b", "c"] {
        p.task(
            &format!("{name}.json"),
            json!({"request": format!("task {name}")}),
        );
    }
    let url = mock.url();
    let run = p.start(&[
        "run",
        "tasks",
        "--llm-base-url",
        &url,
        "--eval",
        "none",
        "--jobs",
        "1",
        "--progress",
        "lines",
    ]);
    let dir = p.path().join("results/proj");
    assert!(crate::helpers::eventually(|| dir
        .join("a/status.json")
        .exists()));
    drop(mock);
    let out = run.wait();
    out.expect_code(1);
    let a = out.status("a");
    assert_eq!(a["status"], "error", "{a}");
    assert!(
        a["error"]
            .as_str()
            .unwrap()
            .contains(&format!("cannot reach the LLM at {url}")),
        "{a}"
    );
    assert_eq!(a["llm"]["retries"], 3, "{a}");
    assert!(
        out.stderr.contains("(every task would fail the same way)"),
        "{}",
        out.stderr
    );
    assert_eq!(out.row("b")["status"], "cancelled");
    assert_eq!(out.row("c")["status"], "cancelled");
}

#[test]
fn ufo_objects_come_from_the_task_files_own_project() {
    let p = Project::new();
    // A UFO project that itself lives under a folder named `tasks`.
    p.file("work/tasks/ufo_tasks/files/doc.txt", "the document\n");
    let plan = json!({"request": "read it", "object": "doc.txt", "actions": [
        {"action": "read_file", "parameters": {"path": "doc.txt"}, "expect": {"status": "success"}}]});
    p.file(
        "work/tasks/ufo_tasks/tasks/t.json",
        &serde_json::to_string(&plan).unwrap(),
    );
    let missing = json!({"request": "r", "object": "gone.docx", "actions": []});
    p.file(
        "work/tasks/ufo_tasks/tasks/missing.json",
        &serde_json::to_string(&missing).unwrap(),
    );
    let out = p.cmd(&["validate", "work/tasks/ufo_tasks/tasks"]);
    out.expect_code(2);
    assert!(
        out.stdout
            .contains("the object `gone.docx` is not found: looked for")
            && out.stdout.contains("ufo_tasks/files/gone.docx"),
        "{}",
        out.stdout
    );
    let out = p.cmd(&["run", "work/tasks/ufo_tasks/tasks", "--progress", "lines"]);
    out.expect_code(1);
    let dir = out.run_dir("ufo_tasks");
    assert_eq!(read_json(&dir.join("t/status.json"))["status"], "passed");
    assert_eq!(
        read_json(&dir.join("missing/status.json"))["status"],
        "error"
    );
    let plan = read_json(&dir.join("t/plan.json"));
    assert_eq!(plan["object"], "doc.txt");
    assert_eq!(
        std::fs::read_to_string(dir.join("t/files/doc.txt")).unwrap(),
        "the document\n"
    );
    // A changed object is a changed input: the result made from the old one runs again.
    p.file("work/tasks/ufo_tasks/files/doc.txt", "another document\n");
    let out = p.cmd(&["run", "work/tasks/ufo_tasks/tasks", "--progress", "lines"]);
    out.expect_code(1);
    assert!(
        out.stderr
            .contains("1 task re-run: its object file changed"),
        "{}",
        out.stderr
    );
    let record = read_json(&dir.join("t/status.json"));
    assert_eq!(record["attempts"].as_array().unwrap().len(), 2, "{record}");
}

#[test]
fn ufo_dataflow_files_are_read_as_step_plans() {
    // Running one is a desktop task (its `app`): see desktop_agents.
    let p = Project::new();
    p.task(
        "prefill/1 bad name.json",
        json!({"app": "word", "unique_id": "1", "task": "two files",
               "refined_steps": ["write a.txt", "write b.txt"]}),
    );
    let out = p.cmd(&["validate", "tasks"]);
    out.expect_code(0);
    assert!(out.stdout.contains("1 UfoDataflow"), "{}", out.stdout);
    assert!(!out.stdout.contains("unknown key"), "{}", out.stdout);
}

#[test]
fn ufo_files_are_read_as_ufo_writes_them() {
    let p = Project::new();
    p.task("real.json", shell_plan("r", &["true"]));
    p.file("tasks/tasks_status.json", r#"{"real": false}"#);
    p.file("tasks/python.json", "{\"task\": \"t\", \"close\": False}");
    p.file("tasks/comment.json", "// my task\n{\"task\": \"t\"}");
    p.task(
        "ui.json",
        json!({"request": "r", "actions": [{"action": "click_input", "parameters": {"label": "3"}}]}),
    );
    let out = p.cmd(&["validate", "tasks"]);
    out.expect_code(2);
    for needle in [
        "`False` is Python, not JSON (JSON writes false)",
        "JSON has no comments",
        "`click_input` has no parameter `label` (it takes: id, name, control_type, button, double)",
        "4 task files checked: 1 valid",
    ] {
        assert!(out.stdout.contains(needle), "{needle}: {}", out.stdout);
    }
}

#[test]
fn replaying_a_failure_cannot_pass() {
    let mock = MockLlm::start();
    mock.script(
        "w",
        vec![action(
            "write_file",
            json!({"path": "out.txt", "content": "wrong"}),
            "FINISH",
        )],
    );
    mock.judge("w", vec![verdict("no", "out.txt says wrong")]);
    mock.script(
        "r",
        vec![action(
            "write_file",
            json!({"path": "out.txt", "content": "right"}),
            "FINISH",
        )],
    );
    mock.judge("r", vec![verdict("yes", "out.txt is right")]);
    let p = llm_project();
    p.task(
        "wrong.json",
        json!({"request": format!("write it {}", marker("w"))}),
    );
    p.task(
        "right.json",
        json!({"request": format!("write it {}", marker("r"))}),
    );
    let out = run_with(&p, &mock, &[]);
    out.expect_code(1);
    assert_eq!(out.status_of("wrong"), "failed");
    let plan = read_json(&out.run_dir("proj").join("wrong/plan.json"));
    assert_eq!(plan["recorded"]["status"], "failed");
    // Replay the run's plans with no LLM at all.
    let out = p.cmd(&["run", "results/proj", "--progress", "lines"]);
    out.expect_code(1);
    let replay = out.run_dir("proj-replay");
    let wrong = read_json(&replay.join("wrong/status.json"));
    assert_eq!(wrong["status"], "failed", "{wrong}");
    assert!(
        wrong["error"]
            .as_str()
            .unwrap()
            .contains("the recording did not pass (failed"),
        "{wrong}"
    );
    let right = read_json(&replay.join("right/status.json"));
    assert_eq!(right["status"], "passed", "{right}");
    let md = std::fs::read_to_string(replay.join("right/output.md")).unwrap();
    assert!(md.contains("the recording passed (judged by llm"), "{md}");
}

#[test]
fn counting_keeps_every_task_in_the_denominator() {
    let p = Project::new();
    for name in ["a", "b"] {
        p.task(&format!("csv/{name}.json"), shell_plan("r", &["true"]));
    }
    // Overlapping paths: each file runs once.
    let out = p.cmd(&[
        "run",
        "tasks",
        "tasks/csv",
        "--progress",
        "lines",
        "--name",
        "both",
    ]);
    out.expect_code(0);
    assert_eq!(
        read_json(&out.run_dir("both").join("summary.json"))["totals"]["total"],
        2
    );
    // A task whose status.json is gone still counts.
    std::fs::remove_file(out.run_dir("both").join("csv/a/status.json")).unwrap();
    let report = p.cmd(&["report", "results/both"]);
    report.expect_code(1);
    let totals = read_json(&out.run_dir("both").join("summary.json"))["totals"].clone();
    assert_eq!(
        (totals["total"].as_u64(), totals["error"].as_u64()),
        (Some(2), Some(1))
    );
    // jobs = 0 in the config file is named as such.
    p.file("ufo-batch.toml", "[run]\njobs = 0\n");
    let out = p.run(&[]);
    out.expect_code(2);
    assert!(
        out.stderr
            .contains("[run] jobs in the config file must be at least 1"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_request_run_resumes_and_a_small_budget_is_shown_as_given() {
    let mock = MockLlm::start();
    mock.script("q", vec![finish("done")]);
    let p = llm_project();
    p.file(
        "ufo-batch.toml",
        "[llm]\nmodel = \"test-model\"\n[llm.prices.\"test-model\"]\ninput = 1.0\noutput = 2.0\n",
    );
    let url = mock.url();
    let request = format!("say hi {}", marker("q"));
    let args = [
        "run",
        "--request",
        &request,
        "--llm-base-url",
        &url,
        "--eval",
        "none",
        "--max-cost",
        "0.005",
        "--progress",
        "lines",
    ];
    let out = p.cmd(&args);
    out.expect_code(0);
    let again = p.cmd(&args);
    again.expect_code(0);
    assert!(
        again.stderr.contains("1 already passed and is kept"),
        "{}",
        again.stderr
    );
    mock.script("q", vec![finish("done"), finish("done")]);
    let r2 = format!("again {}", marker("q"));
    let out = p.cmd(&[
        "run",
        "--request",
        &request,
        "--request",
        &r2,
        "--llm-base-url",
        &url,
        "--eval",
        "none",
        "--max-cost",
        "0.005",
        "--jobs",
        "1",
        "--progress",
        "lines",
    ]);
    assert!(
        out.stderr.contains("the cost budget of $0.005 is reached"),
        "{}",
        out.stderr
    );
}
