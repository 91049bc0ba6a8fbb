//! kill -9 at random moments, resume each time: in the end every task has exactly one
//! final status, no result file is torn, and no task ran after it was final.

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use crate::helpers::{Project, read_json};

const TASKS: usize = 40;

#[test]
fn kill_9_and_resume_loses_nothing() {
    let p = Project::new();
    let witness = p.path().join("witness");
    std::fs::create_dir_all(&witness).unwrap();
    for i in 0..TASKS {
        let id = format!("t{i:02}");
        // Each execution leaves a timestamped line outside the run dir.
        let mark = format!("date +%s%N >> {}/{id}", witness.display());
        p.task(&format!("{id}.json"), json!({"request": "work", "actions": [
            {"action": "execute_command", "parameters": {"command": mark}},
            {"action": "execute_command", "parameters": {"command": "sleep 0.1; echo done > out.txt"}}],
            "evaluate": [{"type": "file_exists", "path": "out.txt"}]}));
    }
    let args = [
        "run",
        "tasks",
        "--jobs",
        "4",
        "--sandbox",
        "none",
        "--progress",
        "lines",
    ];
    let mut rng = fastrand::Rng::with_seed(7);
    let mut killed = 0;
    for _ in 0..6 {
        let run = p.start(&args);
        std::thread::sleep(Duration::from_millis(rng.u64(80..500)));
        run.signal(libc::SIGKILL);
        let out = run.wait();
        assert!(
            out.code == 128 + libc::SIGKILL || out.code == 0,
            "exit {}",
            out.code
        );
        killed += usize::from(out.code == 128 + libc::SIGKILL);
    }
    assert!(
        killed >= 2,
        "the runner was killed mid-batch only {killed} times"
    );
    let out = p.cmd(&args);
    out.expect_code(0);
    let root = p.path().join("results/proj");
    assert_eq!(
        read_json(&root.join("summary.json"))["totals"]["passed"],
        TASKS
    );
    for i in 0..TASKS {
        let id = format!("t{i:02}");
        let status = read_json(&root.join(&id).join("status.json"));
        let attempts = status["attempts"].as_array().unwrap();
        let finals: Vec<&Value> = attempts
            .iter()
            .filter(|a| {
                !matches!(
                    a["status"].as_str(),
                    Some("running" | "pending" | "cancelled" | "interrupted")
                )
            })
            .collect();
        assert_eq!(finals.len(), 1, "{id}: {status}");
        assert!(
            attempts.iter().all(|a| a["status"] != "running"),
            "{id}: an attempt the runner died in must say `interrupted`: {status}"
        );
        assert_eq!(attempts.last().unwrap()["status"], "passed", "{id}");
        let finished = status["finished"].as_str().unwrap();
        let finished_ns = humantime::parse_rfc3339(finished)
            .unwrap()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos();
        let runs = std::fs::read_to_string(witness.join(&id)).unwrap();
        for line in runs.lines() {
            let ran: u128 = line.trim().parse().unwrap();
            // Timestamps on disk have millisecond precision.
            assert!(
                ran <= finished_ns + 1_000_000,
                "{id} ran at {ran} after it was final at {finished}"
            );
        }
        assert!(runs.lines().count() >= 1);
    }
    let interrupted = (0..TASKS)
        .filter(|i| {
            read_json(&root.join(format!("t{i:02}/status.json")))["attempts"]
                .as_array()
                .unwrap()
                .len()
                > 1
        })
        .count();
    eprintln!("{killed} kills; {interrupted} tasks needed more than one attempt");
    assert!(interrupted >= 1, "no kill landed while a task was running");
    check_every_file_parses(&root);
}

/// Every JSON file and every JSON line of the run dir parses (workspaces excluded).
fn check_every_file_parses(root: &Path) {
    let mut checked = 0;
    for entry in walkdir::WalkDir::new(root)
        .into_iter()
        .filter_entry(|e| e.file_name() != "workspace")
        .flatten()
    {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().to_string();
        if !entry.file_type().is_file() {
            continue;
        }
        let text = std::fs::read_to_string(path).unwrap();
        if name.ends_with(".json") {
            serde_json::from_str::<Value>(&text)
                .unwrap_or_else(|e| panic!("{} is torn: {e}", path.display()));
            checked += 1;
        } else if name.ends_with(".log") && name != "task.log" {
            for line in text.lines() {
                serde_json::from_str::<Value>(line)
                    .unwrap_or_else(|e| panic!("{} has a torn line: {e}", path.display()));
            }
            checked += 1;
        }
        assert!(
            !name.starts_with('.'),
            "a temporary file was left behind: {}",
            path.display()
        );
    }
    assert!(checked > TASKS * 3, "only {checked} files checked");
}
