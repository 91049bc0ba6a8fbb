//! Ctrl-C: the first stops scheduling and lets running tasks finish within the grace
//! period; the second (or the end of the grace) stops them. Either way every task ends
//! `cancelled` or final, all files are consistent, the exit code is 130, and running
//! the command again finishes the batch.

use serde_json::json;

use crate::helpers::{Project, count_status, eventually, read_json};

fn sleepers(p: &Project, n: usize, secs: &str) {
    for i in 0..n {
        p.task(
            &format!("s{i}.json"),
            json!({"request": "sleep", "actions": [
            {"action": "execute_command", "parameters": {"command": format!("sleep {secs}")}}]}),
        );
    }
}

#[test]
fn one_ctrl_c_drains_then_the_grace_period_ends_it() {
    let p = Project::new();
    sleepers(&p, 4, "30");
    let run = p.start(&[
        "run",
        "tasks",
        "--jobs",
        "2",
        "--grace",
        "1s",
        "--progress",
        "lines",
    ]);
    let dir = p.path().join("results/proj");
    assert!(
        eventually(|| count_status(&dir, "running") == 2),
        "two tasks never started"
    );
    run.signal(libc::SIGINT);
    let out = run.wait();
    out.expect_code(130);
    assert!(
        out.stderr
            .contains("stopping: interrupted (Ctrl-C); 2 running tasks may finish within 1s"),
        "{}",
        out.stderr
    );
    let totals = &out.summary()["totals"];
    assert_eq!(
        (totals["total"].as_u64(), totals["cancelled"].as_u64()),
        (Some(4), Some(4)),
        "{totals}"
    );
    let killed: Vec<String> = out.summary()["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["error"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        killed
            .iter()
            .filter(|e| e.starts_with("cancelled during the session"))
            .count(),
        2,
        "{killed:?}"
    );
    assert_eq!(
        killed
            .iter()
            .filter(|e| e.starts_with("not started: interrupted (Ctrl-C)"))
            .count(),
        2,
        "{killed:?}"
    );
    let run_json = read_json(&out.run_dir("proj").join("run.json"));
    assert_eq!(run_json["state"], "interrupted");
    assert_eq!(
        read_json(&out.run_dir("proj").join("tasks_status.json")),
        json!({"s0": false, "s1": false, "s2": false, "s3": false})
    );
    // The tasks that never started have no folder (a stop with thousands queued must
    // end within a scheduler's grace time), and report still says why.
    let folders = (0..4)
        .filter(|i| out.run_dir("proj").join(format!("s{i}")).exists())
        .count();
    assert_eq!(folders, 2);
    p.cmd(&["report", "results/proj"]);
    let again = read_json(&out.run_dir("proj").join("summary.json"));
    assert_eq!(again["totals"], totals.clone(), "{again}");
    let reasons: Vec<&str> = again["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["error"].as_str())
        .filter(|e| e.starts_with("not started: interrupted (Ctrl-C)"))
        .collect();
    assert_eq!(reasons.len(), 2, "{again}");
}

#[test]
fn a_second_ctrl_c_stops_running_tasks_at_once_and_a_rerun_finishes() {
    let p = Project::new();
    sleepers(&p, 3, "1");
    p.task("long.json", json!({"request": "sleep", "actions": [{"action": "execute_command", "parameters": {"command": "sleep 300"}}]}));
    let run = p.start(&[
        "run",
        "tasks",
        "--jobs",
        "4",
        "--grace",
        "5m",
        "--progress",
        "lines",
    ]);
    let dir = p.path().join("results/proj");
    assert!(
        eventually(|| count_status(&dir, "running") >= 1 && dir.join("long/status.json").exists()),
        "nothing started"
    );
    assert!(eventually(|| std::fs::read_to_string(
        dir.join("long/status.json")
    )
    .is_ok_and(|t| t.contains("running"))));
    run.signal(libc::SIGINT);
    std::thread::sleep(std::time::Duration::from_millis(300));
    run.signal(libc::SIGINT);
    let out = run.wait();
    out.expect_code(130);
    assert_eq!(out.status_of("long"), "cancelled");
    // Running the same command again runs what did not finish, and keeps what did.
    let again = p.run(&["--jobs", "4", "--timeout", "5s"]);
    assert_eq!(
        again.status_of("long"),
        "timeout",
        "the cancelled task ran again"
    );
    for i in 0..3 {
        assert_eq!(again.status_of(&format!("s{i}")), "passed");
    }
}

#[test]
fn sigterm_drains_like_ctrl_c() {
    let p = Project::new();
    sleepers(&p, 2, "30");
    let run = p.start(&[
        "run",
        "tasks",
        "--jobs",
        "1",
        "--grace",
        "200ms",
        "--progress",
        "lines",
    ]);
    let dir = p.path().join("results/proj");
    assert!(eventually(|| count_status(&dir, "running") == 1));
    run.signal(libc::SIGTERM);
    let out = run.wait();
    out.expect_code(130);
    assert!(
        out.stderr.contains("stopping: interrupted (SIGTERM)"),
        "{}",
        out.stderr
    );
}

#[test]
fn fail_fast_and_max_fail_stop_scheduling() {
    let p = Project::new();
    for i in 0..6 {
        let cmd = if i % 2 == 0 { "false" } else { "true" };
        p.task(&format!("t{i}.json"), json!({"request": "x", "actions": [{"action": "execute_command", "parameters": {"command": cmd}}]}));
    }
    let out = p.run(&["--jobs", "1", "--fail-fast"]);
    out.expect_code(1);
    assert!(
        out.stderr
            .contains("stopping: a task did not pass (--fail-fast)"),
        "{}",
        out.stderr
    );
    assert_eq!(out.summary()["totals"]["cancelled"], 5);
    let out = p.run(&["--jobs", "1", "--max-fail", "2", "--fresh"]);
    assert!(
        out.stderr
            .contains("stopping: 2 tasks did not pass (--max-fail 2)"),
        "{}",
        out.stderr
    );
    assert_eq!(out.summary()["totals"]["cancelled"], 3);
}

/// Every process descended from `pid` (its children, theirs, ...).
fn descendants(pid: i32) -> Vec<i32> {
    let mut parent_of = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(child) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let stat = std::fs::read_to_string(format!("/proc/{child}/stat")).unwrap_or_default();
        if let Some(ppid) = stat
            .rsplit(')')
            .next()
            .and_then(|s| s.split_whitespace().nth(1))
            .and_then(|s| s.parse::<i32>().ok())
        {
            parent_of.push((child, ppid));
        }
    }
    let mut found = vec![pid];
    let mut i = 0;
    while i < found.len() {
        let p = found[i];
        found.extend(parent_of.iter().filter(|(_, pp)| *pp == p).map(|(c, _)| *c));
        i += 1;
    }
    found.remove(0);
    found
}

