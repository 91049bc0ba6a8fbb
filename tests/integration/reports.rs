//! CI reporting: report.md and compare's markdown (snapshots of fixed fixture run dirs),
//! junit.xml parsed back, compare's exit codes, `report` after a crash, repeats and
//! flakiness, and the one-line JSON summary.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::json;

use crate::helpers::{Project, read_json, run_binary};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/runs")
        .join(name)
}

/// A writable copy of a fixture run dir.
fn copy_fixture(p: &Project, name: &str) -> PathBuf {
    let to = p.path().join(name);
    for entry in walkdir::WalkDir::new(fixture(name)).into_iter().flatten() {
        let rel = entry.path().strip_prefix(fixture(name)).unwrap();
        if entry.file_type().is_dir() {
            std::fs::create_dir_all(to.join(rel)).unwrap();
        } else {
            std::fs::copy(entry.path(), to.join(rel)).unwrap();
        }
    }
    to
}

#[test]
fn report_md_of_a_fixture_run() {
    let p = Project::new();
    let dir = copy_fixture(&p, "current");
    let out = p.cmd(&["report", "current"]);
    out.expect_code(0);
    assert!(
        out.stdout.starts_with(
            "re-rendered current (6 tasks, 6 trajectories): 3 passed, 1 failed, 1 error, 1 timeout"
        ),
        "{}",
        out.stdout
    );
    insta::assert_snapshot!(
        "report_md",
        std::fs::read_to_string(dir.join("report.md")).unwrap()
    );
    // The pages, rendered from the same records (escaping writes `/` as `&#x2f;`).
    insta::assert_snapshot!(
        "report_html",
        std::fs::read_to_string(dir.join("report.html")).unwrap()
    );
    insta::assert_snapshot!(
        "task_html",
        std::fs::read_to_string(dir.join("csv/sum/task.html")).unwrap()
    );
    // report also rebuilt the other files from the records.
    assert_eq!(read_json(&dir.join("summary.json"))["totals"]["total"], 6);
    assert!(dir.join("csv/sum/output.md").exists());
    assert_eq!(read_json(&dir.join("run.json"))["totals"]["passed"], 3);
}

#[test]
fn compare_shows_regressions_first_and_exits_1() {
    let out = run_binary(
        Path::new(env!("CARGO_MANIFEST_DIR")),
        &[
            "compare",
            "tests/fixtures/runs/base",
            "tests/fixtures/runs/current",
        ],
        &[],
    );
    out.expect_code(1);
    insta::assert_snapshot!("compare_md", out.stdout);
}

#[test]
fn compare_writes_its_page_with_links_to_the_task_pages_of_run_b() {
    let p = Project::new();
    let page = p.path().join("out/compare.html");
    std::fs::create_dir_all(page.parent().unwrap()).unwrap();
    let out = run_binary(
        Path::new(env!("CARGO_MANIFEST_DIR")),
        &[
            "compare",
            "tests/fixtures/runs/base",
            "tests/fixtures/runs/current",
            "--html",
            page.to_str().unwrap(),
        ],
        &[],
    );
    out.expect_code(1);
    let html = std::fs::read_to_string(&page)
        .unwrap()
        .replace("&#x2f;", "/");
    let regressions = html
        .find("<h2>Regressions</h2>")
        .expect("a regressions table");
    let fixes = html.find("<h2>Fixes</h2>").unwrap_or(usize::MAX);
    assert!(regressions < fixes, "regressions first");
    // The link from the page's folder to run B's task page resolves.
    let href = html
        .split("href=\"")
        .nth(1)
        .and_then(|s| s.split('"').next())
        .unwrap()
        .to_string();
    assert!(href.ends_with("/task.html"), "{href}");
    let target = page.parent().unwrap().join(&href);
    assert!(
        target.parent().unwrap().exists(),
        "{} does not resolve",
        target.display()
    );
    assert!(html.contains("<td>B</td>"), "both runs' totals");
}

#[test]
fn compare_without_regressions_exits_0_and_writes_json() {
    let p = Project::new();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let cur = fixture("current").display().to_string();
    let file = p.path().join("cmp.json").display().to_string();
    let out = run_binary(
        root,
        &["compare", &cur, &cur, "--json", "--out", &file],
        &[],
    );
    out.expect_code(0);
    let v = read_json(Path::new(&file));
    assert_eq!(v["regressions"], json!([]));
    assert_eq!(v["unchanged"], 6);
    let base = fixture("base").display().to_string();
    let out = run_binary(root, &["compare", &base, &cur, "--json"], &[]);
    out.expect_code(1);
    let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(v["regressions"][0]["id"], "csv/sum");
    assert_eq!(v["fixes"][0]["id"], "judge/poem");
    assert_eq!(v["new"][0]["id"], "newbie");
    assert_eq!(v["missing"][0]["id"], "gone");
    assert_eq!(
        v["b"]["cost_usd"],
        serde_json::Value::Null,
        "newbie's cost is unknown"
    );
    let bad = run_binary(root, &["compare", &base, "/nonexistent"], &[]);
    bad.expect_code(2);
    assert!(
        bad.stderr
            .contains("/nonexistent is not a ufo-batch run dir"),
        "{}",
        bad.stderr
    );
}

