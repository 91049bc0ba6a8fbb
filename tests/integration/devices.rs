//! UFO's device clients as the run's workers, over AIP on loopback: an AIP client of the
//! tests' own (tests/devices/aip_client.py, Python on PyPI's websockets, following
//! aip.md: registration, heartbeats, one command at a time, silence for what it cannot
//! route, reconnects with back-off) connects to `ufo-batch run --devices`. A batch spread
//! over three devices; a device killed mid-task and its task retried on another; a
//! device that never answers; a device that comes back; a wrong token, garbage and an
//! oversized frame; the injected key in no output byte. Without the client's venv
//! (scripts/setup-mcp.sh) they fail, saying so, unless skipped on request.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

use crate::helpers::{Output, Project, free_port, read_json};

/// The token devices present.
const TOKEN: &str = "device-token-7c1e4b9a2f";
/// The key the devices' tools check and the runner injects.
const KEY: &str = "ufo-device-key-a8d3f61c0e2b";

/// The tests' Python with websockets; the test fails without it (`helpers::require_stack`).
fn python() -> PathBuf {
    let python = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/mcp/venv/bin/python");
    let ok = python.is_file()
        && Command::new(&python)
            .args(["-c", "import websockets"])
            .status()
            .is_ok_and(|s| s.success());
    crate::helpers::require_stack("mcp", ok, "bash scripts/setup-mcp.sh");
    python
}

/// A device client, killed when dropped.
struct Device {
    child: Child,
}

impl Device {
    fn start(python: &Path, port: u16, id: &str, flags: &[&str]) -> Self {
        Self::start_with_token(python, port, id, TOKEN, flags)
    }

    fn start_with_token(python: &Path, port: u16, id: &str, token: &str, flags: &[&str]) -> Self {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/devices/aip_client.py");
        let child = Command::new(python)
            .arg(script)
            .arg(format!("ws://127.0.0.1:{port}/ws?token={token}"))
            .arg(id)
            .args(["--backoff", "0.2"])
            .args(flags)
            .env("UFO_MCP_API_KEY", KEY)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        Self { child }
    }

    fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Device {
    fn drop(&mut self) {
        self.kill();
    }
}

/// `ufo-batch run tasks --devices 127.0.0.1:PORT EXTRA --progress lines` started in
/// the project, on a free port; returns the port.
fn start(p: &Project, extra: &[&str], env: &[(&str, &str)]) -> (u16, crate::helpers::Started) {
    let port = free_port();
    let addr = format!("127.0.0.1:{port}");
    let mut args = vec!["run", "tasks", "--devices", addr.as_str()];
    args.extend_from_slice(extra);
    args.extend(["--progress", "lines"]);
    (port, p.start_env(&args, env))
}

fn project(extra: &str) -> Project {
    let p = Project::new();
    p.file(
        "ufo-batch.toml",
        &format!(
            "[devices]\ninject = {{ api_key = \"UFO_MCP_API_KEY\" }}\ncommand_timeout = \"3s\"\n{extra}"
        ),
    );
    p
}

fn env() -> [(&'static str, &'static str); 2] {
    [("UFO_BATCH_DEVICE_TOKEN", TOKEN), ("UFO_MCP_API_KEY", KEY)]
}

fn command(cmd: &str, stdout: &str) -> Value {
    json!({"action": "execute_command", "parameters": {"command": cmd}, "expect": {"stdout": stdout}})
}

/// Every byte under the run's folder and of its output: the key, or a long piece of
/// it, must be in none of them.
fn assert_no_key(dir: &Path, out: &Output) {
    let printed = format!("{}{}", out.stdout, out.stderr);
    let pieces = [KEY, &KEY[..8], &KEY[KEY.len() - 8..], TOKEN];
    for piece in pieces {
        assert!(
            !printed.contains(piece),
            "a secret in the output:\n{printed}"
        );
    }
    for entry in walkdir::WalkDir::new(dir).into_iter().flatten() {
        if entry.file_type().is_file() {
            let text = String::from_utf8_lossy(&std::fs::read(entry.path()).unwrap()).into_owned();
            for piece in pieces {
                assert!(
                    !text.contains(piece),
                    "a secret in {}",
                    entry.path().display()
                );
            }
        }
    }
}

#[test]
#[cfg_attr(skip_mcp, ignore = "UFO_BATCH_SKIP_TESTS: needs mcp")]
fn a_batch_is_spread_over_three_devices_and_its_plans_replay_there() {
    let python = python();
    let p = project("");
    for i in 0..9 {
        p.task(
            &format!("square{i}.json"),
            json!({"request": format!("square {i}"), "actions": [
                command(&format!("sleep 0.4; echo $(({i} * {i}))"), &format!("{}\n", i * i))]}),
        );
    }
    // Files written on the device, a file checked there, a command check and a tool of
    // the device's own (its api_key injected).
    p.task(
        "files.json",
        json!({"request": "double the lines", "files": {"in/a.txt": "x\ny\n"},
               "actions": [command("cat in/a.txt in/a.txt > out.txt && wc -l < out.txt", "4\n"),
                           {"action": "get_system_info", "parameters": {}},
                           {"action": "execute_command", "parameters": {"command": "printenv UFO_MCP_API_KEY"}}],
               "evaluate": [{"type": "file_equals", "path": "out.txt", "content": "x\ny\nx\ny\n"},
                            {"type": "command", "run": "test -f in/a.txt"}]}),
    );
    let (port, run) = start(&p, &["--devices-wait", "3", "--jobs", "3"], &env());
    let _devices: Vec<Device> = (1..=3)
        .map(|i| {
            Device::start(
                &python,
                port,
                &format!("linux-{i}"),
                &["--heartbeat", "0.3"],
            )
        })
        .collect();
    let out = run.wait_within(Duration::from_secs(120));
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let mut used = std::collections::BTreeSet::new();
    for i in 0..9 {
        let status = out.status(&format!("square{i}"));
        assert_eq!(status["status"], "passed", "{status}");
        used.insert(
            status["attempts"][0]["device"]
                .as_str()
                .unwrap()
                .to_string(),
        );
    }
    assert_eq!(used.len(), 3, "the tasks went to every device: {used:?}");
    let files = out.status("files");
    assert_eq!(files["status"], "passed", "{files}");
    assert!(
        out.stderr.contains("DEVICE  device linux-1 connected"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("tasks run on UFO device clients"),
        "{}",
        out.stderr
    );
    // The device's own tool answered with its facts; the key went in and never came out.
    let log = out.task_file("files", "response.log");
    assert!(log.contains("uname"), "{log}");
    assert!(
        !log.contains("api_key"),
        "the injected argument is not recorded: {log}"
    );
    assert!(
        log.contains("***"),
        "the key the device printed is masked: {log}"
    );
    assert_no_key(&out.run_dir("proj"), &out);
    // The task's folder on the device is gone.
    let folder = out.task_file("files", "task.log");
    let dir = folder
        .lines()
        .find_map(|l| l.split("the task's folder on the device: ").nth(1))
        .unwrap()
        .trim()
        .to_string();
    assert!(!Path::new(&dir).exists(), "{dir} was left");
}

#[test]
#[cfg_attr(skip_mcp, ignore = "UFO_BATCH_SKIP_TESTS: needs mcp")]
fn a_device_killed_mid_task_has_its_task_retried_on_another() {
    let python = python();
    let p = project("");
    p.task(
        "t.json",
        json!({"request": "survive", "actions": [command("echo survive-the-device", "survive-the-device\n")]}),
    );
    let (port, run) = start(
        &p,
        &["--devices-wait", "1", "--jobs", "1", "--retries", "1"],
        &env(),
    );
    // The only device gets the task and dies on it; another comes after.
    let mut doomed = Device::start(&python, port, "doomed", &["--die-on", "survive-the-device"]);
    assert!(
        crate::helpers::eventually(|| doomed.child.try_wait().is_ok_and(|s| s.is_some())),
        "the doomed device never got the task"
    );
    let _healthy = Device::start(&python, port, "healthy", &[]);
    let out = run.wait_within(Duration::from_secs(90));
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let status = out.status("t");
    assert_eq!(status["status"], "passed", "{status}");
    let attempts = status["attempts"].as_array().unwrap();
    assert_eq!(attempts.len(), 2, "{status}");
    assert_eq!(attempts[0]["status"], "error");
    assert_eq!(attempts[0]["device"], "doomed");
    assert!(
        attempts[0]["error"]
            .as_str()
            .unwrap()
            .contains("device doomed disconnected"),
        "{status}"
    );
    assert_eq!(attempts[1]["device"], "healthy");
    assert!(
        out.stderr
            .contains("DEVICE  warning: device doomed disconnected"),
        "{}",
        out.stderr
    );
}

#[test]
#[cfg_attr(skip_mcp, ignore = "UFO_BATCH_SKIP_TESTS: needs mcp")]
fn a_device_that_never_answers_fails_the_command_and_one_that_comes_back_serves_again() {
    let python = python();
    let p = project("");
    p.task(
        "silent.json",
        json!({"request": "r", "actions": [command("echo never-answered", "never-answered\n")]}),
    );
    // A command longer than the time the runner gives it there (command_timeout 3s).
    p.task(
        "slow.json",
        json!({"request": "r", "actions": [command("sleep 2; echo late", "late\n")]}),
    );
    let (port, run) = start(&p, &["--devices-wait", "1"], &env());
    let _mute = Device::start(&python, port, "mute", &["--mute-on", "never-answered"]);
    let out = run.wait_within(Duration::from_secs(60));
    assert_eq!(out.code, 1, "{}\n{}", out.stdout, out.stderr);
    let slow = out.status("slow");
    assert_eq!(slow["status"], "failed", "{slow}");
    assert!(
        slow["error"].as_str().unwrap().contains(
            "(the runner gave the command 1s on the device: [devices] command_timeout less 2 s"
        ),
        "{slow}"
    );
    // No answer is no verdict: the device is stuck (or the command outlasts the wait).
    let status = out.status("silent");
    assert_eq!(status["status"], "error", "{status}");
    assert!(
        status["error"]
            .as_str()
            .unwrap()
            .contains("device mute sent no result within 3s"),
        "{status}"
    );

    // A device killed between tasks and started again with its id serves the rest.
    let p = project("");
    for i in 0..4 {
        p.task(
            &format!("t{i}.json"),
            json!({"request": "r", "actions": [command("sleep 0.5; echo ok", "ok\n")]}),
        );
    }
    let (port, run) = start(
        &p,
        &["--devices-wait", "1", "--jobs", "1", "--retries", "2"],
        &env(),
    );
    let mut first = Device::start(&python, port, "phoenix", &[]);
    let done = |n: usize| {
        crate::helpers::eventually(|| {
            crate::helpers::count_status(&p.path().join("results/proj"), "passed") >= n
        })
    };
    assert!(done(1), "a first task ends");
    first.kill();
    std::thread::sleep(Duration::from_millis(300));
    let _again = Device::start(&python, port, "phoenix", &[]);
    let out = run.wait_within(Duration::from_secs(90));
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    // The old connection's end may be seen before or after the new one registers.
    assert!(
        out.stderr.contains("device phoenix disconnected"),
        "{}",
        out.stderr
    );
    let arrivals = out
        .stderr
        .matches("DEVICE  device phoenix connected")
        .count()
        + out
            .stderr
            .matches("DEVICE  device phoenix reconnected")
            .count();
    assert_eq!(arrivals, 2, "{}", out.stderr);
}

/// A raw WebSocket client of the test itself.
fn raw_client(
    port: u16,
    token: &str,
) -> Result<tungstenite::WebSocket<std::net::TcpStream>, tungstenite::Error> {
    let stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    tungstenite::client(format!("ws://127.0.0.1:{port}/ws?token={token}"), stream)
        .map(|(ws, _)| ws)
        .map_err(|e| match e {
            tungstenite::HandshakeError::Failure(e) => e,
            tungstenite::HandshakeError::Interrupted(_) => tungstenite::Error::ConnectionClosed,
        })
}

#[test]
fn a_wrong_token_garbage_and_oversized_frames_are_refused_and_the_run_still_ends() {
    let p = project("wait_for = \"3s\"\nmax_message_mib = 1\n");
    p.task(
        "t.json",
        json!({"request": "r", "actions": [command("echo hi", "hi\n")]}),
    );
    let (port, run) = start(&p, &["--devices-wait", "1"], &env());
    assert!(crate::helpers::eventually(|| std::net::TcpStream::connect(
        ("127.0.0.1", port)
    )
    .is_ok()));
    // Wrong tokens: refused in the handshake; a flood of them is told once.
    for _ in 0..5 {
        match raw_client(port, "not-the-token") {
            Err(tungstenite::Error::Http(response)) => assert_eq!(response.status(), 401),
            other => panic!("a wrong token was let in: {:?}", other.map(|_| ())),
        }
    }
    // Garbage in place of a registration: told why, and closed.
    let mut ws = raw_client(port, TOKEN).unwrap();
    ws.send(tungstenite::Message::text("hello?")).unwrap();
    let answer = ws.read().unwrap();
    assert!(
        answer.to_text().unwrap().contains("not an AIP frame"),
        "{answer}"
    );
    // An id that would write lines and terminal codes of its own into the output.
    let mut ws = raw_client(port, TOKEN).unwrap();
    let forged = "a\u{1b}[2J\n2026-01-01T00:00:00Z INFO  device fake connected";
    ws.send(tungstenite::Message::text(
        json!({"type": "register", "status": "ok", "client_id": forged, "metadata": {"platform": "linux"}}).to_string(),
    ))
    .unwrap();
    let answer = ws.read().unwrap();
    assert!(
        answer.to_text().unwrap().contains("is not an id"),
        "{answer}"
    );
    // A client whose library pings first; then garbage, then a frame over the limit.
    let mut ws = raw_client(port, TOKEN).unwrap();
    ws.send(tungstenite::Message::Ping(Vec::new().into()))
        .unwrap();
    ws.send(tungstenite::Message::text(
        json!({"type": "register", "status": "ok", "client_id": "odd", "metadata": {"platform": "plan9"}}).to_string(),
    ))
    .unwrap();
    let accepted = loop {
        match ws.read().unwrap() {
            tungstenite::Message::Text(t) => break t,
            _ => continue,
        }
    };
    assert!(accepted.contains("\"heartbeat\""), "{accepted}");
    ws.send(tungstenite::Message::text("{not json")).unwrap();
    // The server may close the connection before it has all of it.
    let _ = ws.send(tungstenite::Message::text("x".repeat(2 << 20)));
    let _ = ws.flush();
    // No device is there after the wait: the run stops, and says so.
    let out = run.wait_within(Duration::from_secs(60));
    assert_eq!(out.code, 1, "{}\n{}", out.stdout, out.stderr);
    assert_ne!(out.row("t")["status"], "passed");
    for needle in [
        "refused a connection from 127.0.0.1",
        ": wrong token",
        "not an AIP frame",
        "is not an id",
        "device odd: not an AIP frame",
        "refused device odd from 127.0.0.1",
        "(plan9): it lists no tools",
        "no device connected within 3s: the run stops",
    ] {
        assert!(out.stderr.contains(needle), "{needle}\n{}", out.stderr);
    }
    assert_eq!(
        out.stderr.matches(": wrong token").count(),
        1,
        "{}",
        out.stderr
    );
    assert!(
        !out.stderr
            .contains("\n2026-01-01T00:00:00Z INFO  device fake"),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains('\u{1b}'), "{}", out.stderr);
    let _ = std::io::stderr().flush();
}

#[test]
fn ctrl_c_while_waiting_for_devices_ends_the_run_as_interrupted() {
    let p = project("");
    p.task(
        "t.json",
        json!({"request": "r", "actions": [command("echo hi", "hi\n")]}),
    );
    let (_, run) = start(&p, &["--devices-wait", "2"], &env());
    std::thread::sleep(Duration::from_millis(800));
    run.signal(libc::SIGINT);
    let out = run.wait_within(Duration::from_secs(30));
    assert_eq!(out.code, 130, "{}\n{}", out.stdout, out.stderr);
    let run_json = read_json(&out.run_dir("proj").join("run.json"));
    assert_eq!(run_json["state"], "interrupted", "{run_json}");
}

#[test]
#[cfg_attr(skip_mcp, ignore = "UFO_BATCH_SKIP_TESTS: needs mcp")]
fn on_ufos_own_linux_tool_a_task_runs_without_a_folder_and_one_with_files_is_refused() {
    let python = python();
    let p = project("");
    p.task(
        "plain.json",
        json!({"request": "r", "actions": [command("echo allowed", "allowed\n")]}),
    );
    p.task(
        "with_files.json",
        json!({"request": "r", "files": {"a.txt": "x"}, "actions": [command("cat a.txt", "x")]}),
    );
    // A plan recorded locally calls a built-in tool this device does not offer.
    p.task(
        "local_tool.json",
        json!({"request": "r", "actions": [command("echo allowed", "allowed\n"),
               {"action": "read_file", "parameters": {"path": "a.txt"}}]}),
    );
    let (port, run) = start(&p, &["--devices-wait", "1", "--retries", "2"], &env());
    let _strict = Device::start(&python, port, "strict", &["--ufo-allowlist"]);
    let out = run.wait_within(Duration::from_secs(60));
    assert_eq!(out.code, 1, "{}\n{}", out.stdout, out.stderr);
    assert_eq!(out.status_of("plain"), "passed");
    assert!(
        out.task_file("plain", "task.log")
            .contains("refused to make the task's folder"),
        "{}",
        out.task_file("plain", "task.log")
    );
    let refused = out.status("with_files");
    assert_eq!(refused["status"], "error", "{refused}");
    assert_eq!(
        refused["attempts"].as_array().unwrap().len(),
        1,
        "not retried: {refused}"
    );
    assert!(
        refused["error"]
            .as_str()
            .unwrap()
            .contains("the task's files cannot be written there"),
        "{refused}"
    );
    // No verdict on the task: the device cannot run it (retried, as another might).
    let mismatch = out.status("local_tool");
    assert_eq!(mismatch["status"], "error", "{mismatch}");
    assert!(
        mismatch["error"]
            .as_str()
            .unwrap()
            .contains("offers no tool `read_file`"),
        "{mismatch}"
    );
}

#[test]
#[cfg_attr(skip_mcp, ignore = "UFO_BATCH_SKIP_TESTS: needs mcp")]
fn desktop_tasks_run_on_a_windows_device_replayed_and_by_the_two_tier_agents() {
    use crate::mock_llm::{MockLlm, Reply, marker, verdict};
    let python = python();
    let mock = MockLlm::start();
    // The HostAgent picks the window the request listed; the AppAgent types into the
    // control the request listed, with the device's own parameter names.
    let listed = crate::desktop_agents::listed;
    mock.script(
        "win",
        vec![
            Reply::computed(move |body| {
                let w = listed(body).into_iter().find(|w| w["name"] == "notes - Notepad").expect("the window is listed");
                json!({"observation": "", "thought": "", "current_subtask": "Type hi", "message": [], "status": "ASSIGN",
                       "plan": [], "function": "select_application_window", "arguments": {"id": w["id"], "name": w["name"]},
                       "comment": ""})
                .to_string()
            }),
            Reply::Content(
                json!({"observation": "", "thought": "", "action": {"function": "keyboard_input",
                       "arguments": {"id": "1", "name": "Text Editor", "keys": "hi"}, "status": "FINISH"},
                       "plan": [], "comment": "typed"})
                .to_string(),
            ),
            Reply::Content(
                json!({"observation": "", "thought": "", "current_subtask": "", "message": [], "status": "FINISH",
                       "plan": [], "function": "", "arguments": {}, "comment": "done"})
                .to_string(),
            ),
        ],
    )
    .judge("win", vec![verdict("yes", "the note says hi")]);
    let p = project(&format!(
        "[llm]\nmodel = \"test-model\"\ntimeout = \"2s\"\nbase_url = \"{}\"\n",
        mock.url()
    ));
    // One device, one task at a time, in id order: the device keeps its state between
    // tasks (what `agents` typed is still there when `ui` types), as the README says.
    p.task(
        "ui.json",
        json!({"request": "type into the note", "app": "notepad", "actions": [
            {"action": "select_application_window", "parameters": {"name": "notes"}},
            {"action": "keyboard_input", "parameters": {"name": "Text Editor", "control_type": "Edit", "keys": "hello"}},
            {"action": "texts", "parameters": {"name": "Text Editor", "control_type": "Edit"}, "expect": {"text": "hihello"}}],
               "recorded": {"status": "passed"}}),
    );
    p.task(
        "agents.json",
        json!({"task": format!("Type hi into the note {}", marker("win")), "app": "notepad"}),
    );
    let port = free_port();
    let addr = format!("127.0.0.1:{port}");
    let mut env = env().to_vec();
    env.push(("OPENAI_API_KEY", "sk-test-not-a-real-key-000"));
    let run = p.start_env(
        &[
            "run",
            "tasks",
            "--devices",
            &addr,
            "--devices-wait",
            "1",
            "--jobs",
            "1",
            "--progress",
            "lines",
        ],
        &env,
    );
    let _win = Device::start(&python, port, "win-01", &["--platform", "windows"]);
    let out = run.wait_within(Duration::from_secs(90));
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let ui = out.status("ui");
    assert_eq!(
        (ui["status"].as_str(), ui["attempts"][0]["device"].as_str()),
        (Some("passed"), Some("win-01")),
        "{ui}"
    );
    let agents = out.status("agents");
    assert_eq!(agents["status"], "passed", "{agents}");
    // The agents saw the device's screen: the windows for the HostAgent, the controls
    // for the AppAgent, each with its screenshots; they are saved for the trajectory.
    let requests = mock.received_for("win");
    assert!(requests[0].body.to_string().contains("notes - Notepad"));
    assert!(requests[1].body.to_string().contains("Text Editor"));
    for r in &requests[..3] {
        assert!(
            r.body.to_string().contains("data:image/png;base64,"),
            "{}",
            r.body
        );
    }
    let run_dir = out.run_dir("proj");
    assert!(run_dir.join("agents/action_step1_annotated.png").exists());
    assert!(run_dir.join("agents/action_step_final.png").exists());
    assert!(
        out.stderr.contains("device win-01 connected"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("(windows, 9 tools)"), "{}", out.stderr);
}

/// What a device answers is held to a local command's bounds (90 MB of output is cut
/// to 64 KiB before it is held or written), its control characters are escaped on the
/// pages, and a command's `cwd` follows the local rule whoever gives it: a recorded
/// plan's is checked as its task file is, a model's on the device (relative to the
/// task's folder, never out of it).
#[test]
#[cfg_attr(skip_mcp, ignore = "UFO_BATCH_SKIP_TESTS: needs mcp")]
fn a_devices_answers_are_bounded_and_escaped_and_its_paths_are_the_tasks() {
    use crate::mock_llm::{MockLlm, action, finish, marker};
    let python = python();
    let mock = MockLlm::start();
    let p = Project::new();
    p.file(
        "ufo-batch.toml",
        "[devices]\ninject = { api_key = \"UFO_MCP_API_KEY\" }\ncommand_timeout = \"60s\"\n\
         [llm]\nmodel = \"test-model\"\ntimeout = \"5s\"\n",
    );
    p.task(
        "huge.json",
        json!({"request": "r", "actions": [{"action": "execute_command", "parameters": {"command": "printf '\\033]0;owned\\007 start'; head -c 90000000 /dev/zero | tr '\\0' x"}}]}),
    );
    p.task(
        "plan_cwd.json",
        json!({"request": "r", "actions": [{"action": "execute_command", "parameters": {"command": "pwd", "cwd": "/etc"}}]}),
    );
    mock.script(
        "cwds",
        vec![
            action(
                "execute_command",
                json!({"command": "pwd", "cwd": "/etc"}),
                "CONTINUE",
            ),
            action(
                "execute_command",
                json!({"command": "pwd", "cwd": "sub/../../.."}),
                "CONTINUE",
            ),
            action(
                "execute_command",
                json!({"command": "cat x.txt", "cwd": "sub"}),
                "CONTINUE",
            ),
            finish("read it"),
        ],
    );
    p.task(
        "model_cwd.json",
        json!({"request": format!("Read sub/x.txt {}", marker("cwds")), "files": {"sub/x.txt": "in the task's folder"}}),
    );
    let url = mock.url();
    let (port, run) = start(
        &p,
        &[
            "--devices-wait",
            "1",
            "--jobs",
            "2",
            "--llm-base-url",
            &url,
            "--eval",
            "none",
        ],
        &env(),
    );
    let _device = Device::start(&python, port, "d1", &[]);
    let (out, peak_kib) = run.wait_measuring(Duration::from_secs(180));
    eprintln!("the runner's peak resident memory: {} MiB", peak_kib / 1024);
    let huge = out.status("huge");
    assert_eq!(huge["status"], "passed", "{huge}\n{}", out.stderr);
    let log = p.path().join("results/proj/huge/response.log");
    let logged = std::fs::metadata(&log).unwrap().len();
    assert!(logged < 1 << 20, "response.log is {logged} bytes");
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(
        text.contains("bytes left out"),
        "{}",
        &text[..2000.min(text.len())]
    );
    let page = std::fs::read_to_string(p.path().join("results/proj/huge/task.html")).unwrap();
    assert!(
        !page.contains('\u{1b}') && !page.contains('\u{7}'),
        "raw control characters on the page"
    );
    assert!(peak_kib < 400 * 1024, "the runner held {peak_kib} KiB");
    // The plan's cwd: its task file is refused, as it is for a local run.
    let plan = out.status("plan_cwd");
    assert_eq!(
        (plan["status"].as_str(), plan["blame"].as_str()),
        (Some("error"), Some("task_file")),
        "{plan}"
    );
    assert!(
        plan["error"]
            .as_str()
            .unwrap()
            .contains("`/etc` is an absolute path"),
        "{plan}"
    );
    // The model's: refused on the device as the agent's failed actions, and a relative
    // one runs in the task's folder there.
    let log =
        std::fs::read_to_string(p.path().join("results/proj/model_cwd/response.log")).unwrap();
    let steps: Vec<Value> = log
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let result = |i: usize| steps[i]["action"][0]["result"].clone();
    assert_eq!(result(0)["status"], "failure", "{}", steps[0]);
    assert!(
        result(0)["error"]
            .as_str()
            .unwrap()
            .contains("is an absolute path"),
        "{}",
        steps[0]
    );
    assert_eq!(result(1)["status"], "failure", "{}", steps[1]);
    assert!(
        result(1)["error"]
            .as_str()
            .unwrap()
            .contains("leaves the workspace"),
        "{}",
        steps[1]
    );
    assert_eq!(result(2)["status"], "success", "{}", steps[2]);
    assert_eq!(
        result(2)["result"]["stdout"],
        "in the task's folder",
        "{}",
        steps[2]
    );
}
