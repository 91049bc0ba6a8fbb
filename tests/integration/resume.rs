//! Re-running the same command resumes the run dir: final results are kept, `--rerun-failed`
//! re-runs what did not pass, an edited task file runs again, `--fresh` starts over.

use serde_json::json;

use crate::helpers::{Project, shell_plan};

fn project() -> Project {
    let p = Project::new();
    p.task("pass.json", shell_plan("pass", &["echo ok"])).task(
        "fail.json",
        json!({"request": "f", "actions": [], "evaluate": [{"type": "file_exists", "path": "x"}]}),
    );
    p
}

fn attempts(out: &crate::helpers::Output, id: &str) -> usize {
    out.status(id)["attempts"].as_array().unwrap().len()
}

#[test]
fn a_second_run_keeps_final_results() {
    let p = project();
    p.run(&[]).expect_code(1);
    let out = p.run(&[]);
    out.expect_code(1);
    assert!(
        out.stderr.contains(
            "2 already have a result and are kept: 1 passed (--fresh runs them again), 1 did not (--rerun-failed runs those)"
        ),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains("2 tasks: 1 passed, 1 failed (2 kept from earlier)"),
        "{}",
        out.stderr
    );
    assert_eq!(attempts(&out, "pass"), 1);
    assert_eq!(attempts(&out, "fail"), 1);
    let run = crate::helpers::read_json(&out.run_dir("proj").join("run.json"));
    assert_eq!(run["invocation"], 2);
}

#[test]
fn rerun_failed_runs_only_what_did_not_pass() {
    let p = project();
    p.run(&[]).expect_code(1);
    let out = p.run(&["--rerun-failed"]);
    assert_eq!(attempts(&out, "pass"), 1);
    assert_eq!(attempts(&out, "fail"), 2);
    let status = out.status("fail");
    assert_eq!(status["attempts"][0]["status"], "failed");
    assert_eq!(status["attempts"][1]["status"], "failed");
    // The first attempt's files are kept.
    assert!(
        p.path()
            .join("results/proj/fail/attempts/1/output.md")
            .exists()
    );
    assert!(
        p.path()
            .join("results/proj/fail/attempts/1/workspace")
            .exists()
    );
}

#[test]
fn an_edited_task_runs_again_and_fresh_starts_over() {
    let p = project();
    p.run(&[]).expect_code(1);
    p.task("fail.json", json!({"request": "f", "actions": [{"action": "write_file", "parameters": {"path": "x", "content": ""}}],
                              "evaluate": [{"type": "file_exists", "path": "x"}]}));
    let out = p.run(&[]);
    out.expect_code(0);
    assert_eq!(out.status_of("fail"), "passed");
    assert_eq!(attempts(&out, "fail"), 2);
    // A half-deleted run dir that a killed `--fresh` left behind.
    p.file("results/.old.deleting-1-2/x/status.json", "{}");
    let out = p.run(&["--fresh"]);
    out.expect_code(0);
    assert_eq!(attempts(&out, "pass"), 1);
    assert_eq!(attempts(&out, "fail"), 1);
    let mut left: Vec<String> = std::fs::read_dir(p.path().join("results"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(
        left,
        [".proj.lock", "proj"],
        "the old run dir and the leftover are gone (the run's lock file stays)"
    );
}

#[test]
fn fresh_refused_before_it_starts_keeps_the_old_results() {
    let p = project();
    p.run(&[]).expect_code(1);
    // Refused before anything runs: no model can be reached.
    let out = p.run(&[
        "--fresh",
        "--model",
        "gpt-4o",
        "--llm-base-url",
        "http://127.0.0.1:9/v1",
    ]);
    out.expect_code(2);
    let left: Vec<String> = std::fs::read_dir(p.path().join("results"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.contains("deleting"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
    // The old results are still there, and a run resumes them.
    let out = p.run(&[]);
    out.expect_code(1);
    assert_eq!(attempts(&out, "pass"), 1);
    let run: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(p.path().join("results/proj/run.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(run["invocation"], 2, "{run}");
}

#[test]
fn a_folder_that_is_not_a_run_is_never_touched() {
    let p = project();
    p.file("results/proj/precious.txt", "keep me");
    let out = p.run(&["--fresh"]);
    out.expect_code(2);
    assert!(
        out.stderr.contains("is not a ufo-batch run folder"),
        "{}",
        out.stderr
    );
    assert!(p.path().join("results/proj/precious.txt").exists());
}

#[test]
fn a_task_file_edited_or_removed_after_the_run_started_is_an_error_not_a_stale_run() {
    let p = Project::new();
    p.task("a.json", shell_plan("first", &["sleep 2"]))
        .task("b.json", shell_plan("second", &["echo old"]))
        .task("c.json", shell_plan("third", &["echo gone"]));
    let run = p.start(&["run", "tasks", "--jobs", "1"]);
    let dir = p.path().join("results/proj");
    assert!(crate::helpers::eventually(|| dir
        .join("a/status.json")
        .exists()));
    // The batch was loaded and checked before `a` started; `b` and `c` wait.
    p.task("b.json", shell_plan("second, edited", &["echo new"]));
    std::fs::remove_file(p.path().join("tasks/c.json")).unwrap();
    let out = run.wait();
    out.expect_code(1);
    assert_eq!(out.status_of("a"), "passed");
    let b = out.status("b");
    assert_eq!(b["status"], "error");
    assert!(
        b["error"]
            .as_str()
            .unwrap()
            .contains("changed after the run started; run again to use the new version"),
        "{b}"
    );
    assert_eq!(b["attempts"].as_array().unwrap().len(), 0);
    let c = out.status("c");
    assert_eq!(c["status"], "error");
    assert!(
        c["error"]
            .as_str()
            .unwrap()
            .starts_with("its task file cannot be read again"),
        "{c}"
    );
    // Run again: the edited task runs as it is now, and the removed one is no longer
    // part of the batch.
    let again = p.run(&["--jobs", "1"]);
    again.expect_code(0);
    assert_eq!(again.status_of("b"), "passed");
    assert_eq!(again.status("b")["request"], "second, edited");
    assert!(
        again.stderr.contains("2 tasks: 2 passed"),
        "{}",
        again.stderr
    );
}

#[test]
fn a_repetition_whose_task_file_changed_stays_a_repetition_of_its_task() {
    let p = Project::new();
    p.task("a.json", shell_plan("first", &["sleep 2"]))
        .task("b.json", shell_plan("second", &["echo old"]));
    let run = p.start(&["run", "tasks", "--jobs", "1", "--repeat", "2"]);
    let dir = p.path().join("results/proj");
    assert!(crate::helpers::eventually(|| dir
        .join("a/rep-1/status.json")
        .exists()));
    p.task("b.json", shell_plan("second, edited", &["echo new"]));
    let out = run.wait();
    out.expect_code(1);
    for n in [1, 2] {
        let b = out.status(&format!("b/rep-{n}"));
        assert_eq!(b["status"], "error", "{b}");
        assert_eq!(b["repeat"], n, "{b}");
    }
    let repeats = &out.summary()["repeats"];
    assert_eq!(repeats["totals"]["tasks"], 2, "{repeats}");
    assert_eq!(repeats["tasks"][1]["id"], "b", "{repeats}");
    // The next run runs the edited task's repetitions, still as repetitions.
    let again = p.run(&["--jobs", "1", "--repeat", "2"]);
    again.expect_code(0);
    assert_eq!(again.status("b/rep-2")["repeat"], 2);
    assert_eq!(again.summary()["repeats"]["totals"]["pass_at_1"], 1.0);
}
