//! Against microsoft/UFO's own, unmodified code (the copy `scripts/setup-ufo.sh` sets up), not
//! an imitation of it: UFO's device client (`python -m ufo.client.client`) in front of
//! UFO's Linux MCP server (`python -m ufo.client.mcp.http_servers.linux_mcp_server`), as
//! `run --devices` workers; and the same server as an `[[mcp.servers]]` HTTP server. They
//! run from the venv `scripts/setup-ufo.sh` makes (`.ci/run` runs it); without it these
//! tests fail, saying so (or are skipped on request: `UFO_BATCH_SKIP_TESTS=ufo`).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::helpers::{Output, Project, free_port, read_json};

/// The token the devices present.
const TOKEN: &str = "ufo-real-token-5d2e8a41c7";
/// The key UFO's Linux MCP server checks (`UFO_MCP_API_KEY`), which the runner injects.
const KEY: &str = "ufo-real-key-93b1f0e6a4d2";

/// UFO's code: the copy `scripts/setup-ufo.sh` set up and named in `target/ufo/source`
/// (`UFO_SOURCE`, `../shared/ufo`, or microsoft/UFO fetched at the pinned commit).
pub(crate) fn ufo_source() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let named = std::fs::read_to_string(root.join("target/ufo/source")).unwrap_or_default();
    let path = PathBuf::from(named.trim());
    assert!(
        !named.trim().is_empty() && path.join("ufo/client/client.py").is_file(),
        "UFO's code is not set up ({:?}): run `bash scripts/setup-ufo.sh`",
        path
    );
    path
}

/// Fails the test unless UFO's venv is here, naming scripts/setup-ufo.sh
/// (`helpers::require_stack`).
pub(crate) fn ufo_installed() {
    let python = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/ufo/venv/bin/python");
    crate::helpers::require_stack("ufo", python.is_file(), "bash scripts/setup-ufo.sh")
}

/// The venv with UFO's 12 pinned packages.
pub(crate) fn ufo_python() -> PathBuf {
    let python = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/ufo/venv/bin/python");
    assert!(
        python.is_file(),
        "UFO's venv is missing: run `bash scripts/setup-ufo.sh` (CI does)"
    );
    python
}

/// Waits until something listens on `port` (at most 20 s).
fn wait_for_port(port: u16) {
    let started = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "nothing listens on port {port}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A process killed (with its group) when dropped.
struct Running(Child);

impl Running {
    fn kill(&mut self) {
        let pid = self.0.id() as i32;
        // SAFETY: signals our own child's process group.
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
        }
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.kill();
    }
}

fn spawn(mut command: Command) -> Running {
    use std::os::unix::process::CommandExt;
    command
        .process_group(0)
        .stdin(Stdio::null())
        .stdout(Stdio::null());
    Running(command.spawn().expect("start UFO's code"))
}

/// UFO's Linux MCP server on `port`, its commands running in `folder`.
fn ufo_server(folder: &Path, port: u16, log: &Path) -> Running {
    let mut command = Command::new(ufo_python());
    command
        .args(["-m", "ufo.client.mcp.http_servers.linux_mcp_server"])
        .args(["--port", &port.to_string(), "--host", "localhost"])
        .current_dir(folder)
        .env("PYTHONPATH", ufo_source())
        .env("UFO_MCP_API_KEY", KEY)
        .stderr(std::fs::File::create(log).unwrap());
    let server = spawn(command);
    wait_for_port(port);
    server
}

/// One UFO device: its Linux MCP server (commands run in `folder`) and its client,
/// dialing `runner_port` with `token`. The client reads its config from its working
/// folder (UFO's `config/ufo/`, copied, the server's port put in).
struct Device {
    client: Running,
    _server: Running,
    /// Where its commands run.
    folder: PathBuf,
    /// What the client logged.
    log: PathBuf,
}

