//! `--shard I/N` runs a stable subset so that N machines together run every task once;
//! `merge` puts the shards back together with correct totals and reports missing and
//! duplicate tasks.

use std::collections::BTreeMap;

use serde_json::json;

use crate::helpers::{Project, read_json, run_binary};

fn batch() -> Project {
    let p = Project::new();
    for i in 0..11 {
        let cmd = if i == 3 { "false" } else { "true" };
        p.task(&format!("g{}/t{i}.json", i % 3), json!({"request": "x", "actions": [{"action": "execute_command", "parameters": {"command": cmd}}]}));
    }
    p.file("tasks/bad.json", "{oops");
    p
}

fn ids_of(p: &Project, run: &str) -> Vec<String> {
    let summary = read_json(&p.path().join("results").join(run).join("summary.json"));
    summary["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn shards_partition_the_batch_and_merge_back() {
    let p = batch();
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    for i in 1..=3 {
        let out = p.run(&["--shard", &format!("{i}/3")]);
        assert!(
            out.stderr.contains(&format!("shard {i}/3")),
            "{}",
            out.stderr
        );
        for id in ids_of(&p, &format!("proj-shard-{i}-of-3")) {
            *seen.entry(id).or_default() += 1;
        }
    }
    assert_eq!(seen.len(), 12, "{seen:?}");
    assert!(seen.values().all(|n| *n == 1), "{seen:?}");
    // A shard re-rendered is the same shard: the other shards' tasks are not its own
    // (they were once counted as errors with no result).
    let summary = |run: &str| read_json(&p.path().join("results").join(run).join("summary.json"));
    let before = summary("proj-shard-1-of-3")["totals"].clone();
    let out = p.cmd(&["report", "results/proj-shard-1-of-3"]);
    assert!(!out.stderr.contains("no result"), "{}", out.stderr);
    assert_eq!(summary("proj-shard-1-of-3")["totals"], before);
    let out = run_binary(
        p.path(),
        &[
            "merge",
            "results/all",
            "results/proj-shard-1-of-3",
            "results/proj-shard-2-of-3",
            "results/proj-shard-3-of-3",
        ],
        &[],
    );
    out.expect_code(1);
    assert!(
        out.stdout.starts_with(
            "merged 3 run dirs into results/all: 12 tasks, 10 passed, 1 failed, 1 error"
        ),
        "{}",
        out.stdout
    );
    let totals = read_json(&p.path().join("results/all/summary.json"))["totals"].clone();
    assert_eq!(
        (totals["total"].as_u64(), totals["passed"].as_u64()),
        (Some(12), Some(10))
    );
    assert_eq!(
        read_json(&p.path().join("results/all/tasks_status.json"))
            .as_object()
            .unwrap()
            .len(),
        12
    );
    assert!(p.path().join("results/all/g0/t0/output.md").exists());
    let run = read_json(&p.path().join("results/all/run.json"));
    assert_eq!(run["state"], "merged");
    // The settings the shards ran with, for the merged run's header.
    let shard = read_json(&p.path().join("results/proj-shard-1-of-3/run.json"));
    assert_eq!(run["config"]["timeout"], shard["config"]["timeout"]);
    assert_eq!(run["config"]["run_name"], "all");
    assert_eq!(run["config"]["shard"], serde_json::Value::Null);
    assert_eq!(run["sandbox"], shard["sandbox"]);
    assert!(
        run["started"].as_str() <= shard["started"].as_str(),
        "{run}"
    );
    let page = std::fs::read_to_string(p.path().join("results/all/report.html")).unwrap();
    assert!(page.contains(" · timeout "), "the header's settings");
}

#[test]
fn merge_reports_missing_and_duplicate_tasks() {
    let p = batch();
    for i in 1..=3 {
        p.run(&["--shard", &format!("{i}/3")]);
    }
    let missing_shard = ids_of(&p, "proj-shard-3-of-3").len();
    let out = run_binary(
        p.path(),
        &[
            "merge",
            "results/m",
            "results/proj-shard-1-of-3",
            "results/proj-shard-2-of-3",
        ],
        &[],
    );
    out.expect_code(2);
    assert!(
        out.stdout
            .contains("problem: shard 3/3 of the split is not among the inputs"),
        "{}\n{}",
        out.stdout,
        out.stderr
    );
    assert!(
        out.stdout
            .contains(&format!("missing: {missing_shard} tasks have no result")),
        "{}",
        out.stdout
    );
    let totals = read_json(&p.path().join("results/m/summary.json"))["totals"].clone();
    assert_eq!(totals["total"], 12, "missing tasks stay in the denominator");
    let an_absent = ids_of(&p, "proj-shard-3-of-3")[0].clone();
    let status = read_json(
        &p.path()
            .join("results/m")
            .join(&an_absent)
            .join("status.json"),
    );
    assert_eq!(status["status"], "error");
    assert!(
        status["error"]
            .as_str()
            .unwrap()
            .contains("it belongs to shard 3/3"),
        "{status}"
    );

    let out = run_binary(
        p.path(),
        &[
            "merge",
            "results/d",
            "results/proj-shard-1-of-3",
            "results/proj-shard-1-of-3",
            "results/proj-shard-2-of-3",
            "results/proj-shard-3-of-3",
        ],
        &[],
    );
    out.expect_code(2);
    assert!(
        out.stdout.contains("problem: shard 1/3 is given twice"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("duplicate: "), "{}", out.stdout);
    let out = run_binary(
        p.path(),
        &["merge", "results/d", "results/proj-shard-1-of-3"],
        &[],
    );
    out.expect_code(2);
    assert!(
        out.stderr.contains("already exists and is not empty"),
        "{}",
        out.stderr
    );
}

#[test]
fn scheduler_indexes_pick_the_shard() {
    let p = batch();
    let k8s = p.cmd_env(
        &["run", "tasks", "--shards", "3", "--progress", "lines"],
        &[("JOB_COMPLETION_INDEX", "1")],
    );
    assert!(k8s.stderr.contains("shard 2/3"), "{}", k8s.stderr);
    let by_flag = p.run(&["--shard", "2/3", "--name", "flag"]);
    assert!(by_flag.stderr.contains("shard 2/3"));
    // A name given with --name is still the shard's own: shards never share a run dir.
    assert_eq!(
        ids_of(&p, "proj-shard-2-of-3"),
        ids_of(&p, "flag-shard-2-of-3")
    );
    let other = p.run(&["--shard", "1/3", "--name", "flag"]);
    assert!(other.stderr.contains("shard 1/3"), "{}", other.stderr);
    p.run(&["--shard", "1/3"]);
    assert_eq!(
        ids_of(&p, "proj-shard-1-of-3"),
        ids_of(&p, "flag-shard-1-of-3")
    );
    let slurm = p.cmd_env(
        &[
            "run",
            "tasks",
            "--shards",
            "3",
            "--name",
            "slurm",
            "--progress",
            "lines",
        ],
        &[("SLURM_ARRAY_TASK_ID", "7")],
    );
    slurm.expect_code(2);
    assert!(
        slurm
            .stderr
            .contains("SLURM_ARRAY_TASK_ID=7 is not a shard of --shards 3"),
        "{}",
        slurm.stderr
    );
}

#[test]
fn a_killed_shards_unfinished_task_is_merged_as_unfinished() {
    let p = Project::new();
    for i in 0..4 {
        p.task(
            &format!("t{i}.json"),
            crate::helpers::shell_plan("t", &["true"]),
        );
    }
    for i in 1..=2 {
        p.run(&["--shard", &format!("{i}/2")]).expect_code(0);
    }
    // As if shard 1's runner had been killed while its first task ran.
    let shard = p.path().join("results/proj-shard-1-of-2");
    let first = ids_of(&p, "proj-shard-1-of-2")[0].clone();
    let status = shard.join(&first).join("status.json");
    let mut record = read_json(&status);
    record["status"] = json!("running");
    std::fs::write(&status, record.to_string()).unwrap();
    let out = run_binary(
        p.path(),
        &[
            "merge",
            "results/all",
            "results/proj-shard-1-of-2",
            "results/proj-shard-2-of-2",
        ],
        &[],
    );
    assert!(
        out.stdout.contains(", 1 unfinished"),
        "the line adds up: {}",
        out.stdout
    );
    let merged = read_json(
        &p.path()
            .join("results/all")
            .join(&first)
            .join("status.json"),
    );
    assert_eq!(merged["status"], "pending", "{merged}");
    assert!(
        merged["error"].as_str().unwrap().starts_with("interrupted"),
        "{merged}"
    );
    let summary = read_json(&p.path().join("results/all/summary.json"));
    assert_eq!(summary["totals"]["unfinished"], 1, "{summary}");
    assert_eq!(
        read_json(&p.path().join("results/all/tasks_status.json"))[first.as_str()],
        false
    );
}
