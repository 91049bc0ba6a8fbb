//! What a task's commands cannot do under the default sandbox (a jail per task): read
//! the runner's environment (its API key), signal the runner, change anything outside
//! their folders (contents or metadata), make or use device nodes, reach Unix sockets of
//! the machine, or outlive their task, even when the runner itself is killed. Under
//! Landlock (no namespaces) they still cannot outlive their task.

use std::time::Duration;

use serde_json::{Value, json};

use crate::helpers::{
    Project, RUN_UNDER_LANDLOCK, commands_running, eventually, process_table, processes_running,
    processes_working_in, read_json,
};

const KEY: &str = "sk-test-CONTAINMENT-0123456789abcdef";

/// A recorded plan whose every command must be refused (or find nothing): each step
/// runs the attack and then prints whether it worked, so the replay's `expect` checks it.
fn attacks(p: &Project) {
    let outside = p.path().join("outside.txt");
    std::fs::write(&outside, "untouched").unwrap();
    let sock = p.path().join("host.sock");
    let outside = outside.display().to_string();
    let sock = sock.display().to_string();
    let step = |command: String, stdout: &str| {
        json!({"action": "execute_command", "parameters": {"command": command},
               "expect": {"status": "success", "stdout": stdout}})
    };
    let actions = vec![
        step(
            format!(
                "cat /proc/$PPID/environ /proc/*/environ 2>/dev/null | tr '\\0' '\\n' | grep -c {KEY} || true"
            ),
            "0\n",
        ),
        step("env | grep -c OPENAI || true".into(), "0\n"),
        step(
            "kill -9 $PPID 2>/dev/null; kill -9 -1 2>/dev/null; echo alive".into(),
            "alive\n",
        ),
        step(
            format!("touch {outside} 2>/dev/null || echo refused"),
            "refused\n",
        ),
        step(
            format!("chmod u+s {outside} 2>/dev/null || echo refused"),
            "refused\n",
        ),
        step(
            format!("chown 1:1 {outside} 2>/dev/null || echo refused"),
            "refused\n",
        ),
        step(
            "mknod z c 1 5 2>/dev/null || echo refused".into(),
            "refused\n",
        ),
        step(
            "(echo x > /dev/kmsg) 2>/dev/null || echo refused".into(),
            "refused\n",
        ),
        step(
            "test -e /dev/sda -o -e /dev/vda -o -e /dev/mem && echo visible || echo hidden".into(),
            "hidden\n",
        ),
        step(
            format!(
                "python3 -c 'import socket; s = socket.socket(socket.AF_UNIX); s.connect(\"{sock}\")' 2>/dev/null || echo refused"
            ),
            "refused\n",
        ),
        step(
            "ls /proc | grep -c '^[0-9]' | awk '$1 < 10 { print \"own\" }'".into(),
            "own\n",
        ),
        step(
            "setsid -f sleep 303.3131; (sleep 303.3132 &); echo started".into(),
            "started\n",
        ),
        step("echo done > inside.txt && cat inside.txt".into(), "done\n"),
    ];
    p.task(
        "attack.json",
        json!({"request": "escape", "actions": actions}),
    );
}

#[test]
fn a_task_cannot_escape_its_jail() {
    let p = Project::new();
    attacks(&p);
    let listener = std::os::unix::net::UnixListener::bind(p.path().join("host.sock")).unwrap();
    listener.set_nonblocking(true).unwrap();
    let out = p.cmd_env(
        &["run", "tasks", "--progress", "lines", "--sandbox", "jail"],
        &[("OPENAI_API_KEY", KEY)],
    );
    out.expect_code(0);
    assert!(out.stderr.contains("sandbox jail"), "{}", out.stderr);
    assert!(
        listener.accept().is_err(),
        "a task reached the host's socket"
    );
    assert_eq!(
        std::fs::read_to_string(p.path().join("outside.txt")).unwrap(),
        "untouched"
    );
    let mode = std::fs::metadata(p.path().join("outside.txt")).unwrap();
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        mode.permissions().mode() & 0o4000,
        0,
        "a setuid bit was set"
    );
    assert!(
        eventually(|| processes_running("sleep 303.313").is_empty()),
        "processes outlived their task: {:?}",
        processes_running("sleep 303.313")
    );
    let log = out.task_file("attack", "task.log");
    assert!(
        log.contains("ended 2 processes left running by commands"),
        "{log}"
    );
}