impl Device {
    fn start(root: &Path, id: &str, runner_port: u16, token: &str) -> Self {
        let home = root.join(format!("device-{id}"));
        let folder = home.join("work");
        std::fs::create_dir_all(home.join("config")).unwrap();
        std::fs::create_dir_all(&folder).unwrap();
        let server_port = free_port();
        copy_config(&home.join("config/ufo"), server_port);
        let server = ufo_server(&folder, server_port, &home.join("server.log"));
        let log = home.join("client.log");
        let mut command = Command::new(ufo_python());
        command
            .args(["-m", "ufo.client.client", "--ws", "--ws-server"])
            .arg(format!("ws://127.0.0.1:{runner_port}/ws?token={token}"))
            .args(["--client-id", id, "--platform", "linux"])
            .current_dir(&home)
            .env("PYTHONPATH", ufo_source())
            .stderr(std::fs::File::create(&log).unwrap());
        Self {
            client: spawn(command),
            _server: server,
            folder,
            log,
        }
    }
}

/// UFO's `config/ufo/` into `to`, with the LinuxAgent's MCP server on `port`.
fn copy_config(to: &Path, port: u16) {
    std::fs::create_dir_all(to).unwrap();
    let from = ufo_source().join("config/ufo");
    for entry in std::fs::read_dir(&from).unwrap() {
        let entry = entry.unwrap();
        let text = std::fs::read_to_string(entry.path()).unwrap();
        let text = if entry.file_name() == "mcp.yaml" {
            let at = text.find("LinuxAgent:").expect("LinuxAgent in mcp.yaml");
            let (head, tail) = text.split_at(at);
            format!(
                "{head}{}",
                tail.replacen("port: 8010", &format!("port: {port}"), 1)
            )
        } else {
            text
        };
        std::fs::write(to.join(entry.file_name()), text).unwrap();
    }
}

fn project(config: &str) -> Project {
    let p = Project::new();
    p.file("ufo-batch.toml", config);
    p
}

const DEVICES_CONFIG: &str =
    "[devices]\ninject = { api_key = \"UFO_MCP_API_KEY\" }\ncommand_timeout = \"20s\"\n";

fn command(line: &str) -> Value {
    json!({"action": "execute_command", "parameters": {"command": line}})
}

/// Starts the run on a free port and the devices `ids`; waits for the run to end.
fn run_on_devices(p: &Project, ids: &[&str], extra: &[&str]) -> (Output, Vec<Device>) {
    let port = free_port();
    let addr = format!("127.0.0.1:{port}");
    let wait = ids.len().to_string();
    let mut args = vec![
        "run",
        "tasks",
        "--devices",
        &addr,
        "--devices-wait",
        &wait,
        "--progress",
        "lines",
    ];
    args.extend_from_slice(extra);
    let env = [("UFO_BATCH_DEVICE_TOKEN", TOKEN), ("UFO_MCP_API_KEY", KEY)];
    let started = p.start_env(&args, &env);
    wait_for_port(port);
    let devices: Vec<Device> = ids
        .iter()
        .map(|id| Device::start(p.path().parent().unwrap(), id, port, TOKEN))
        .collect();
    (started.wait(), devices)
}

/// Neither the key nor the token (nor a long piece of either) in any byte the run wrote
/// or printed.
fn assert_no_secret(dir: &Path, out: &Output) {
    let printed = format!("{}{}", out.stdout, out.stderr);
    let secrets = [
        KEY,
        &KEY[..8],
        &KEY[KEY.len() - 8..],
        TOKEN,
        &TOKEN[TOKEN.len() - 8..],
    ];
    for secret in secrets {
        assert!(!printed.contains(secret), "printed: {secret}");
    }
    for entry in walkdir::WalkDir::new(dir).into_iter().flatten() {
        if entry.file_type().is_file() {
            let bytes = std::fs::read(entry.path()).unwrap();
            let text = String::from_utf8_lossy(&bytes);
            for secret in secrets {
                assert!(
                    !text.contains(secret),
                    "{}: {secret}",
                    entry.path().display()
                );
            }
        }
    }
}

