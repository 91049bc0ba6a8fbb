//! The worst task folders a user can have: every bad entry gets a verdict of its own,
//! quickly, and the rest of the batch runs. Nothing hangs, panics or disappears.

use std::time::Duration;

use serde_json::json;

use crate::helpers::{Project, read_json, shell_plan};

/// Long enough for a debug build on a loaded machine, far shorter than a hang.
const QUICK: Duration = Duration::from_secs(60);

fn good(p: &Project, rel: &str) {
    p.task(rel, shell_plan("ok", &["true"]));
}

#[test]
fn invalid_files_below_results_folder_names_get_a_verdict() {
    // Once an endless loop at 100% CPU that ignored SIGINT and SIGTERM.
    let p = Project::new();
    good(&p, "x.json");
    good(&p, "victim.json");
    p.file("tasks/x/workspace/y.json", "{broken");
    p.file("tasks/data/tmp/y.json", "{broken");
    p.file("tasks/victim/workspace/inner.json", "{broken");
    let out = p.cmd_within(&["validate", "tasks"], QUICK);
    out.expect_code(2);
    assert!(
        out.stdout.contains("5 task files checked: 2 valid"),
        "{}",
        out.stdout
    );
    let out = p.cmd_within(&["run", "tasks", "--progress", "lines"], QUICK);
    out.expect_code(1);
    assert_eq!(out.summary()["totals"]["error"], 3);
    assert_eq!(out.summary()["totals"]["passed"], 2);
}

