//! Run dirs tampered with after their run (by hand, or by a task that left something in
//! its workspace), then read back by `run`, `report`, `merge` and `compare`: links out
//! of the run dir are never written through, a FIFO never blocks, a record counts only
//! in its own folder, and nothing reads a run dir a runner is writing.

#![cfg(unix)]

use std::os::unix::fs::symlink;
use std::path::Path;
use std::time::Duration;

use crate::helpers::{Project, eventually, read_json, shell_plan};

fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: mkfifo on a fresh path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}

/// A victim folder outside the run dir, with one file in it.
fn victim(p: &Project, name: &str) -> std::path::PathBuf {
    let dir = p.path().join(name);
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(dir.join("output.md"), "precious").unwrap();
    std::fs::write(dir.join("status.json"), "keep").unwrap();
    dir
}

fn untouched(dir: &Path) {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["output.md", "status.json"], "{}", dir.display());
    assert_eq!(
        std::fs::read_to_string(dir.join("output.md")).unwrap(),
        "precious"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("status.json")).unwrap(),
        "keep"
    );
}

#[test]
fn a_task_folder_that_links_out_is_never_written_through() {
    let p = Project::new();
    p.task("a.json", shell_plan("a", &["true"]));
    p.task("b/c.json", shell_plan("c", &["true"]));
    p.run(&[]).expect_code(0);
    let run = p.path().join("results/proj");
    let outside = victim(&p, "victim");
    // A parent folder of a task, and (below) a task folder itself.
    std::fs::remove_dir_all(run.join("b")).unwrap();
    symlink(&outside, run.join("b")).unwrap();

    let report = p.cmd(&["report", "results/proj"]);
    untouched(&outside);
    let text = format!("{}{}", report.stdout, report.stderr);
    assert!(text.contains("symbolic link"), "{text}");
    let summary = read_json(&run.join("summary.json"));
    assert_eq!(summary["totals"]["error"], 1, "{summary}");
    let reason = summary["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] == "b/c")
        .map(|t| t["error"].to_string())
        .unwrap();
    assert!(reason.contains("symbolic link"), "{reason}");

    // A resume removes the link (not what it leads to) and runs the task at home.
    std::fs::remove_file(run.join("b")).unwrap();
    std::fs::create_dir(run.join("b")).unwrap();
    symlink(&outside, run.join("b/c")).unwrap();
    let again = p.run(&[]);
    again.expect_code(0);
    untouched(&outside);
    assert!(again.stderr.contains("symbolic link"), "{}", again.stderr);
    let meta = std::fs::symlink_metadata(run.join("b/c")).unwrap();
    assert!(meta.is_dir(), "a real folder now");
    assert_eq!(again.status_of("b/c"), "passed");
}

#[test]
fn merge_never_writes_through_a_link_nor_opens_a_fifo() {
    let p = Project::new();
    // A task that leaves a FIFO in its workspace; a task whose folder holds another's.
    p.task("fifo.json", shell_plan("m", &["mkfifo pipe"]));
    p.task("b.json", shell_plan("b", &["true"]));
    p.task("b/c.json", shell_plan("c", &["true"]));
    p.run(&[]).expect_code(0);
    let run = p.path().join("results/proj");
    assert!(run.join("fifo/workspace/pipe").exists());
    let outside = victim(&p, "victim");
    std::fs::remove_dir_all(run.join("b/c")).unwrap();
    symlink(&outside, run.join("b/c")).unwrap();

    let merged = p.cmd_within(
        &["merge", "results/merged", "results/proj"],
        Duration::from_secs(60),
    );
    untouched(&outside);
    assert!(
        merged
            .stdout
            .contains("not copied (not a regular file: a FIFO, socket or device)"),
        "{}",
        merged.stdout
    );
    let out = p.path().join("results/merged");
    assert!(std::fs::symlink_metadata(out.join("b/c")).unwrap().is_dir());
    let status = read_json(&out.join("b/c/status.json"));
    assert_eq!(status["status"], "error", "{status}");
    assert_eq!(read_json(&out.join("fifo/status.json"))["status"], "passed");
}

#[test]
fn a_record_counts_only_in_its_own_folder() {
    let p = Project::new();
    p.task("a.json", shell_plan("a", &["true"]));
    p.task("b.json", shell_plan("b", &["false"]));
    p.run(&[]).expect_code(1);
    let run = p.path().join("results/proj");
    std::fs::copy(run.join("a/status.json"), run.join("b/status.json")).unwrap();
    // A merge made inside the run dir is no part of it either.
    p.cmd(&["merge", "results/proj/inner", "results/proj"]);

    let report = p.cmd(&["report", "results/proj"]);
    let summary = read_json(&run.join("summary.json"));
    assert_eq!(summary["totals"]["total"], 2, "{summary}");
    assert_eq!(summary["totals"]["passed"], 1, "{summary}");
    assert_eq!(summary["totals"]["error"], 1, "{summary}");
    let b = summary["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] == "b")
        .unwrap()
        .clone();
    assert!(
        b["error"]
            .as_str()
            .unwrap()
            .contains("holds the record of task `a`"),
        "{b}"
    );
    assert!(report.stderr.contains("not counted") || report.stdout.contains("not counted"));
    let csv = std::fs::read_to_string(run.join("summary.csv")).unwrap();
    assert_eq!(
        csv.lines().filter(|l| l.starts_with("a,")).count(),
        1,
        "{csv}"
    );
}

#[test]
fn merge_and_compare_wait_for_no_runner_but_refuse_a_live_run() {
    let p = Project::new();
    p.task("slow.json", shell_plan("s", &["sleep 30"]));
    let live = p.start(&["run", "tasks", "--progress", "lines"]);
    let running = p.path().join("results/proj/slow/status.json");
    assert!(eventually(
        || std::fs::read_to_string(&running).is_ok_and(|s| s.contains("\"running\""))
    ));
    for args in [
        &["merge", "results/m", "results/proj"][..],
        &["compare", "results/proj", "results/proj"],
    ] {
        let out = p.cmd(args);
        out.expect_code(2);
        assert!(out.stderr.contains("is running in"), "{}", out.stderr);
    }
    assert!(!p.path().join("results/m").exists());
    drop(live);
}

#[test]
fn a_replay_counts_a_plan_it_cannot_read_and_report_keeps_a_trajectory_it_cannot_read() {
    let p = Project::new();
    p.task("a.json", shell_plan("a", &["echo one"]));
    p.task("b.json", shell_plan("b", &["echo two"]));
    p.run(&[]).expect_code(0);
    let run = p.path().join("results/proj");
    std::fs::remove_file(run.join("b/plan.json")).unwrap();
    mkfifo(&run.join("b/plan.json"));
    let replay = p.cmd_within(
        &[
            "run",
            "results/proj",
            "--out",
            "replays",
            "--progress",
            "lines",
        ],
        Duration::from_secs(60),
    );
    replay.expect_code(1);
    let summary = read_json(&p.path().join("replays/proj-replay/summary.json"));
    assert_eq!(summary["totals"]["total"], 2, "{summary}");
    assert_eq!(summary["totals"]["error"], 1, "{summary}");

    let before = std::fs::read_to_string(run.join("a/output.md")).unwrap();
    std::fs::remove_file(run.join("a/response.log")).unwrap();
    mkfifo(&run.join("a/response.log"));
    let report = p.cmd_within(&["report", "results/proj"], Duration::from_secs(60));
    assert_eq!(
        std::fs::read_to_string(run.join("a/output.md")).unwrap(),
        before
    );
    let text = format!("{}{}", report.stdout, report.stderr);
    assert!(text.contains("left as they are"), "{text}");
}

#[test]
fn compare_counts_the_whole_batch_of_a_run_cut_short() {
    let p = Project::new();
    for id in ["a", "b", "c"] {
        p.task(&format!("{id}.json"), shell_plan(id, &["true"]));
    }
    p.run(&[]).expect_code(0);
    let base = p.path().join("results/proj");
    let cut = p.path().join("results/cut");
    let copied = std::process::Command::new("cp")
        .arg("-a")
        .arg(&base)
        .arg(&cut)
        .status()
        .unwrap();
    assert!(copied.success());
    // As a runner killed mid-run leaves it: b never started, c was running.
    std::fs::remove_dir_all(cut.join("b")).unwrap();
    let mut c = read_json(&cut.join("c/status.json"));
    c["status"] = "running".into();
    std::fs::write(cut.join("c/status.json"), c.to_string()).unwrap();
    let mut run = read_json(&cut.join("run.json"));
    run["state"] = "running".into();
    std::fs::write(cut.join("run.json"), run.to_string()).unwrap();

    let out = p.cmd(&["compare", "results/proj", "results/cut", "--json"]);
    out.expect_code(1);
    let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(v["b"]["tasks"], 3, "{v}");
    let regressions: Vec<(String, String)> = v["regressions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["id"].as_str().unwrap().to_string(),
                r["reason"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    assert_eq!(regressions.len(), 2, "{regressions:?}");
    assert!(regressions[0].0 == "b" && regressions[0].1.starts_with("not started"));
    assert!(regressions[1].0 == "c" && regressions[1].1.starts_with("interrupted"));
}

/// A `selection.json` that cannot be read leaves unknown which tasks the run dir answers
/// for: `report` says so and counts the records found; `compare` refuses rather than
/// compare a batch it cannot tell whole.
#[test]
fn a_selection_that_cannot_be_read_is_told_and_compare_refuses() {
    let p = Project::new();
    p.task("a.json", shell_plan("a", &["true"]));
    p.task("b.json", shell_plan("b", &["true"]));
    p.run(&[]).expect_code(0);
    let run = p.path().join("results/proj");
    std::fs::write(run.join("selection.json"), "{\"tasks\": [\"a\", ").unwrap();

    let report = p.cmd(&["report", "results/proj"]);
    report.expect_code(1);
    assert!(
        report
            .stderr
            .contains("selection.json: it is not the JSON a run writes"),
        "{}",
        report.stderr
    );
    assert_eq!(read_json(&run.join("summary.json"))["totals"]["passed"], 2);

    let compare = p.cmd(&["compare", "results/proj", "results/proj"]);
    assert_ne!(compare.code, 0, "{}", compare.stdout);
    assert!(
        compare.stderr.contains("selection.json"),
        "{}",
        compare.stderr
    );
}

/// Numbers and names read back from a run dir are input like any other: a duration,
/// a cost or a score out of its range makes that record unreadable (said, counted as
/// an error), never `inf s` or a negative cost; a run name that is no folder name
/// never names the export's folder.
#[test]
fn numbers_and_names_read_back_are_checked_like_any_input() {
    let p = Project::new();
    p.task("a.json", shell_plan("a", &["true"]));
    p.task("b.json", shell_plan("b", &["true"]));
    p.task("c.json", shell_plan("c", &["true"]));
    p.run(&[]).expect_code(0);
    let run = p.path().join("results/proj");
    let tamper = |id: &str, key: &str, value: serde_json::Value| {
        let path = run.join(id).join("status.json");
        let mut v = read_json(&path);
        v[key] = value;
        std::fs::write(&path, v.to_string()).unwrap();
    };
    tamper("a", "duration_s", serde_json::json!(1e308));
    tamper("b", "cost_usd", serde_json::json!(-1e308));
    let report = p.cmd(&["report", "results/proj"]);
    let text = format!("{}{}", report.stdout, report.stderr);
    assert!(
        text.contains("a duration of 1e308 is not a number from 0 to"),
        "{text}"
    );
    assert!(
        text.contains("a cost of -1e308 is not a number from 0 to"),
        "{text}"
    );
    let md = std::fs::read_to_string(run.join("report.md")).unwrap();
    assert!(!md.contains("inf") && !md.contains("-$"), "{md}");
    let summary = read_json(&run.join("summary.json"));
    assert_eq!(summary["totals"]["passed"], 1, "{summary}");
    assert_eq!(summary["totals"]["error"], 2, "{summary}");

    // The name run.json gives is not trusted as a folder name.
    let p = Project::new();
    p.task("a.json", shell_plan("a", &["true"]));
    p.run(&[]).expect_code(0);
    let run_json = p.path().join("results/proj/run.json");
    let mut v = read_json(&run_json);
    v["name"] = serde_json::json!("evil\n\u{1b}]0;owned\u{7}../x");
    std::fs::write(&run_json, v.to_string()).unwrap();
    let out = p.cmd(&["export", "--harbor", "exported", "results/proj"]);
    out.expect_code(0);
    let names: Vec<String> = std::fs::read_dir(p.path().join("exported"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["proj"], "the run folder's own name");
    for c in ['\u{1b}', '\u{7}'] {
        assert!(
            !out.stdout.contains(c) && !out.stderr.contains(c),
            "{}{}",
            out.stdout,
            out.stderr
        );
    }
}