#[test]
fn a_scheduler_signalling_every_process_cancels_rather_than_fails() {
    // Slurm under proctrack/linuxproc sends SIGTERM to every process of the job, the
    // commands of running tasks included: they die of the signal, and their tasks must
    // run again, not be recorded as failed.
    scheduler_signal(|_| true, "killed by signal 15 while the run was stopping");
}

#[test]
fn a_shell_reporting_its_childs_death_by_signal_cancels_rather_than_fails() {
    // When the signal reaches the shell's child first, the shell does not die: it exits
    // with 128 + 15, which is the same stop seen one process up.
    scheduler_signal(
        |cmdline| cmdline.starts_with("sleep"),
        "exited with code 143 (128 + signal 15) while the run was stopping",
    );
}

/// Runs a task whose shell waits on `sleep`, sends SIGTERM to the descendants of the
/// runner that `hit` picks and then to the runner, and checks the task is cancelled with
/// `reason` and passes when the run is resumed.
fn scheduler_signal(hit: fn(&str) -> bool, reason: &str) {
    let p = Project::new();
    p.task(
        "t.json",
        json!({"request": "r", "actions": [{"action": "execute_command",
            "parameters": {"command": "test -e ../../../../go || sleep 30 && true"}}]}),
    );
    let run = p.start(&["run", "tasks", "--grace", "5s", "--progress", "lines"]);
    let dir = p.path().join("results/proj");
    assert!(eventually(|| count_status(&dir, "running") == 1));
    assert!(eventually(|| descendants(run.pid())
        .iter()
        .any(|&c| cmdline(c).starts_with("sleep"))));
    for pid in descendants(run.pid()) {
        if hit(&cmdline(pid)) {
            // SAFETY: kill only sends a signal.
            unsafe {
                libc::kill(pid, libc::SIGTERM);
            }
        }
    }
    run.signal(libc::SIGTERM);
    let out = run.wait();
    out.expect_code(130);
    let status = out.status("t");
    assert_eq!(status["status"], "cancelled", "{status}");
    assert!(
        status["error"].as_str().unwrap().contains(reason),
        "{status}"
    );
    std::fs::write(p.path().join("go"), "").unwrap();
    let out = p.run(&[]);
    out.expect_code(0);
    assert_eq!(out.status_of("t"), "passed");
}

/// A process's command line, words joined by spaces; empty once it is gone.
fn cmdline(pid: i32) -> String {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|b| String::from_utf8_lossy(&b).replace('\0', " "))
        .unwrap_or_default()
}