/// A batch over two of UFO's own clients: plans that need the injected key, a data tool
/// (whose answer changes from run to run, and replays), a file written on the device
/// (`sort -o`, the one writing command UFO's allow-list has) and checked there, a command
/// UFO refuses; then the run's plans replay on the same devices.
#[test]
#[cfg_attr(skip_ufo, ignore = "UFO_BATCH_SKIP_TESTS: needs ufo")]
fn ufos_own_clients_run_a_batch_and_its_plans_replay() {
    ufo_installed();
    let p = project(DEVICES_CONFIG);
    p.task(
        "list.json",
        json!({"request": "list", "actions": [command("ls names.txt")]}),
    );
    p.task(
        "read.json",
        json!({"request": "read", "actions": [
            {"action": "execute_command", "parameters": {"command": "cat names.txt"}, "expect": {"stdout": "bob\nalice\n"}}
        ]}),
    );
    p.task(
        "count.json",
        json!({"request": "count", "actions": [command("wc -l names.txt")]}),
    );
    p.task(
        "info.json",
        json!({"request": "system info", "actions": [{"action": "get_system_info", "parameters": {}}]}),
    );
    for i in 0..2 {
        p.task(
            &format!("sort{i}.json"),
            json!({"request": "sort the names", "actions": [command(&format!("sort -o sorted{i}.txt names.txt"))],
                   "evaluate": [
                       {"type": "file_equals", "path": format!("sorted{i}.txt"), "content": "alice\nbob"},
                       {"type": "file_exists", "path": "names.txt"}
                   ]}),
        );
    }
    p.task(
        "refused.json",
        json!({"request": "remove a file", "actions": [command("rm names.txt")]}),
    );
    // A document check UFO's server cannot serve (no `base64` in its allow-list), and one
    // of a document the task never made (its failure, however the device reads files).
    p.task(
        "document.json",
        json!({"request": "check a document", "actions": [command("ls names.txt")],
               "evaluate": [{"type": "document_contains", "path": "report.docx", "pattern": "x"}]}),
    );
    p.task(
        "no_document.json",
        json!({"request": "check a document never made", "actions": [command("ls names.txt")],
               "evaluate": [{"type": "document_contains", "path": "missing.docx", "pattern": "x"}]}),
    );
    p.task(
        "grep.json",
        json!({"request": "find alice", "actions": [command("grep -c alice names.txt")],
               "evaluate": [{"type": "command", "run": "grep -q bob names.txt"}]}),
    );
    let root = p.path().parent().unwrap();
    for id in ["ufo-a", "ufo-b"] {
        let folder = root.join(format!("device-{id}/work"));
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(folder.join("names.txt"), "bob\nalice\n").unwrap();
        std::fs::write(folder.join("report.docx"), "PK not really a document").unwrap();
    }
    let (out, devices) = run_on_devices(&p, &["ufo-a", "ufo-b"], &["--jobs", "2"]);
    out.expect_code(1);
    for id in ["list", "read", "count", "info", "sort0", "sort1", "grep"] {
        let status = out.status(id);
        assert_eq!(status["status"], "passed", "{id}: {status}\n{}", out.stderr);
    }
    let document = out.status("document");
    assert_eq!(document["status"], "error", "{document}");
    assert!(
        document["error"]
            .as_str()
            .unwrap()
            .contains("cannot send a document's bytes"),
        "{document}"
    );
    let absent = out.status("no_document");
    assert_eq!(absent["status"], "failed", "{absent}");
    assert!(
        absent["error"].as_str().unwrap().contains("does not exist"),
        "{absent}"
    );
    let refused = out.status("refused");
    assert_eq!(refused["status"], "failed", "{refused}");
    assert!(
        refused["error"]
            .as_str()
            .unwrap()
            .contains("Command blocked by security policy"),
        "{refused}"
    );
    // Every task names the device it ran on, and both did work.
    let mut used: Vec<String> = ["list", "read", "count", "info", "sort0", "sort1"]
        .iter()
        .map(|id| {
            out.status(id)["attempts"][0]["device"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    used.sort();
    used.dedup();
    assert_eq!(used, ["ufo-a", "ufo-b"], "{}", out.stderr);
    // The sorted file was written on a device, and the check read it there.
    assert!(
        devices
            .iter()
            .any(|d| d.folder.join("sorted0.txt").exists())
    );
    // The data tool's answer is shown, and its plan compares only its status.
    let md = out.task_file("info", "output.md");
    assert!(md.contains("uptime"), "{md}");
    let plan = read_json(&out.run_dir("proj").join("info/plan.json"));
    assert_eq!(
        plan["actions"][0]["expect"],
        json!({"status": "success"}),
        "{plan}"
    );
    assert_no_secret(&out.run_dir("proj"), &out);
    drop(devices);

    // The run's plans replay on UFO's clients, the data tool's too; what the first run
    // wrote there is gone, so the checks see what the replay writes.
    for id in ["ufo-a", "ufo-b"] {
        for i in 0..2 {
            let _ = std::fs::remove_file(root.join(format!("device-{id}/work/sorted{i}.txt")));
        }
    }
    let replay_port = free_port();
    let addr = format!("127.0.0.1:{replay_port}");
    let env = [("UFO_BATCH_DEVICE_TOKEN", TOKEN), ("UFO_MCP_API_KEY", KEY)];
    let started = p.start_env(
        &[
            "run",
            "results/proj",
            "--devices",
            &addr,
            "--devices-wait",
            "2",
            "--progress",
            "lines",
        ],
        &env,
    );
    wait_for_port(replay_port);
    let devices: Vec<Device> = ["ufo-a", "ufo-b"]
        .iter()
        .map(|id| Device::start(root, id, replay_port, TOKEN))
        .collect();
    let replay = started.wait();
    drop(devices);
    replay.expect_code(1);
    let dir = replay.run_dir("proj-replay");
    for id in ["list", "read", "count", "info", "sort0", "sort1", "grep"] {
        let status = read_json(&dir.join(id).join("status.json"));
        assert_eq!(status["status"], "passed", "{id}: {status}");
    }
}

/// A client killed while its command runs (a `cat` of a FIFO nobody writes, on that
/// device only): its task is retried on the other device, where it passes.
#[test]
#[cfg_attr(skip_ufo, ignore = "UFO_BATCH_SKIP_TESTS: needs ufo")]
fn a_ufo_client_killed_mid_task_has_its_task_retried_on_the_other() {
    ufo_installed();
    let p = project(DEVICES_CONFIG);
    p.task(
        "wait.json",
        json!({"request": "read the pipe", "actions": [
            {"action": "execute_command", "parameters": {"command": "cat wait.fifo"}, "expect": {"stdout": "ready"}}
        ]}),
    );
    let root = p.path().parent().unwrap().to_path_buf();
    let stuck = root.join("device-stuck/work");
    let fine = root.join("device-fine/work");
    std::fs::create_dir_all(&stuck).unwrap();
    std::fs::create_dir_all(&fine).unwrap();
    let fifo = std::ffi::CString::new(stuck.join("wait.fifo").to_str().unwrap()).unwrap();
    // SAFETY: mkfifo on a fresh path.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
    std::fs::write(fine.join("wait.fifo"), "ready").unwrap();
    let port = free_port();
    let addr = format!("127.0.0.1:{port}");
    let env = [("UFO_BATCH_DEVICE_TOKEN", TOKEN), ("UFO_MCP_API_KEY", KEY)];
    let started = p.start_env(
        &[
            "run",
            "tasks",
            "--devices",
            &addr,
            "--devices-wait",
            "1",
            "--retries",
            "1",
            "--progress",
            "lines",
        ],
        &env,
    );
    wait_for_port(port);
    let mut first = Device::start(&root, "stuck", port, TOKEN);
    // The running status names the device as soon as the task has one.
    let status = p.path().join("results/proj/wait/status.json");
    let named = || {
        std::fs::read_to_string(&status)
            .ok()
            .and_then(|t| serde_json::from_str::<Value>(&t).ok())
            .is_some_and(|s| s["status"] == "running" && s["attempts"][0]["device"] == "stuck")
    };
    assert!(
        crate::helpers::eventually_within(named, Duration::from_secs(60)),
        "the running status never named the device"
    );
    // The command is in flight on the stuck device: UFO's server runs `cat wait.fifo`.
    let in_flight = || !crate::helpers::commands_running("cat wait.fifo").is_empty();
    assert!(
        crate::helpers::eventually_within(in_flight, Duration::from_secs(60)),
        "the command never reached the device"
    );
    let _second = Device::start(&root, "fine", port, TOKEN);
    first.client.kill();
    let out = started.wait();
    out.expect_code(0);
    let status = out.status("wait");
    let attempts = status["attempts"].as_array().unwrap();
    assert_eq!(attempts.len(), 2, "{status}");
    assert_eq!(attempts[0]["status"], "error", "{status}");
    assert!(
        attempts[0]["error"]
            .as_str()
            .unwrap()
            .contains("disconnected"),
        "{status}"
    );
    assert_eq!(attempts[1]["device"], "fine", "{status}");
    assert_eq!(status["status"], "passed");
    assert_no_secret(&out.run_dir("proj"), &out);
}

/// A client with a wrong token never registers; the refusal says why without the token,
/// and a run waiting for a device stops, saying so.
#[test]
#[cfg_attr(skip_ufo, ignore = "UFO_BATCH_SKIP_TESTS: needs ufo")]
fn a_ufo_client_with_a_wrong_token_is_refused() {
    ufo_installed();
    // Long enough for UFO's client (a Python start) to connect and be refused on a
    // loaded machine.
    let p = project(&format!("{DEVICES_CONFIG}wait_for = \"12s\"\n"));
    p.task(
        "list.json",
        json!({"request": "list", "actions": [command("ls")]}),
    );
    let port = free_port();
    let addr = format!("127.0.0.1:{port}");
    let env = [("UFO_BATCH_DEVICE_TOKEN", TOKEN), ("UFO_MCP_API_KEY", KEY)];
    let started = p.start_env(
        &[
            "run",
            "tasks",
            "--devices",
            &addr,
            "--devices-wait",
            "1",
            "--progress",
            "lines",
        ],
        &env,
    );
    wait_for_port(port);
    let root = p.path().parent().unwrap().to_path_buf();
    let device = Device::start(&root, "intruder", port, "not-the-token-at-all");
    let out = started.wait();
    out.expect_code(1);
    assert!(out.stderr.contains("wrong token"), "{}", out.stderr);
    assert!(
        out.stderr.contains("no device connected within 12s"),
        "{}",
        out.stderr
    );
    assert_eq!(out.row("list")["status"], "cancelled");
    assert!(!out.stderr.contains("not-the-token-at-all"));
    assert_no_secret(&out.run_dir("proj"), &out);
    // UFO's client was told: it logged the refusal (its own log shows its own token).
    drop(device);
}

/// A device whose tools need the key when the config injects none: the run stops when
/// it registers, before any task runs, naming the tool, the argument and the config key.
#[test]
#[cfg_attr(skip_ufo, ignore = "UFO_BATCH_SKIP_TESTS: needs ufo")]
fn a_missing_inject_stops_the_run_before_any_task() {
    ufo_installed();
    let p = project("[devices]\ncommand_timeout = \"20s\"\n");
    p.task(
        "list.json",
        json!({"request": "list", "actions": [command("ls")]}),
    );
    p.task(
        "info.json",
        json!({"request": "info", "actions": [{"action": "get_system_info", "parameters": {}}]}),
    );
    let (out, devices) = run_on_devices(&p, &["ufo-a"], &[]);
    out.expect_code(1);
    assert!(
        out.stderr
            .contains("device ufo-a's tool `execute_command` requires `api_key`")
            && out
                .stderr
                .contains("[devices] inject = { api_key = \"ENV_VAR\" }"),
        "{}",
        out.stderr
    );
    for id in ["list", "info"] {
        let row = out.row(id);
        assert_eq!(row["status"], "cancelled", "{row}");
        assert_eq!(row["attempts"], 0, "{row}");
    }
    // The client was told why, with a close code.
    let log = std::fs::read_to_string(&devices[0].log).unwrap_or_default();
    assert!(
        log.contains("1008") || log.contains("cannot fill in"),
        "{log}"
    );
}

/// UFO's Linux MCP server as an `[[mcp.servers]]` HTTP server: a refused command, a
/// non-zero exit and a timeout fail their task (UFO says so in the result, not with
/// `isError`); a command that works passes; the key is in no output byte.
#[test]
#[cfg_attr(skip_ufo, ignore = "UFO_BATCH_SKIP_TESTS: needs ufo")]
fn ufos_linux_mcp_server_over_http_fails_what_failed() {
    ufo_installed();
    let p = Project::new();
    let folder = p.path().parent().unwrap().join("server-work");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(folder.join("names.txt"), "bob\nalice\n").unwrap();
    let port = free_port();
    let _server = ufo_server(&folder, port, &folder.parent().unwrap().join("server.log"));
    p.file(
        "ufo-batch.toml",
        &format!(
            "[[mcp.servers]]\nname = \"linux\"\nurl = \"http://localhost:{port}/mcp\"\ninject = {{ api_key = \"UFO_MCP_API_KEY\" }}\n"
        ),
    );
    let call = |line: &str, extra: Value| {
        let mut parameters = json!({"command": line});
        if let (Value::Object(p), Value::Object(e)) = (&mut parameters, extra) {
            p.extend(e);
        }
        json!({"request": line, "actions": [{"action": "linux.execute_command", "parameters": parameters}]})
    };
    p.task("works.json", call("cat names.txt", json!({})));
    p.task("refused.json", call("rm names.txt", json!({})));
    p.task("nonzero.json", call("ls no-such-file", json!({})));
    p.task(
        "timeout.json",
        call("tail -f names.txt", json!({"timeout": 1})),
    );
    let out = p.cmd_env(
        &["run", "tasks", "--progress", "lines"],
        &[("UFO_MCP_API_KEY", KEY)],
    );
    out.expect_code(1);
    assert_eq!(out.status_of("works"), "passed", "{}", out.stderr);
    for (id, why) in [
        ("refused", "Command blocked by security policy"),
        ("nonzero", "exit code 2"),
        ("timeout", "Timeout after 1s"),
    ] {
        let status = out.status(id);
        assert_eq!(status["status"], "failed", "{id}: {status}");
        assert!(
            status["error"].as_str().unwrap().contains(why),
            "{id}: {status}"
        );
    }
    let md = out.task_file("works", "output.md");
    assert!(
        md.contains("alice"),
        "output.md shows what the tool said: {md}"
    );
    assert_no_secret(&out.run_dir("proj"), &out);
}

/// The key the runner injects is not the one the device's server expects: every command
/// is refused for the runner's configuration, never the task's: `error`, blamed on the
/// configuration, not retried (`--retries 1`), kept by a resumed run while the key is
/// the same, and run again (passing) once the key is right; a plan that expects its
/// command to fail does not pass on it.
#[test]
#[cfg_attr(skip_ufo, ignore = "UFO_BATCH_SKIP_TESTS: needs ufo")]
fn a_wrong_injected_key_is_the_runners_error_not_a_verdict() {
    ufo_installed();
    let p = project("[devices]\ninject = { api_key = \"WRONG_KEY\" }\ncommand_timeout = \"20s\"\n");
    p.task(
        "list.json",
        json!({"request": "list", "actions": [command("ls")]}),
    );
    p.task(
        "expects_failure.json",
        json!({"request": "a command that fails", "actions": [
            {"action": "execute_command", "parameters": {"command": "ls no-such-file"}, "expect": {"status": "failure"}}
        ]}),
    );
    let root = p.path().parent().unwrap().to_path_buf();
    let run = |key: &str| {
        let port = free_port();
        let addr = format!("127.0.0.1:{port}");
        let env = [
            ("UFO_BATCH_DEVICE_TOKEN", TOKEN),
            ("UFO_MCP_API_KEY", KEY),
            ("WRONG_KEY", key),
        ];
        let started = p.start_env(
            &[
                "run",
                "tasks",
                "--devices",
                &addr,
                "--devices-wait",
                "1",
                "--retries",
                "1",
                "--progress",
                "lines",
            ],
            &env,
        );
        wait_for_port(port);
        let device = Device::start(&root, &format!("ufo-{port}"), port, TOKEN);
        let out = started.wait();
        drop(device);
        out
    };
    let out = run("not-the-servers-key-1234");
    out.expect_code(1);
    for id in ["list", "expects_failure"] {
        let status = out.status(id);
        assert_eq!(status["status"], "error", "{id}: {status}");
        assert_eq!(status["blame"], "config", "{id}: {status}");
        assert_eq!(
            status["attempts"].as_array().unwrap().len(),
            1,
            "not retried: {status}"
        );
        let why = status["error"].as_str().unwrap();
        assert!(
            why.contains("refused the `api_key` the runner fills in")
                && why.contains("Authentication failed"),
            "{id}: {why}"
        );
    }
    assert_no_secret(&out.run_dir("proj"), &out);
    // Resumed with the same key: the same error, kept, nothing sent again.
    let again = run("not-the-servers-key-1234");
    again.expect_code(1);
    for id in ["list", "expects_failure"] {
        let status = again.status(id);
        assert_eq!(status["status"], "error", "{id}: {status}");
        assert_eq!(
            status["attempts"].as_array().unwrap().len(),
            1,
            "kept: {status}"
        );
    }
    // The key put right: both run again, and pass.
    let fixed = run(KEY);
    fixed.expect_code(0);
    for id in ["list", "expects_failure"] {
        let status = fixed.status(id);
        assert_eq!(status["status"], "passed", "{id}: {status}");
        assert!(status.get("blame").is_none(), "{id}: {status}");
        assert_eq!(status["attempts"].as_array().unwrap().len(), 2, "{status}");
    }
}

/// UFO's Linux MCP server given the wrong key by `[[mcp.servers]] inject`: the task is
/// the configuration's `error`, not retried, kept by a resumed run while the key is the
/// same, and run again (passing) once the key is right.
#[test]
#[cfg_attr(skip_ufo, ignore = "UFO_BATCH_SKIP_TESTS: needs ufo")]
fn ufos_mcp_server_refusing_the_injected_key_is_the_configs_error() {
    ufo_installed();
    let p = Project::new();
    let folder = p.path().parent().unwrap().join("server-work");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(folder.join("names.txt"), "bob\nalice\n").unwrap();
    let port = free_port();
    let _server = ufo_server(&folder, port, &folder.parent().unwrap().join("server.log"));
    p.file(
        "ufo-batch.toml",
        &format!(
            "[[mcp.servers]]\nname = \"linux\"\nurl = \"http://localhost:{port}/mcp\"\ninject = {{ api_key = \"THE_KEY\" }}\n"
        ),
    );
    p.task(
        "cat.json",
        json!({"request": "cat", "actions": [{"action": "linux.execute_command", "parameters": {"command": "cat names.txt"}}]}),
    );
    let run = |key: &str| {
        p.cmd_env(
            &["run", "tasks", "--retries", "2", "--progress", "lines"],
            &[("THE_KEY", key)],
        )
    };
    let out = run("not-the-servers-key-1234");
    out.expect_code(1);
    let status = out.status("cat");
    assert_eq!(status["status"], "error", "{status}");
    assert_eq!(status["blame"], "config", "{status}");
    assert_eq!(status["attempts"].as_array().unwrap().len(), 1, "{status}");
    assert!(
        status["error"]
            .as_str()
            .unwrap()
            .contains("refused the `api_key` the runner fills in"),
        "{status}"
    );
    let again = run("not-the-servers-key-1234");
    again.expect_code(1);
    let status = again.status("cat");
    assert_eq!(
        status["attempts"].as_array().unwrap().len(),
        1,
        "kept: {status}"
    );
    let fixed = run(KEY);
    fixed.expect_code(0);
    let status = fixed.status("cat");
    assert_eq!(status["status"], "passed", "{status}");
    assert_eq!(status["attempts"].as_array().unwrap().len(), 2, "{status}");
    assert_no_secret(&fixed.run_dir("proj"), &fixed);
}

#[test]
#[cfg_attr(skip_ufo, ignore = "UFO_BATCH_SKIP_TESTS: needs ufo")]
fn validate_warns_for_a_tool_only_a_device_offers() {
    ufo_installed();
    let p = project(DEVICES_CONFIG);
    p.task(
        "info.json",
        json!({"request": "info", "actions": [{"action": "get_system_info", "parameters": {}}]}),
    );
    let out = p.cmd_env(&["validate", "tasks"], &[("UFO_MCP_API_KEY", KEY)]);
    out.expect_code(0);
    assert!(
        out.stdout
            .contains("`get_system_info` is no built-in or MCP tool: it must come from the device"),
        "{}",
        out.stdout
    );
    // Without devices it is an unknown tool.
    std::fs::remove_file(p.path().join("ufo-batch.toml")).unwrap();
    let out = p.cmd(&["validate", "tasks"]);
    out.expect_code(2);
    assert!(
        out.stdout.contains("unknown tool `get_system_info`"),
        "{}",
        out.stdout
    );
}
