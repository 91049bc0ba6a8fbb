//! Commands cannot write outside their task's workspace (and private temp folder), do
//! not see the runner's environment, and get resource limits.

use serde_json::json;

use crate::helpers::{Project, RUN_UNDER_LANDLOCK, read_json, shell_plan};

fn escape_task(p: &Project, marker: &str) {
    let outside = p.path().join(format!("outside-{marker}.txt"));
    p.task(
        "escape.json",
        json!({"request": "try to write outside", "actions": [
            {"action": "execute_command", "parameters": {"command": "echo in > inside.txt && echo tmp > \"$TMPDIR/t\""}},
            {"action": "execute_command", "parameters": {"command": format!("echo out > {}", outside.display())}},
            {"action": "execute_command", "parameters": {"command": "echo out > ../escaped.txt"}}
        ]}),
    );
}

#[test]
fn writes_outside_the_workspace_are_denied() {
    for (mode, used, denied) in [
        ("auto", "jail", "Read-only file system"),
        ("landlock", "landlock", "Permission denied"),
    ] {
        let p = Project::new();
        escape_task(&p, mode);
        let out = p.run(&["--sandbox", mode]);
        assert!(
            out.stderr.contains(&format!("sandbox {used}")),
            "{mode}: {}",
            out.stderr
        );
        let status = out.status("escape");
        assert_eq!(status["status"], "failed", "{mode}: {status}");
        let error = status["error"].as_str().unwrap();
        assert!(
            error.starts_with("step 2 ") && error.contains(denied),
            "{mode}: {error}"
        );
        assert!(
            !p.path().join(format!("outside-{mode}.txt")).exists(),
            "{mode}: wrote outside"
        );
        assert!(
            p.path()
                .join("results/proj/escape/workspace/inside.txt")
                .exists()
        );
        let run = read_json(&out.run_dir("proj").join("run.json"));
        assert_eq!(run["sandbox"], used);
    }
}

#[test]
fn without_a_sandbox_the_same_writes_succeed() {
    let p = Project::new();
    escape_task(&p, "none");
    let out = p.run(&["--sandbox", "none"]);
    assert!(out.stderr.contains("sandbox none"), "{}", out.stderr);
    assert!(
        out.stderr
            .contains("WARNING: --sandbox none: commands are not confined"),
        "{}",
        out.stderr
    );
    assert!(
        p.path().join("outside-none.txt").exists(),
        "the control case must really write"
    );
}

#[test]
#[cfg_attr(skip_bwrap, ignore = "UFO_BATCH_SKIP_TESTS: needs bwrap")]
fn bwrap_keeps_writes_off_the_host_when_installed() {
    let here = std::process::Command::new("bwrap")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    crate::helpers::require_stack("bwrap", here, "apt-get install bubblewrap");
    let p = Project::new();
    escape_task(&p, "bwrap");
    let out = p.run(&["--sandbox", "bwrap"]);
    assert!(out.stderr.contains("sandbox bwrap"), "{}", out.stderr);
    // Under bubblewrap, paths outside the workspace are read-only or a private tmpfs:
    // a write there fails or vanishes with the sandbox. Either way the host is untouched.
    assert!(
        !p.path().join("outside-bwrap.txt").exists(),
        "the write reached the host"
    );
    assert!(
        !p.path().join("results/proj/escape/escaped.txt").exists(),
        "the write reached the host"
    );
    assert!(
        p.path()
            .join("results/proj/escape/workspace/inside.txt")
            .exists(),
        "the workspace is writable"
    );
    assert_eq!(
        crate::helpers::read_json(&out.run_dir("proj").join("run.json"))["sandbox"],
        "bwrap"
    );
}