#[test]
fn the_key_reaches_no_output_byte() {
    // Even a task file that holds the key (and so prints it) leaves no trace of it.
    let p = Project::new();
    p.task(
        "leak.json",
        json!({"request": format!("say {KEY}"), "actions": [
            {"action": "execute_command", "parameters": {"command": format!("echo {KEY}; echo {KEY} >&2; echo {KEY} > k.txt")}},
            {"action": "read_file", "parameters": {"path": "k.txt"}}]}),
    );
    // Ids that hold the key (a file named with it, an "id" with it, a bad file with it)
    // would name their results folders with it.
    p.task(
        &format!("{KEY}.json"),
        crate::helpers::shell_plan("named", &["true"]),
    );
    p.task(
        "with_id.json",
        json!({"id": format!("id-{KEY}"), "request": "r", "actions": []}),
    );
    p.file(&format!("tasks/bad-{KEY}.json"), "{");
    // Commands long enough that titles and the divergence message shorten them inside
    // the key: what is left of it must go too.
    for pad in [50, 62, 75] {
        p.task(
            &format!("cut{pad}.json"),
            json!({"request": "r", "actions": [{"action": "execute_command",
                "parameters": {"command": format!("echo {} {KEY} tail", "x".repeat(pad))},
                "expect": {"stdout": "never"}}]}),
        );
    }
    let out = p.cmd_env(
        &["run", "tasks", "--progress", "lines"],
        &[("OPENAI_API_KEY", KEY)],
    );
    out.expect_code(1);
    for printed in [&out.stderr, &out.stdout] {
        assert!(
            !printed.contains(KEY) && !printed.contains(&KEY[8..20]),
            "{printed}"
        );
    }
    assert_eq!(out.status_of("leak"), "passed");
    let summary = out.summary();
    assert_eq!(
        (
            summary["totals"]["total"].as_u64(),
            summary["totals"]["error"].as_u64()
        ),
        (Some(7), Some(3)),
        "{summary}"
    );
    assert!(
        out.stderr
            .contains("the id holds the API key in the run's environment"),
        "{}",
        out.stderr
    );
    for command in [&["report", "results/proj"][..], &["validate", "tasks"]] {
        let out = p.cmd_env(command, &[("OPENAI_API_KEY", KEY)]);
        assert!(!out.stderr.contains(KEY) && !out.stdout.contains(KEY));
        assert!(!out.stdout.contains(&KEY[..8]), "{}", out.stdout);
    }
    let again = p.cmd_env(
        &["run", "tasks", "--progress", "lines"],
        &[("OPENAI_API_KEY", KEY)],
    );
    assert!(
        again.stderr.contains("4 kept from earlier"),
        "every result has a folder of its own and is found again: {}",
        again.stderr
    );
    let mut leaks = Vec::new();
    for entry in walkdir::WalkDir::new(out.run_dir("proj"))
        .into_iter()
        .flatten()
    {
        let in_workspace = entry
            .path()
            .components()
            .any(|c| c.as_os_str() == "workspace");
        let name = entry.path().to_string_lossy();
        if name.contains(KEY) || name.contains(&KEY[..8]) || name.contains(&KEY[8..20]) {
            leaks.push(format!("the name {name}"));
        }
        if entry.file_type().is_file() && !in_workspace {
            let text = std::fs::read_to_string(entry.path()).unwrap_or_default();
            if text.contains(KEY) || text.contains(&KEY[..8]) || text.contains(&KEY[8..20]) {
                leaks.push(entry.path().display().to_string());
            }
        }
    }
    assert!(leaks.is_empty(), "the key is in {leaks:?}");
    let step: Value = serde_json::from_str(
        out.task_file("leak", "response.log")
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    assert!(
        step["action"][0]["result"]["result"]["stdout"]
            .as_str()
            .unwrap()
            .contains("***")
    );
}

#[test]
fn nothing_outlives_a_runner_killed_with_sigkill() {
    nothing_outlives_a_killed_runner("jail", "304");
}

/// Without namespaces: each command's supervisor ends what the command left when the
/// runner is gone.
#[test]
fn nothing_outlives_a_runner_killed_with_sigkill_under_landlock() {
    nothing_outlives_a_killed_runner("landlock", "305");
}

/// Three tasks each leave a process in a session of its own and wait in another; the
/// runner is killed with SIGKILL. `marker` keeps the processes of concurrent tests apart.
fn nothing_outlives_a_killed_runner(sandbox: &str, marker: &str) {
    let p = Project::new();
    for i in 0..3 {
        p.task(
            &format!("t{i}.json"),
            json!({"request": "r", "actions": [{"action": "execute_command",
                "parameters": {"command": format!("setsid -f sleep {marker}.{i}; sleep {marker}.9{i}")}}]}),
        );
    }
    let run = p.start(&[
        "run",
        "tasks",
        "--jobs",
        "3",
        "--progress",
        "lines",
        "--sandbox",
        sandbox,
    ]);
    let waiting = format!("sleep {marker}.9");
    let all = format!("sleep {marker}.");
    assert!(
        eventually(|| commands_running(&waiting).len() == 3),
        "{:?}",
        commands_running(&all)
    );
    assert_eq!(commands_running(&all).len(), 6);
    run.signal(libc::SIGKILL);
    let _ = run.wait_within(Duration::from_secs(10));
    assert!(
        eventually(|| processes_running(&all).is_empty()),
        "survivors: {:?}",
        processes_running(&all)
    );
    // Nor does the runner's jail factory, or a jail it made: they work where the
    // runner was started.
    assert!(
        eventually(|| processes_working_in(p.path()).is_empty()),
        "survivors: {:?}",
        processes_working_in(p.path())
    );
    // The next run resumes: the three tasks were interrupted, not lost.
    let out = p.cmd_within(
        &[
            "run",
            "tasks",
            "--progress",
            "lines",
            "--timeout",
            "1s",
            "--sandbox",
            sandbox,
        ],
        Duration::from_secs(60),
    );
    out.expect_code(1);
    let record = read_json(&out.run_dir("proj").join("t0/status.json"));
    assert_eq!(record["attempts"][0]["status"], "interrupted", "{record}");
    assert!(
        eventually(|| processes_running(&all).is_empty()),
        "survivors of the resumed run: {:?}",
        processes_running(&all)
    );
}

/// Without namespaces, a task's commands still leave nothing running: what they start in
/// the background or in sessions of their own is ended with the task, when the task
/// ends normally and when its timeout ends it; their exit codes and signals still read
/// as the commands' own.
#[test]
fn a_task_under_landlock_leaves_no_process_behind() {
    let p = Project::new();
    let step = |command: &str, expect: Value| json!({"action": "execute_command", "parameters": {"command": command}, "expect": expect});
    p.task(
        "leaves.json",
        json!({"request": "leave processes", "actions": [
            step("setsid -f sleep 306.1; (setsid sleep 306.2 &); sleep 306.3 & echo started",
                 json!({"status": "success", "stdout": "started\n"})),
            step("exit 3", json!({"status": "failure", "exit_code": 3})),
            step("echo out; echo err >&2; kill -9 $$",
                 json!({"status": "failure", "stdout": "out\n"})),
        ]}),
    );
    p.task(
        "times_out.json",
        json!({"request": "time out", "actions": [
            step("setsid -f sleep 306.4; sleep 306.5", json!({"status": "success"})),
        ]}),
    );
    let out = p.cmd_within(
        &[&RUN_UNDER_LANDLOCK[..], &["--timeout", "5s"]].concat(),
        Duration::from_secs(60),
    );
    out.expect_code(1);
    assert_eq!(out.status_of("leaves"), "passed", "{}", out.stderr);
    assert_eq!(out.status_of("times_out"), "timeout", "{}", out.stderr);
    let log = out.task_file("leaves", "response.log");
    let step: Value = serde_json::from_str(log.lines().nth(2).unwrap()).unwrap();
    let killed = &step["action"][0]["result"]["result"];
    assert_eq!(
        (&killed["exit_code"], &killed["signal"], &killed["stderr"]),
        (&Value::Null, &json!(9), &json!("err\n")),
        "{killed}"
    );
    assert!(
        eventually(|| processes_running("sleep 306.").is_empty()),
        "survivors: {:?}",
        processes_running("sleep 306.")
    );
    let log = out.task_file("leaves", "task.log");
    assert!(log.contains("left running by commands"), "{log}");
}

/// Every jail that ends is reaped by the runner's own processes: none is left as a
/// zombie for the machine's init, which may be slow to reap (in a container, it may
/// never). The runner runs as the init of a PID namespace of its own (`unshare`), so
/// that a jail orphaned on the way would come to it (which reaps only what it started)
/// rather than to this machine's init, where other tests' processes are.
#[test]
fn ended_jails_are_reaped_by_the_runner_not_left_to_init() {
    let p = Project::new();
    for i in 0..12 {
        p.task(
            &format!("quick{i:02}.json"),
            crate::helpers::shell_plan("q", &["true"]),
        );
    }
    // Holds the run open while the quick tasks' jails end (the test ends it).
    p.task(
        "a_slow.json",
        crate::helpers::shell_plan("s", &["sleep 300"]),
    );
    let log = p.path().join("runner.log");
    let mut unshare = std::process::Command::new("unshare")
        .args([
            "--user",
            "--map-root-user",
            "--pid",
            "--fork",
            "--kill-child",
        ])
        .arg(env!("CARGO_BIN_EXE_ufo-batch"))
        .args(["run", "tasks", "--jobs", "3", "--sandbox", "jail"])
        .args(["--progress", "lines"])
        .current_dir(p.path())
        .env_remove("OPENAI_API_KEY")
        .stdout(std::process::Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .expect("unshare (util-linux) runs");
    let said = || std::fs::read_to_string(&log).unwrap_or_default();
    let children = |parent: i32| -> Vec<i32> {
        process_table()
            .into_iter()
            .filter(|p| p.parent == parent && !p.zombie)
            .map(|p| p.pid)
            .collect()
    };
    let unshared = unshare.id() as i32;
    let mut runner = None;
    let started = eventually(|| {
        runner = children(unshared).first().copied();
        runner.is_some()
    });
    let run_dir = p.path().join("results/proj");
    let quick_done =
        started && eventually(|| crate::helpers::count_status(&run_dir, "passed") >= 12);
    // Zombies under the runner or any of its processes (the jail factory among them):
    // seen twice, 200 ms apart, so that one about to be reaped does not count.
    let zombies = || -> Vec<i32> {
        let Some(runner) = runner else {
            return Vec::new();
        };
        let all = process_table();
        let ours: Vec<i32> = std::iter::once(runner)
            .chain(all.iter().filter(|p| p.parent == runner).map(|p| p.pid))
            .collect();
        all.iter()
            .filter(|p| p.zombie && ours.contains(&p.parent))
            .map(|p| p.pid)
            .collect()
    };
    let first = zombies();
    std::thread::sleep(std::time::Duration::from_millis(200));
    let left: Vec<i32> = zombies()
        .into_iter()
        .filter(|pid| first.contains(pid))
        .collect();
    let still_running = unshare.try_wait().ok().flatten().is_none();
    let _ = unshare.kill();
    let _ = unshare.wait();
    assert!(started, "the runner did not start:\n{}", said());
    assert!(quick_done, "the quick tasks did not finish:\n{}", said());
    assert!(still_running, "the run ended early:\n{}", said());
    assert!(
        said().contains("sandbox jail"),
        "not run in jails:\n{}",
        said()
    );
    assert_eq!(left, Vec::<i32>::new(), "ended jails left unreaped");
}

/// Processes that make ending them hard, under Landlock: a process traced by its own
/// child (its corpse can only be reaped once the tracer is gone), hundreds of
/// background processes, a chain of processes that keep forking, and a command whose
/// own timeout ends it with all of those running. Nothing is left, and the run does not
/// wait on any of them.
#[cfg(target_arch = "x86_64")]
#[test]
fn hard_to_end_processes_under_landlock_are_all_ended() {
    let p = Project::new();
    // T lets any process trace it (Yama) and forks X; X attaches to T with ptrace, says
    // so, keeps a sleeper and waits. (x86_64 numbers for perl's `syscall`: 157 prctl,
    // 0x59616d61 PR_SET_PTRACER; 101 ptrace, 16 PTRACE_ATTACH, 7 PTRACE_CONT.)
    let trap = r#"my $t = $$; syscall(157, 0x59616d61, -1, 0, 0, 0); my $x = fork(); if ($x == 0) { if (syscall(101, 16, $t, 0, 0) == 0) { print "attached\n" } waitpid($t, 0x40000000); syscall(101, 7, $t, 0, 0); if (fork() == 0) { exec "sleep", "308.1" } sleep 300; exit 0 } sleep 300;"#;
    let chain = r#"sub link { my $n = shift; while (1) { my $c = fork(); if (defined $c && $c == 0) { exec "sleep", "308.3" if $n == 0; link($n - 1) } sleep 1 } } link(40);"#;
    let step = |command: String, expect: Value| json!({"action": "execute_command", "parameters": {"command": command}, "expect": expect});
    p.task(
        "hard.json",
        json!({"request": "leave hard processes", "actions": [
            step(format!("perl -e '{trap}' & sleep 0.5; echo ok"), json!({"stdout": "attached\nok\n"})),
            step("for i in $(seq 300); do sleep 308.2 & done; echo ok".into(), json!({"stdout": "ok\n"})),
            {"action": "execute_command", "parameters": {"command": format!("perl -e '{chain}' & sleep 30"), "timeout": 2},
             "expect": {"status": "failure"}},
        ]}),
    );
    let started = std::time::Instant::now();
    let out = p.cmd_within(&RUN_UNDER_LANDLOCK, Duration::from_secs(60));
    out.expect_code(0);
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "the run waited on its processes: {:?}",
        started.elapsed()
    );
    // The perl processes' command lines hold their sleepers' marker too.
    assert!(
        eventually(|| processes_running("308.").is_empty()),
        "survivors: {:?}",
        processes_running("308.")
    );
    let log = out.task_file("hard", "task.log");
    assert!(log.contains("left running by commands"), "{log}");
    assert!(!log.contains("not ended"), "{log}");
}

/// A command has no controlling terminal, even when the runner has one: the terminal's
/// job control cannot stop its supervisor, nor the runner. (The runner gets a terminal
/// from `script`.)
#[test]
#[cfg_attr(skip_script, ignore = "UFO_BATCH_SKIP_TESTS: needs script")]
fn commands_have_no_terminal_even_when_the_runner_has_one() {
    let here = std::process::Command::new("script")
        .arg("--version")
        .output()
        .is_ok();
    crate::helpers::require_stack("script", here, "apt-get install bsdutils");
    for sandbox in ["jail", "landlock"] {
        let p = Project::new();
        p.task(
            "tty.json",
            json!({"request": "find a terminal", "actions": [
                {"action": "execute_command",
                 "parameters": {"command": "(exec 3</dev/tty) 2>/dev/null && echo terminal || echo none"},
                 "expect": {"stdout": "none\n"}}
            ]}),
        );
        let runner = format!(
            "{} run tasks --progress lines --sandbox {sandbox}",
            env!("CARGO_BIN_EXE_ufo-batch")
        );
        let out = std::process::Command::new("script")
            .args(["-qfec", &runner, "/dev/null"])
            .current_dir(p.path())
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        let printed = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{sandbox}: {printed}");
        let status = read_json(&p.path().join("results/proj/tty/status.json"));
        assert_eq!(status["status"], "passed", "{sandbox}: {status} {printed}");
    }
}