#[test]
fn compare_uses_pass_rates_of_repeats() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = run_binary(
        root,
        &[
            "compare",
            "tests/fixtures/runs/repeats-a",
            "tests/fixtures/runs/repeats-b",
        ],
        &[],
    );
    out.expect_code(1);
    insta::assert_snapshot!("compare_repeats_md", out.stdout);
}

#[test]
fn junit_parses_back_with_one_testcase_per_task() {
    let p = Project::new();
    p.task("ok/a.json", crate::helpers::shell_plan("a", &["true"]))
        .task("ok/b.json", json!({"request": "b", "actions": [], "evaluate": [{"type": "file_exists", "path": "missing.txt"}]}))
        .task("top.json", json!({"request": "c", "timeout": 1, "actions": [{"action": "execute_command", "parameters": {"command": "sleep 10"}}]}))
        .file("tasks/broken.json", "{");
    let out = p.run(&[]);
    out.expect_code(1);
    let xml = std::fs::read_to_string(out.run_dir("proj").join("junit.xml")).unwrap();
    let report = quick_junit::Report::deserialize_from_str(&xml).unwrap();
    assert_eq!((report.tests, report.failures, report.errors), (4, 1, 2));
    let suite = &report.test_suites[0];
    let find = |name: &str| {
        suite
            .test_cases
            .iter()
            .find(|c| c.name.as_str() == name)
            .unwrap()
    };
    assert_eq!(find("a").classname.as_ref().map(|c| c.as_str()), Some("ok"));
    assert!(matches!(
        find("a").status,
        quick_junit::TestCaseStatus::Success { .. }
    ));
    match &find("b").status {
        quick_junit::TestCaseStatus::NonSuccess { kind, message, .. } => {
            assert_eq!(*kind, quick_junit::NonSuccessKind::Failure);
            assert!(
                message
                    .as_ref()
                    .unwrap()
                    .as_str()
                    .contains("`missing.txt` does not exist")
            );
        }
        other => panic!("{other:?}"),
    }
    match &find("top").status {
        quick_junit::TestCaseStatus::NonSuccess { kind, ty, .. } => {
            assert_eq!(*kind, quick_junit::NonSuccessKind::Error);
            assert_eq!(ty.as_ref().unwrap().as_str(), "timeout");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        find("top").classname.as_ref().map(|c| c.as_str()),
        Some("proj")
    );
    assert!(find("top").time.unwrap().as_secs_f64() >= 1.0);
}

#[test]
fn repeats_measure_pass_rates_and_flakiness() {
    let p = Project::new();
    p.task("flaky.json", json!({"request": "write the repeat number", "actions": [
            {"action": "execute_command", "parameters": {"command": "echo $UFO_BATCH_REPEAT > n.txt"}}],
            "evaluate": [{"type": "command", "run": "test $(cat n.txt) -ne 2"}]}))
        .task("steady.json", crate::helpers::shell_plan("steady", &["true"]));
    let out = p.run(&["--repeat", "3"]);
    out.expect_code(1);
    assert_eq!(out.status_of("flaky/rep-1"), "passed");
    assert_eq!(out.status_of("flaky/rep-2"), "failed");
    assert_eq!(out.status_of("flaky/rep-3"), "passed");
    assert_eq!(out.status("flaky/rep-2")["repeat"], 2);
    let summary = out.summary();
    assert_eq!(summary["totals"]["total"], 6);
    let repeats = &summary["repeats"];
    assert_eq!(repeats["totals"]["flaky"], json!(["flaky"]));
    assert_eq!(repeats["totals"]["pass_at_k"], 1.0);
    assert_eq!(repeats["totals"]["pass_all_k"], 0.5);
    let flaky = &repeats["tasks"][0];
    assert_eq!(
        (
            flaky["id"].as_str(),
            flaky["passed"].as_u64(),
            flaky["runs"].as_u64()
        ),
        (Some("flaky"), Some(2), Some(3))
    );
    let md = out.task_file(".", "report.md");
    assert!(md.contains("| flaky | 2/3 | 67% | ⚠️ flaky |"), "{md}");
    // Re-rendered, the run is the same: its batch is the repetitions, not the task files
    // (it once counted each file as a task with no result).
    let report = p.cmd(&["report", "results/proj"]);
    report.expect_code(0);
    assert!(
        report.stdout.starts_with(
            "re-rendered results/proj (6 tasks, 6 trajectories): 5 passed, 1 failed, 0 error"
        ),
        "{}",
        report.stdout
    );
    assert!(!report.stderr.contains("no result"), "{}", report.stderr);
    assert_eq!(out.summary()["totals"]["total"], 6);
    // A repetition with no result is still one of its task's runs, not a task of its own.
    std::fs::remove_dir_all(p.path().join("results/proj/steady/rep-3")).unwrap();
    p.cmd(&["report", "results/proj"]);
    let summary = out.summary();
    let ids: Vec<&str> = summary["repeats"]["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["flaky", "steady"], "{summary}");
    assert_eq!(summary["repeats"]["tasks"][1]["runs"], 3, "{summary}");
    assert_eq!(summary["totals"]["error"], 1, "{summary}");
    // A second run compared with the first: per-task pass rates.
    let again = p.run(&["--repeat", "3", "--name", "again"]);
    again.expect_code(1);
    let cmp = p.cmd(&["compare", "results/proj", "results/again"]);
    cmp.expect_code(0);
    assert!(cmp.stdout.contains("**No regressions.**"), "{}", cmp.stdout);
}

#[test]
fn a_task_whose_file_is_gone_is_not_counted_again_by_report_or_compare() {
    let p = Project::new();
    p.task("a.json", crate::helpers::shell_plan("a", &["true"]))
        .task("b.json", crate::helpers::shell_plan("b", &["false"]))
        .task("c.json", crate::helpers::shell_plan("c", &["true"]));
    p.run(&[]).expect_code(1);
    p.cmd(&["report", "results/proj"]).expect_code(0);
    std::fs::remove_file(p.path().join("tasks/b.json")).unwrap();
    // The run is now a and c; b's folder is left from before.
    let out = p.run(&[]);
    out.expect_code(0);
    let totals =
        |p: &Project| read_json(&p.path().join("results/proj/summary.json"))["totals"].clone();
    assert_eq!(totals(&p)["total"], 2);
    let report = p.cmd(&["report", "results/proj"]);
    report.expect_code(0);
    assert!(
        report
            .stdout
            .starts_with("re-rendered results/proj (2 tasks"),
        "{}",
        report.stdout
    );
    assert_eq!(totals(&p)["total"], 2);
    assert_eq!(totals(&p)["failed"], 0);
    let cmp = p.cmd(&["compare", "results/proj", "results/proj"]);
    assert!(cmp.stdout.contains("| tasks | 2 | 2 |"), "{}", cmp.stdout);
}

#[test]
fn summary_json_is_one_line_on_stdout() {
    let p = Project::new();
    p.task("a.json", crate::helpers::shell_plan("a", &["true"]));
    let out = p.run(&["--summary-json"]);
    out.expect_code(0);
    assert_eq!(out.stdout.lines().count(), 1);
    let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(
        (
            v["total"].as_u64(),
            v["passed"].as_u64(),
            v["exit_code"].as_u64()
        ),
        (Some(1), Some(1), Some(0))
    );
    assert_eq!(v["summary"], "results/proj/summary.json");
    assert!(Path::new(&p.path().join("results/proj/report.md")).exists());
}

/// A project whose run of three one-command plans passed, and its run dir.
fn three_passed_tasks() -> (Project, PathBuf) {
    let p = Project::new();
    for i in 0..3 {
        p.task(
            &format!("t{i}.json"),
            crate::helpers::shell_plan("t", &["true"]),
        );
    }
    p.run(&[]).expect_code(0);
    let dir = p.path().join("results/proj");
    (p, dir)
}

#[test]
fn report_rebuilds_a_run_that_crashed() {
    let (p, dir) = three_passed_tasks();
    // As after a crash: the run-level files are gone.
    for f in [
        "summary.json",
        "summary.csv",
        "report.md",
        "junit.xml",
        "tasks_status.json",
    ] {
        std::fs::remove_file(dir.join(f)).unwrap();
    }
    p.cmd(&["report", "results/proj"]).expect_code(0);
    assert_eq!(read_json(&dir.join("summary.json"))["totals"]["passed"], 3);
    assert_eq!(
        read_json(&dir.join("tasks_status.json")),
        json!({"t0": true, "t1": true, "t2": true})
    );
    assert!(
        std::fs::read_to_string(dir.join("report.md"))
            .unwrap()
            .starts_with("# ufo-batch: proj")
    );
}

#[test]
fn report_refuses_fifos_and_devices_in_place_of_a_runs_files_without_blocking() {
    let (p, dir) = three_passed_tasks();
    let fifo = |path: &std::path::Path| {
        std::fs::remove_file(path).unwrap();
        let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo on a path just freed.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    };
    // A FIFO with no writer for a trajectory, /dev/zero for an evaluation, and a FIFO for
    // a task's record: opening or reading any of them the usual way never returns.
    fifo(&dir.join("t0/response.log"));
    std::fs::remove_file(dir.join("t0/evaluation.log")).ok();
    std::os::unix::fs::symlink("/dev/zero", dir.join("t0/evaluation.log")).unwrap();
    fifo(&dir.join("t1/status.json"));
    let out = p.cmd_within(&["report", "results/proj"], Duration::from_secs(60));
    assert!(
        out.stderr
            .contains("t1/status.json: it is a FIFO, not a regular file"),
        "{}",
        out.stderr
    );
    let summary = read_json(&dir.join("summary.json"));
    assert_eq!(summary["totals"]["passed"], 2, "{summary}");
    assert!(dir.join("t0/task.html").is_file());
}

#[test]
fn report_waits_for_a_live_runner_and_tells_a_killed_ones_tasks_as_unfinished() {
    let p = Project::new();
    for i in 0..3 {
        p.task(
            &format!("t{i}.json"),
            json!({"request": "r", "actions": [{"action": "execute_command",
                   "parameters": {"command": "sleep 30"}}]}),
        );
    }
    let run = p.start(&["run", "tasks", "--jobs", "1", "--progress", "lines"]);
    let started = p.path().join("results/proj/t0/status.json");
    assert!(crate::helpers::eventually(|| started.is_file()));
    // While the runner works, its files are its own.
    let busy = p.cmd(&["report", "results/proj"]);
    busy.expect_code(2);
    assert!(
        busy.stderr.contains("is running in") && busy.stderr.contains("once it has ended"),
        "{}",
        busy.stderr
    );
    run.signal(libc::SIGKILL);
    let _ = run.wait_within(Duration::from_secs(10));
    // Killed: nothing runs, nothing failed; the three are unfinished, and say why.
    let out = p.cmd(&["report", "results/proj"]);
    out.expect_code(0);
    assert!(
        out.stdout
            .contains("0 passed, 0 failed, 0 error, 0 timeout, 0 cancelled, 3 unfinished"),
        "{}",
        out.stdout
    );
    let dir = p.path().join("results/proj");
    let csv = std::fs::read_to_string(dir.join("summary.csv")).unwrap();
    assert!(
        csv.lines()
            .skip(1)
            .all(|row| !row.contains(",running,") && !row.contains(",error,")),
        "{csv}"
    );
    assert!(csv.contains("interrupted: the runner stopped"), "{csv}");
    assert!(csv.contains("not started: the runner stopped"), "{csv}");
    assert_eq!(read_json(&dir.join("run.json"))["state"], "interrupted");
    // And running it again resumes them.
    let again = p.cmd_within(
        &["run", "tasks", "--progress", "lines", "--timeout", "1s"],
        Duration::from_secs(60),
    );
    again.expect_code(1);
    assert_eq!(again.summary()["totals"]["timeout"], 3);
}

#[test]
fn the_pages_draw_pass_rates_by_tag_durations_and_the_runs_over_time() {
    let p = Project::new();
    for (name, failing) in [("one", 2), ("two", 1), ("three", 0)] {
        for i in 0..4 {
            let check = if i < failing { "false" } else { "true" };
            let mut plan = crate::helpers::shell_plan("r", &["true"]);
            plan["tags"] = json!([if i % 2 == 0 { "even" } else { "odd" }]);
            plan["evaluate"] = json!([{"type": "command", "run": check}]);
            p.task(&format!("t{i}.json"), plan);
        }
        p.run(&["--name", name, "--fresh"]);
    }
    let report = std::fs::read_to_string(p.path().join("results/three/report.html")).unwrap();
    for wanted in [
        "<figcaption>Pass rate by tag</figcaption>",
        "100% (2/2)",
        "<figcaption>Task durations</figcaption>",
        "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\"",
    ] {
        assert!(report.contains(wanted), "{wanted} not in report.html");
    }
    let page = p.path().join("cmp.html");
    let out = p.cmd(&[
        "compare",
        "results/one",
        "results/three",
        "--html",
        page.to_str().unwrap(),
    ]);
    assert!(out.code == 0 || out.code == 1, "{}", out.stderr);
    let html = std::fs::read_to_string(&page).unwrap();
    for wanted in [
        "<figcaption>Pass rate, A and B</figcaption>",
        "A · even",
        "<figcaption>Pass rate of the runs beside B, oldest first</figcaption>",
        "<title>one: 50.0%</title>",
        "<title>two: 75.0%</title>",
        "<title>three: 100.0%</title>",
    ] {
        assert!(html.contains(wanted), "{wanted} not in the compare page");
    }
    // The order is the runs' start, oldest first.
    let at = |s: &str| html.find(s).unwrap();
    assert!(at("<title>one: ") < at("<title>two: ") && at("<title>two: ") < at("<title>three: "));
}