#[test]
fn numbers_that_fit_no_duration_are_problems_not_panics() {
    let p = Project::new();
    for i in 0..16 {
        good(&p, &format!("ok{i:02}.json"));
    }
    let mut huge = shell_plan("r", &["true"]);
    huge["timeout"] = json!(1e308);
    p.task("huge.json", huge);
    p.file(
        "tasks/max.json",
        r#"{"request": "r", "timeout": 18446744073709551615, "actions": []}"#,
    );
    let out = p.cmd_within(&["validate", "tasks"], QUICK);
    out.expect_code(2);
    assert!(
        out.stdout.contains("18 task files checked: 16 valid"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("longer than a year"), "{}", out.stdout);
    let out = p.run(&[]);
    out.expect_code(1);
    let totals = &out.summary()["totals"];
    assert_eq!(
        (totals["total"].as_u64(), totals["passed"].as_u64()),
        (Some(18), Some(16))
    );
}

#[test]
fn ids_that_name_run_files_are_refused() {
    let p = Project::new();
    good(&p, "a.json");
    for name in [
        "summary.json",
        "report.md",
        "junit.xml",
        "summary.csv",
        "run.json",
    ] {
        let mut plan = shell_plan("r", &["true"]);
        plan["id"] = json!(name);
        p.task(&format!("{name}-task.json"), plan);
    }
    let out = p.cmd_within(&["validate", "tasks"], QUICK);
    out.expect_code(2);
    assert!(
        out.stdout
            .contains("is the name of the run folder's own `summary.json`"),
        "{}",
        out.stdout
    );
    let out = p.run(&[]);
    out.expect_code(1);
    // The run's own files are intact and say so.
    let summary = out.summary();
    assert_eq!(summary["totals"]["total"], 6);
    assert_eq!(summary["totals"]["error"], 5);
    assert!(out.run_dir("proj").join("junit.xml").is_file());
    assert!(out.run_dir("proj").join("report.md").is_file());
}

#[cfg(unix)]
#[test]
fn bad_entries_are_one_error_each_and_the_rest_runs() {
    use std::os::unix::fs::symlink;
    let p = Project::new();
    good(&p, "ok.json");
    symlink(
        p.path().join("nowhere.json"),
        p.path().join("tasks/dangling.json"),
    )
    .unwrap();
    symlink("/", p.path().join("tasks/root")).unwrap();
    // A file whose path is longer than the system allows.
    let mut deep = p.path().join("tasks");
    for _ in 0..20 {
        deep = deep.join("d".repeat(250));
    }
    // (Made one relative step at a time: no single call may see the whole path.)
    let script = "import os\nos.chdir('tasks')\nfor _ in range(20):\n    os.mkdir('d' * 250)\n    os.chdir('d' * 250)\nopen('deep.json', 'w').write('{}')\n";
    let made = std::process::Command::new("python3")
        .args(["-c", script])
        .current_dir(p.path())
        .status()
        .unwrap();
    assert!(made.success() && deep.as_os_str().len() > 4096);
    // A FIFO where a task file should be: reading it would wait forever.
    let fifo = std::ffi::CString::new(p.path().join("tasks/fifo.json").to_str().unwrap()).unwrap();
    // SAFETY: mkfifo on a fresh path.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
    let out = p.cmd_within(&["run", "tasks", "--progress", "lines"], QUICK);
    out.expect_code(1);
    let totals = &out.summary()["totals"];
    assert_eq!(totals["passed"], 1, "{}", out.stderr);
    assert_eq!(totals["error"], 4, "{}", out.stderr);
    for (id, why) in [
        ("dangling", "leads nowhere"),
        ("root", "symbolic link to a folder is not followed"),
        ("fifo", "it is a FIFO, not a regular file"),
    ] {
        let status = out.status(id);
        assert_eq!(status["status"], "error");
        let log = out.task_file(id, "task.log");
        assert!(log.contains(why), "{id}: {log}");
    }
    assert!(out.stderr.contains("File name too long"), "{}", out.stderr);
}

#[test]
fn oversized_files_are_refused_without_reading_them() {
    let p = Project::new();
    good(&p, "ok.json");
    let big = std::fs::File::create(p.path().join("tasks/big.json")).unwrap();
    big.set_len(2 << 30).unwrap(); // sparse: 2 GB that take no disk
    let out = p.cmd_within(&["validate", "tasks"], QUICK);
    out.expect_code(2);
    assert!(
        out.stdout.contains("more than the 16777216 bytes accepted"),
        "{}",
        out.stdout
    );
}

#[test]
fn a_byte_order_mark_is_accepted() {
    let p = Project::new();
    let text = format!("\u{feff}{}", shell_plan("r", &["true"]));
    p.file("tasks/bom.json", &text);
    let out = p.cmd_within(&["validate", "tasks"], QUICK);
    out.expect_code(0);
}

#[cfg(unix)]
#[test]
fn file_tools_refuse_fifos_and_devices_at_once() {
    let p = Project::new();
    let actions = json!([
        {"action": "execute_command", "parameters": {"command": "mkfifo f && (mknod z c 1 5 || ln -s /dev/zero z2); true"}},
        {"action": "read_file", "parameters": {"path": "f"}, "expect": {"status": "failure"}},
        {"action": "write_file", "parameters": {"path": "f", "content": "x"}, "expect": {"status": "failure"}},
        {"action": "execute_command", "parameters": {"command": "test -e z || ln -s f z"}},
        {"action": "read_file", "parameters": {"path": "z"}, "expect": {"status": "failure"}},
        {"action": "write_file", "parameters": {"path": "z", "content": "x"}, "expect": {"status": "failure"}}
    ]);
    p.task("t.json", json!({"request": "r", "actions": actions}));
    let out = p.cmd_within(
        &["run", "tasks", "--progress", "lines", "--sandbox", "none"],
        QUICK,
    );
    out.expect_code(0);
    let log = out.task_file("t", "response.log");
    assert!(log.contains("not a regular file"), "{log}");
}

#[test]
fn two_runners_cannot_share_a_run_folder() {
    let p = Project::new();
    p.task("slow.json", shell_plan("r", &["sleep 3"]));
    let first = p.start(&["run", "tasks", "--progress", "lines"]);
    assert!(crate::helpers::eventually(|| p
        .path()
        .join("results/.proj.lock")
        .exists()));
    std::thread::sleep(Duration::from_millis(300));
    let second = p.run(&[]);
    second.expect_code(2);
    assert!(
        second.stderr.contains("is already running in"),
        "{}",
        second.stderr
    );
    first.wait().expect_code(0);
    // The lock went with the first runner.
    p.run(&[]).expect_code(0);
    let record = read_json(&p.path().join("results/proj/slow/status.json"));
    assert_eq!(record["attempts"].as_array().unwrap().len(), 1);
}

#[cfg(unix)]
#[test]
fn an_unreadable_folder_is_one_error_and_the_rest_runs() {
    use std::os::unix::fs::PermissionsExt;
    // Root reads every folder: run as nobody then (the project made reachable for it).
    let as_root = unsafe { libc::geteuid() } == 0;
    let p = Project::new();
    good(&p, "ok.json");
    good(&p, "locked/inner.json");
    for dir in [
        p.path().parent().unwrap(),
        p.path(),
        &p.path().join("tasks"),
    ] {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o777)).unwrap();
    }
    std::fs::set_permissions(
        p.path().join("tasks/locked"),
        std::fs::Permissions::from_mode(0o000),
    )
    .unwrap();
    let bin = env!("CARGO_BIN_EXE_ufo-batch");
    let mut command = if as_root {
        let mut c = std::process::Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups", bin]);
        c
    } else {
        std::process::Command::new(bin)
    };
    let out = command
        .args(["run", "tasks", "--progress", "lines", "--sandbox", "none"])
        .current_dir(p.path())
        .output()
        .unwrap();
    std::fs::set_permissions(
        p.path().join("tasks/locked"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let summary = read_json(&p.path().join("results/proj/summary.json"));
    assert_eq!(
        (
            summary["totals"]["passed"].as_u64(),
            summary["totals"]["error"].as_u64()
        ),
        (Some(1), Some(1)),
        "{stderr}"
    );
    assert!(stderr.contains("cannot search this folder"), "{stderr}");
}

#[test]
fn arguments_that_are_not_utf8_are_usage_errors_not_panics() {
    use std::os::unix::ffi::OsStrExt;
    let p = Project::new();
    good(&p, "tasks/a.json");
    let bad = std::ffi::OsStr::from_bytes(b"res\xffults");
    let cases: [Vec<&std::ffi::OsStr>; 4] = [
        vec!["run".as_ref(), "tasks".as_ref(), "--out".as_ref(), bad],
        vec!["run".as_ref(), bad],
        vec!["run".as_ref(), "tasks".as_ref(), "--name".as_ref(), bad],
        vec!["validate".as_ref(), bad],
    ];
    for args in cases {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_ufo-batch"))
            .args(&args)
            .current_dir(p.path())
            .env_remove("UFO_BATCH_OUT")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains("invalid UTF-8"), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
    // Nothing was made for the refused runs.
    assert!(!p.path().join("results").exists());
}
