//! The threads that keep the record (the reporter, the file writers, the committer)
//! run below the runner's own priority; the ones that run tasks do not.

use crate::helpers::{Project, count_status, eventually, shell_plan, stat_fields};

/// Each thread of process `pid`: its name and its `nice` (field 19 of its `stat`).
fn threads(pid: i32) -> Vec<(String, i32)> {
    let Ok(entries) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| {
            let dir = entry.path();
            let name = std::fs::read_to_string(dir.join("comm")).ok()?;
            let stat = std::fs::read_to_string(dir.join("stat")).ok()?;
            // Field 19.
            let nice = stat_fields(&stat)?.get(16)?.parse().ok()?;
            Some((name.trim().to_string(), nice))
        })
        .collect()
}

#[test]
fn the_record_is_kept_at_a_lower_priority_than_the_tasks() {
    let p = Project::new();
    p.task("t.json", shell_plan("waits", &["sleep 3"]));
    let run = p.start(&["run", "tasks", "--jobs", "1", "--progress", "quiet"]);
    let dir = p.path().join("results/proj");
    assert!(
        eventually(|| count_status(&dir, "running") == 1),
        "the task never started"
    );
    let mut seen = Vec::new();
    let all_there = eventually(|| {
        seen = threads(run.pid());
        ["reporter", "committer", "writer-0", "preparer-0"]
            .iter()
            .all(|name| seen.iter().any(|(n, _)| n == name))
    });
    assert!(all_there, "{seen:?}");
    let own = seen
        .iter()
        .find(|(name, _)| name == "ufo-batch")
        .map(|(_, nice)| *nice)
        .expect("the main thread");
    for (name, nice) in &seen {
        let keeps_the_record =
            name == "reporter" || name == "committer" || name.starts_with("writer-");
        let expected = if keeps_the_record {
            (own + 5).min(19)
        } else {
            own
        };
        assert_eq!(*nice, expected, "{name} in {seen:?}");
    }
    run.wait().expect_code(0);
}
