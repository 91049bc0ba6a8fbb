//! UFO's own trajectory reader (`../shared/ufo/ufo/trajectory/parser.py`, unmodified,
//! run by `tests/ufo/read_trajectories.py` in the venv `scripts/setup-ufo.sh` makes) on
//! ufo-batch's task folders: a run of the desktop samples and its replay. UFO finds
//! the HostAgent's and the AppAgents' steps where the plans recorded them, every
//! screenshot a step names is there, the final screenshot too, and its markdown export
//! runs.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::desktop::desktop_stack;
use crate::helpers::run_binary;
use crate::ufo_real::{ufo_python, ufo_source};

/// What UFO's parser sees in each task folder under `tasks`, by folder name.
fn read(tasks: &Path) -> Vec<Value> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/ufo/read_trajectories.py");
    let mut folders: Vec<_> = std::fs::read_dir(tasks)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("response.log").is_file())
        .collect();
    folders.sort();
    let out = Command::new(ufo_python())
        .arg(&script)
        .args(&folders)
        .env("PYTHONPATH", ufo_source())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "UFO's parser failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // UFO's parser prints its own lines too: the JSON ones are the script's.
    let seen: Vec<Value> = stdout
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(seen.len(), folders.len(), "{stdout}");
    seen
}

fn check(seen: &[Value]) {
    for task in seen {
        let name = task["folder"].as_str().unwrap();
        assert_eq!(task["missing"], serde_json::json!([]), "{name}: {task}");
        assert_eq!(task["final"], true, "{name}: no final screenshot: {task}");
        assert_eq!(task["markdown"], true, "{name}: {task}");
        assert!(task["request"].is_string(), "{name}: {task}");
        // Every step of the samples is an AppAgent's but the documented plan's first,
        // its HostAgent's.
        let host = u64::from(name == "ufo_documented_plan");
        assert_eq!(task["host"], host, "{name}: {task}");
        assert_eq!(
            task["app"].as_u64().unwrap() + host,
            task["steps"].as_u64().unwrap(),
            "{name}: {task}"
        );
    }
}

#[test]
#[cfg_attr(
    any(skip_desktop, skip_ufo),
    ignore = "UFO_BATCH_SKIP_TESTS: needs desktop, ufo"
)]
fn ufos_trajectory_parser_reads_a_run_and_a_replay_of_the_desktop_samples() {
    crate::ufo_real::ufo_installed();
    desktop_stack();
    ufo_source();
    let out_dir = tempfile::tempdir().unwrap();
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/desktop");
    let run = run_binary(
        out_dir.path(),
        &[
            "run",
            examples.to_str().unwrap(),
            "--out",
            "results",
            "--jobs",
            "3",
            "--progress",
            "lines",
        ],
        &[],
    );
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let first = read(&out_dir.path().join("results/desktop/tasks"));
    assert_eq!(first.len(), 5, "{first:?}");
    check(&first);

    let replay = run_binary(
        out_dir.path(),
        &[
            "run",
            "results/desktop",
            "--out",
            "replays",
            "--jobs",
            "3",
            "--progress",
            "lines",
        ],
        &[],
    );
    assert_eq!(replay.code, 0, "{}\n{}", replay.stdout, replay.stderr);
    let second = read(&out_dir.path().join("replays/desktop-replay/tasks"));
    assert_eq!(second.len(), 5, "{second:?}");
    check(&second);
}