/// Where bubblewrap runs but the command cannot be confined in it (here: a bwrap that
/// drops every capability first, so the runner's step inside it cannot drop its own),
/// `--sandbox bwrap` is refused before any task, with what failed, rather than every
/// command exiting 126 against the agent.
#[test]
#[cfg_attr(skip_bwrap, ignore = "UFO_BATCH_SKIP_TESTS: needs bwrap")]
fn a_bwrap_that_cannot_confine_a_command_is_refused_before_any_task() {
    let real = std::process::Command::new("sh")
        .args(["-c", "command -v bwrap"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    crate::helpers::require_stack("bwrap", real.is_some(), "apt-get install bubblewrap");
    let p = Project::new();
    p.task("a.json", shell_plan("a", &["echo hi"]));
    let bin = p.path().join("capless");
    std::fs::create_dir_all(&bin).unwrap();
    let wrapper = bin.join("bwrap");
    std::fs::write(
        &wrapper,
        format!("#!/bin/sh\nexec {} --cap-drop ALL \"$@\"\n", real.unwrap()),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = p.cmd_env(&["run", "tasks", "--sandbox", "bwrap"], &[("PATH", &path)]);
    assert_eq!(out.code, 2, "{}\n{}", out.stdout, out.stderr);
    assert!(
        out.stderr
            .contains("--sandbox bwrap: bubblewrap cannot start a confined command here")
            && out.stderr.contains("cannot drop capabilities"),
        "{}",
        out.stderr
    );
    assert!(
        !p.path().join("results/proj").exists(),
        "a run folder was made"
    );
}

#[test]
fn commands_see_only_a_scrubbed_environment() {
    let p = Project::new();
    p.task("env.json", json!({"request": "env", "actions": [{"action": "execute_command", "parameters": {"command": "env | sort > env.txt"}}]}));
    let out = p.cmd_env(
        &["run", "tasks", "--progress", "lines"],
        &[
            ("OPENAI_API_KEY", "sk-very-secret-value"),
            ("AWS_SECRET_ACCESS_KEY", "aws-secret"),
        ],
    );
    out.expect_code(0);
    let env = out.task_file("env", "workspace/env.txt");
    assert!(!env.contains("secret"), "{env}");
    let names: Vec<&str> = env.lines().filter_map(|l| l.split('=').next()).collect();
    for allowed in &names {
        assert!(
            [
                "HOME", "LANG", "PATH", "PWD", "SHLVL", "TERM", "TMPDIR", "_"
            ]
            .contains(allowed),
            "unexpected {allowed}"
        );
    }
}

#[test]
fn memory_limits_apply() {
    let p = Project::new();
    p.file(
        "ufo-batch.toml",
        "[sandbox]\nmemory = \"256M\"\ncpu = \"30s\"\n",
    );
    p.task("limits.json", json!({"request": "limits", "actions": [
        {"action": "execute_command", "parameters": {"command": "ulimit -v; ulimit -t"}, "expect": {"stdout": "262144\n30"}}]}));
    p.run(&[]).expect_code(0);
}

#[test]
fn without_the_jail_binary_auto_says_why_it_confines_more_weakly() {
    let p = Project::new();
    escape_task(&p, "alone");
    // The runner copied alone: no ufo-batch-jail beside it.
    let bin = p.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    std::fs::copy(env!("CARGO_BIN_EXE_ufo-batch"), bin.join("ufo-batch")).unwrap();
    let out = std::process::Command::new(bin.join("ufo-batch"))
        .args(["run", "tasks", "--progress", "lines"])
        .current_dir(p.path())
        .env_remove("OPENAI_API_KEY")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("no jail here (ufo-batch-jail is not beside ufo-batch")
            && stderr.contains("commands are confined more weakly"),
        "{stderr}"
    );
    assert!(!p.path().join("outside-alone.txt").exists(), "{stderr}");
}

/// A run folder on a memory file system in `/dev/shm` (a fast scratch place): the
/// jail's own `/dev` covers the machine's, and the task's folders must stay in sight.
#[test]
#[cfg_attr(skip_shm, ignore = "UFO_BATCH_SKIP_TESTS: needs shm")]
fn a_run_folder_in_dev_shm_is_jailed_like_any_other() {
    let shm = std::path::Path::new("/dev/shm");
    crate::helpers::require_stack("shm", shm.is_dir(), "mount a tmpfs on /dev/shm");
    let out_dir = tempfile::tempdir_in(shm).unwrap();
    let beside = out_dir.path().join("escaped.txt");
    let p = Project::new();
    p.task(
        "write.json",
        json!({"request": "write", "actions": [
            {"action": "execute_command", "parameters": {"command": "echo in > inside.txt && cat inside.txt"},
             "expect": {"stdout": "in\n"}},
            // The task's /dev/shm is its own: what it writes there stays there.
            {"action": "execute_command", "parameters": {"command": format!("echo out > {} || true", beside.display())}}
        ]}),
    );
    let out = p.run(&["--out", out_dir.path().to_str().unwrap()]);
    assert!(out.stderr.contains("sandbox jail"), "{}", out.stderr);
    let status = read_json(&out_dir.path().join("proj/write/status.json"));
    assert_eq!(status["status"], "passed", "{status}");
    let inside = out_dir.path().join("proj/write/workspace/inside.txt");
    assert_eq!(std::fs::read_to_string(inside).unwrap(), "in\n");
    assert!(!beside.exists(), "a task wrote outside its folders");
}

/// Linux `major.minor` of this machine.
fn kernel() -> (u32, u32) {
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    let mut parts = release
        .trim()
        .split(['.', '-'])
        .map(|p| p.parse().unwrap_or(0));
    (parts.next().unwrap_or(0), parts.next().unwrap_or(0))
}

#[test]
fn landlock_commands_cannot_read_or_signal_the_runner_and_keep_no_capability() {
    // The runner's environment holds the key; its process is the parent of the
    // command's supervisor (the command's parent).
    let key = "sk-test-LANDLOCK-0123456789abcdef";
    let p = Project::new();
    p.task(
        "reach.json",
        json!({"request": "reach the runner", "actions": [
            {"action": "execute_command", "parameters": {"command":
                "R=$(awk '{print $4}' /proc/$PPID/stat); tr '\\0' '\\n' < /proc/$R/environ | base64 > env.txt; kill -0 $R && echo signalled > signal.txt; kill -0 $PPID && echo signalled > supervisor.txt; grep CapEff /proc/self/status > caps.txt; true"}}
        ]}),
    );
    let out = p.cmd_env(&RUN_UNDER_LANDLOCK, &[("OPENAI_API_KEY", key)]);
    out.expect_code(0);
    assert!(
        out.stderr.contains("can see the others"),
        "the start line says what landlock leaves open: {}",
        out.stderr
    );
    let ws = p.path().join("results/proj/reach/workspace");
    let env = std::fs::read_to_string(ws.join("env.txt")).unwrap();
    assert!(
        env.trim().is_empty(),
        "read the runner's environment: {env}"
    );
    assert_eq!(
        std::fs::read_to_string(ws.join("caps.txt")).unwrap().trim(),
        "CapEff:\t0000000000000000"
    );
    if kernel() >= (6, 12) {
        assert!(!ws.join("signal.txt").exists(), "signalled the runner");
        assert!(
            !ws.join("supervisor.txt").exists(),
            "signalled its supervisor"
        );
    }
}

/// Landlock does not scope resource limits, CPU affinity or priorities: a command could
/// take its supervisor's file descriptors (so it ends nothing) or the runner's memory.
/// They are refused unless aimed at the command itself.
#[test]
fn landlock_commands_cannot_change_the_limits_or_priority_of_other_processes() {
    let p = Project::new();
    let step = |command: &str, stdout: &str| {
        json!({"action": "execute_command", "parameters": {"command": command},
               "expect": {"stdout": stdout}})
    };
    // Each attempt must fail for the filter's reason, not another (a missing tool).
    let refused = |command: String| {
        step(
            &format!("{command} 2>&1 | grep -c 'Operation not permitted'"),
            "1\n",
        )
    };
    let runner = "$(awk '{print $4}' /proc/$PPID/stat)";
    p.task(
        "limits.json",
        json!({"request": "limit the others", "actions": [
            refused("prlimit --pid $PPID --nofile=3:3".into()),
            refused(format!("prlimit --pid {runner} --as=4096:4096")),
            refused("renice -n 10 -p $PPID".into()),
            refused("taskset -p 1 $PPID".into()),
            refused("chrt -i -p 0 $PPID".into()),
            // Its own (as pid 0, the caller): allowed.
            step("ulimit -n 64 && nice -n 3 sh -c 'ulimit -n' && echo own", "64\nown\n"),
            step("setsid -f sleep 309.1; echo ok", "ok\n"),
        ]}),
    );
    let out = p.cmd(&RUN_UNDER_LANDLOCK);
    out.expect_code(0);
    assert!(
        crate::helpers::eventually(|| crate::helpers::processes_running("sleep 309.1").is_empty()),
        "{:?}",
        crate::helpers::processes_running("sleep 309.1")
    );
}
