//! MCP tools on real servers (installed by scripts/setup-mcp.sh under target/mcp): npm's
//! server-filesystem over stdio, started per task in its workspace and sandbox; a
//! FastMCP 2.11.3 server with the tool signatures of UFO's Linux MCP server over
//! streamable HTTP, its `api_key` injected from the environment; and a stdio server whose
//! tools fail, hang and crash. Recorded plans call them and replay; an LLM task calls
//! one; every fault ends in a definite status; the injected key is in no output byte.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde_json::{Value, json};

use crate::helpers::{Project, read_json, run_binary};
use crate::llm::llm_project;
use crate::mock_llm::{MockLlm, action, finish, marker};

/// The key the Linux server checks and the runner injects.
const KEY: &str = "ufo-mcp-key-5f2c9a7e1d3b";

fn mcp_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("target/mcp")
}

/// The test servers; a test fails when scripts/setup-mcp.sh has not run
/// (`helpers::require_stack`).
fn servers() -> (PathBuf, PathBuf) {
    let fs = mcp_root().join("node_modules/@modelcontextprotocol/server-filesystem/dist/index.js");
    let python = mcp_root().join("venv/bin/python");
    let here = fs.is_file() && python.is_file();
    crate::helpers::require_stack("mcp", here, "bash scripts/setup-mcp.sh");
    (fs, python)
}

fn script(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/mcp")
        .join(name)
        .display()
        .to_string()
}

/// The Linux server on a free loopback port, ended when dropped.
struct LinuxServer {
    child: Child,
    url: String,
}

impl LinuxServer {
    fn start(python: &Path) -> Self {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        Self::start_on(python, port)
    }

    fn start_on(python: &Path, port: u16) -> Self {
        let child = Command::new(python)
            .arg(script("linux_server.py"))
            .arg(port.to_string())
            .env("UFO_MCP_API_KEY", KEY)
            .env("PYTHONWARNINGS", "ignore")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        Self {
            child,
            url: format!("http://127.0.0.1:{port}/mcp"),
        }
    }
}

impl Drop for LinuxServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `ufo-batch.toml` with the filesystem, Linux and faulty servers (and `extra` lines).
/// The faulty server's command line names the project, so that [`servers_of`] finds the
/// servers of this test's runs and of no other test running beside it.
fn config(p: &Project, fs: &Path, python: &Path, linux: &str, extra: &str) -> String {
    format!(
        r#"
[[mcp.servers]]
name = "fs"
command = "node"
args = ["{fs}", "{{workspace}}"]
tools = ["read_text_file", "write_file", "list_directory"]

[[mcp.servers]]
name = "linux"
url = "{linux}"
timeout = "20s"
inject = {{ api_key = "LINUX_MCP_KEY" }}

[[mcp.servers]]
name = "faulty"
command = "{python}"
args = ["{faulty}", "--project={project}"]
env = {{ PYTHONWARNINGS = "ignore" }}
timeout = "2s"
{extra}"#,
        fs = fs.display(),
        python = python.display(),
        faulty = script("faulty_server.py"),
        project = p.path().display(),
    )
}

/// The running MCP servers started for project `p`'s tasks (their command lines name
/// its folder: the workspace, or the faulty server's `--project`).
fn servers_of(p: &Project) -> Vec<i32> {
    crate::helpers::processes_running(&p.path().display().to_string())
}

/// Every byte under `dir` and of the run's output: the key, or a long piece of it, must
/// be in none of them.
fn assert_no_key(dir: &Path, printed: &str) {
    let pieces = [KEY, &KEY[..8], &KEY[KEY.len() - 8..]];
    for piece in pieces {
        assert!(
            !printed.contains(piece),
            "the key in the output:\n{printed}"
        );
    }
    for entry in walkdir::WalkDir::new(dir).into_iter().flatten() {
        if entry.file_type().is_file() {
            let bytes = std::fs::read(entry.path()).unwrap();
            let text = String::from_utf8_lossy(&bytes);
            for piece in pieces {
                assert!(
                    !text.contains(piece),
                    "the key in {}",
                    entry.path().display()
                );
            }
        }
    }
}

#[test]
#[cfg_attr(skip_mcp, ignore = "UFO_BATCH_SKIP_TESTS: needs mcp")]
fn a_recorded_plan_calls_stdio_and_http_mcp_tools_and_replays() {
    let (fs, python) = servers();
    let linux = LinuxServer::start(&python);
    let p = Project::new();
    p.file("ufo-batch.toml", &config(&p, &fs, &python, &linux.url, ""));
    p.task(
        "mcp/roundtrip.json",
        json!({"request": "write a note through MCP, read it back, ask the Linux server", "actions": [
            {"action": "fs.write_file", "parameters": {"path": "note.txt", "content": "hello from mcp"}},
            {"action": "fs.read_text_file", "parameters": {"path": "note.txt"}, "expect": {"text": "hello from mcp"}},
            {"action": "execute_command", "parameters": {"command": "cat note.txt; env | grep -c MCP_KEY || true"}},
            {"action": "linux.execute_command", "parameters": {"command": "echo hi there"}},
            {"action": "linux.get_system_info", "parameters": {}},
            {"action": "faulty.fail", "parameters": {"message": "a tool's own failure"}, "expect": {"status": "failure"}}
        ]}),
    );
    let out = p.cmd_env(
        &["run", "tasks", "--progress", "lines"],
        &[("LINUX_MCP_KEY", KEY)],
    );
    out.expect_code(0);
    let status = out.status("mcp/roundtrip");
    assert_eq!(status["status"], "passed", "{status}");
    let steps: Vec<Value> = out
        .task_file("mcp/roundtrip", "response.log")
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let result = |i: usize| steps[i]["action"][0]["result"].clone();
    assert_eq!(result(1)["result"]["text"], "hello from mcp");
    assert_eq!(result(1)["namespace"], "fs");
    // The command ran in the same workspace the server wrote to.
    assert!(
        result(2)["result"]["stdout"]
            .as_str()
            .unwrap()
            .starts_with("hello from mcp")
    );
    // The Linux server ran the command: the key was injected (it refuses without it).
    assert_eq!(
        result(3)["result"]["structured"]["success"],
        true,
        "{}",
        result(3)
    );
    assert_eq!(result(3)["result"]["structured"]["stdout"], "hi there\n");
    assert!(
        result(4)["result"]["structured"]["cpus"].as_u64().is_some(),
        "{}",
        result(4)
    );
    // A tool's own failure is the call's failed result with its message.
    assert_eq!(result(5)["status"], "failure");
    assert!(
        result(5)["error"]
            .as_str()
            .unwrap()
            .contains("a tool's own failure")
    );
    // The plan records the calls as made, without the injected argument.
    let plan: Value = serde_json::from_str(&out.task_file("mcp/roundtrip", "plan.json")).unwrap();
    assert_eq!(plan["actions"][3]["action"], "linux.execute_command");
    assert_eq!(
        plan["actions"][3]["parameters"],
        json!({"command": "echo hi there"})
    );
    // run.json names the servers, and the injected argument without its value.
    let run = read_json(&out.run_dir("proj").join("run.json"));
    assert_eq!(
        run["config"]["mcp"][1]["inject"],
        json!(["api_key"]),
        "{run}"
    );

    // The recorded plan replays, the servers doing it again.
    let replay = p.cmd_env(
        &[
            "run",
            "results/proj",
            "--name",
            "replay",
            "--progress",
            "lines",
        ],
        &[("LINUX_MCP_KEY", KEY)],
    );
    replay.expect_code(0);
    assert_eq!(
        read_json(&replay.run_dir("replay").join("mcp/roundtrip/status.json"))["status"],
        "passed"
    );
    assert_no_key(
        &p.path().join("results"),
        &format!(
            "{}{}{}{}",
            out.stdout, out.stderr, replay.stdout, replay.stderr
        ),
    );
}

#[test]
#[cfg_attr(skip_mcp, ignore = "UFO_BATCH_SKIP_TESTS: needs mcp")]
fn tools_lists_every_tool_with_its_source_and_without_injected_arguments() {
    let (fs, python) = servers();
    let linux = LinuxServer::start(&python);
    let p = Project::new();
    p.file("ufo-batch.toml", &config(&p, &fs, &python, &linux.url, ""));
    let out = p.cmd_env(&["tools", "--json"], &[("LINUX_MCP_KEY", KEY)]);
    out.expect_code(0);
    let tools: Vec<Value> = serde_json::from_str(&out.stdout).unwrap();
    let named = |n: &str| {
        tools
            .iter()
            .find(|t| t["name"] == n)
            .unwrap_or_else(|| panic!("{n}: {}", out.stdout))
            .clone()
    };
    assert_eq!(named("execute_command")["source"], "built in: shell");
    assert_eq!(
        named("fs.read_text_file")["source"],
        "MCP server `fs` (stdio)"
    );
    let exec = named("linux.execute_command");
    assert_eq!(exec["source"], "MCP server `linux` (http)");
    assert!(exec["schema"]["properties"]["command"].is_object());
    assert!(
        exec["schema"]["properties"].get("api_key").is_none(),
        "{exec}"
    );
    assert!(!out.stdout.contains("api_key"));
    assert!(
        tools.iter().all(|t| t["name"] != "fs.move_file"),
        "the allow-list"
    );
    let text = p.cmd_env(&["tools"], &[("LINUX_MCP_KEY", KEY)]);
    assert!(
        text.stdout.contains("MCP server `linux` (http): 2 tools"),
        "{}",
        text.stdout
    );
    assert!(
        text.stdout
            .contains("  linux.execute_command(command: string"),
        "{}",
        text.stdout
    );

    // validate checks the plans' calls against the servers' tools.
    p.task(
        "bad.json",
        json!({"request": "r", "actions": [{"action": "fs.move_file", "parameters": {}}]}),
    );
    p.task("bad_args.json", json!({"request": "r", "actions": [{"action": "linux.execute_command", "parameters": {"command": "ls", "api_key": "x"}}]}));
    let v = p.cmd_env(&["validate", "tasks"], &[("LINUX_MCP_KEY", KEY)]);
    v.expect_code(2);
    assert!(
        v.stdout.contains("unknown tool `fs.move_file`"),
        "{}",
        v.stdout
    );
    assert!(
        v.stdout
            .contains("`linux.execute_command` has no parameter `api_key`"),
        "{}",
        v.stdout
    );
}

#[test]
#[cfg_attr(skip_mcp, ignore = "UFO_BATCH_SKIP_TESTS: needs mcp")]
fn an_llm_agent_sees_and_calls_mcp_tools() {
    let (fs, python) = servers();
    let linux = LinuxServer::start(&python);
    let mock = MockLlm::start();
    mock.script(
        "note",
        vec![
            action(
                "fs.write_file",
                json!({"path": "answer.txt", "content": "42"}),
                "CONTINUE",
            ),
            action(
                "linux.execute_command",
                json!({"command": "echo checked"}),
                "CONTINUE",
            ),
            finish("wrote the answer"),
        ],
    );
    let p = llm_project();
    let mut toml = std::fs::read_to_string(p.path().join("ufo-batch.toml")).unwrap();
    toml.push_str(&config(&p, &fs, &python, &linux.url, ""));
    p.file("ufo-batch.toml", &toml);
    p.task(
        "note.json",
        json!({"request": format!("Write 42 to answer.txt {}", marker("note")),
               "evaluate": [{"type": "file_equals", "path": "answer.txt", "content": "42"}]}),
    );
    let url = mock.url();
    let out = p.cmd_env(
        &[
            "run",
            "tasks",
            "--progress",
            "lines",
            "--llm-base-url",
            &url,
        ],
        &[("LINUX_MCP_KEY", KEY)],
    );
    out.expect_code(0);
    assert_eq!(out.status("note")["status"], "passed", "{}", out.stderr);
    // The model was shown the servers' tools (without the injected argument) in the
    // prompt and in the reply schema.
    let first = &mock.received_for("note")[0].body;
    let prompt = first["messages"][0]["content"].as_str().unwrap();
    assert!(
        prompt.contains("`fs.write_file`") && prompt.contains("`linux.execute_command`"),
        "{prompt}"
    );
    assert!(
        !first.to_string().contains("api_key"),
        "the model never sees the injected argument"
    );
    let steps = out.task_file("note", "response.log");
    assert!(steps.contains("checked"), "{steps}");
    // What the tool returned reaches the model with the next request.
    let third = mock.received_for("note")[2].body["messages"].to_string();
    assert!(third.contains("checked"), "{third}");
    assert_no_key(
        &p.path().join("results"),
        &format!("{}{}", out.stdout, out.stderr),
    );
}

#[test]
#[cfg_attr(skip_mcp, ignore = "UFO_BATCH_SKIP_TESTS: needs mcp")]
fn a_server_that_fails_hangs_or_crashes_ends_in_a_definite_status() {
    let (fs, python) = servers();
    let linux = LinuxServer::start(&python);
    let p = Project::new();
    let broken = format!(
        "\n[[mcp.servers]]\nname = \"broken\"\ncommand = \"{}\"\nargs = [\"{}\", \"--die-in-workspace\"]\n",
        python.display(),
        script("faulty_server.py")
    );
    p.file(
        "ufo-batch.toml",
        &config(&p, &fs, &python, &linux.url, &broken),
    );
    let call = |id: &str, tool: &str, params: Value| {
        p.task(
            &format!("{id}.json"),
            json!({"request": id, "actions": [{"action": tool, "parameters": params}]}),
        );
    };
    call("hang", "faulty.hang", json!({"seconds": 30}));
    call("crash", "faulty.crash", json!({}));
    call("never_starts", "broken.echo", json!({"text": "x"}));
    call("fine", "faulty.echo", json!({"text": "still fine"}));
    p.task(
        "setup_needs_it.json",
        json!({"request": "r", "setup": [{"action": "broken.echo", "parameters": {"text": "x"}}],
               "actions": [{"action": "execute_command", "parameters": {"command": "true"}}]}),
    );
    let clock = std::time::Instant::now();
    let out = p.cmd_env(
        &["run", "tasks", "--progress", "lines", "--retries", "1"],
        &[("LINUX_MCP_KEY", KEY)],
    );
    out.expect_code(1);
    assert!(
        clock.elapsed().as_secs() < 60,
        "nothing waited for the 30 s hang"
    );
    let hang = out.status("hang");
    assert_eq!(hang["status"], "failed", "{hang}");
    assert!(
        hang["error"]
            .as_str()
            .unwrap()
            .contains("the MCP server `faulty` did not answer within 2s"),
        "{hang}"
    );
    // A server that dies mid-task, or that never starts for a task, is the machine's
    // fault: an infrastructure error, retried.
    let crash = out.status("crash");
    assert_eq!(crash["status"], "error", "{crash}");
    assert_eq!(crash["attempts"].as_array().unwrap().len(), 2, "{crash}");
    let why = crash["error"].as_str().unwrap();
    assert!(
        why.contains("the MCP server `faulty` cannot be reached")
            && why.contains("crashing on purpose"),
        "{why}"
    );
    let never = out.status("never_starts");
    assert_eq!(never["status"], "error", "{never}");
    assert!(
        never["error"]
            .as_str()
            .unwrap()
            .contains("cannot start the MCP server `broken`"),
        "{never}"
    );
    assert!(
        never["error"].as_str().unwrap().contains("asked to die"),
        "{never}"
    );
    assert_eq!(out.status("fine")["status"], "passed");
    // The same in a task's setup: not the task's failure, the machine's, retried.
    let setup = out.status("setup_needs_it");
    assert_eq!(setup["status"], "error", "{setup}");
    assert_eq!(setup["attempts"].as_array().unwrap().len(), 2, "{setup}");
    assert!(
        setup["error"]
            .as_str()
            .unwrap()
            .contains("setup step 1 `broken.echo"),
        "{setup}"
    );
    // No server outlives its task.
    assert!(servers_of(&p).is_empty(), "{:?}", servers_of(&p));
}

#[test]
#[cfg_attr(skip_mcp, ignore = "UFO_BATCH_SKIP_TESTS: needs mcp")]
fn a_server_that_cannot_start_or_be_reached_stops_the_run_before_any_task() {
    let (_, python) = servers();
    let p = Project::new();
    p.task("t.json", crate::helpers::shell_plan("t", &["true"]));
    p.file(
        "ufo-batch.toml",
        &format!(
            "[[mcp.servers]]\nname = \"dead\"\ncommand = \"{}\"\nargs = [\"{}\", \"--die\"]\n",
            python.display(),
            script("faulty_server.py")
        ),
    );
    let out = p.run(&[]);
    out.expect_code(2);
    assert!(
        out.stderr.contains("MCP server `dead` (stdio:"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("asked to die before starting"),
        "{}",
        out.stderr
    );
    assert!(!p.path().join("results/proj/t").exists(), "no task ran");

    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    p.file(
        "ufo-batch.toml",
        &format!("[[mcp.servers]]\nname = \"away\"\nurl = \"http://127.0.0.1:{port}/mcp\"\n"),
    );
    let out = run_binary(p.path(), &["run", "tasks"], &[]);
    out.expect_code(2);
    assert!(
        out.stderr
            .contains("MCP server `away` (http: http://127.0.0.1:"),
        "{}",
        out.stderr
    );

    p.file("ufo-batch.toml", "[[mcp.servers]]\nname = \"k\"\nurl = \"http://127.0.0.1:1/mcp\"\ninject = { api_key = \"NOT_SET_ANYWHERE\" }\n");
    let out = p.run(&[]);
    out.expect_code(2);
    assert!(
        out.stderr
            .contains("inject.api_key comes from $NOT_SET_ANYWHERE, which is not set"),
        "{}",
        out.stderr
    );
}

#[test]
#[cfg_attr(skip_mcp, ignore = "UFO_BATCH_SKIP_TESTS: needs mcp")]
fn an_http_session_that_expires_when_its_server_restarts_is_opened_again() {
    let (fs, python) = servers();
    let first = LinuxServer::start(&python);
    let port: u16 = first
        .url
        .rsplit(':')
        .next()
        .unwrap()
        .trim_end_matches("/mcp")
        .parse()
        .unwrap();
    let p = Project::new();
    p.file("ufo-batch.toml", &config(&p, &fs, &python, &first.url, ""));
    p.task(
        "restart.json",
        json!({"request": "ask, wait for the server to restart, ask again", "actions": [
            {"action": "linux.get_system_info", "parameters": {}},
            {"action": "execute_command", "parameters": {"command": "touch ready && sleep 8"}},
            {"action": "linux.execute_command", "parameters": {"command": "echo again"}}
        ]}),
    );
    let run = p.start_env(
        &["run", "tasks", "--progress", "lines"],
        &[("LINUX_MCP_KEY", KEY)],
    );
    let ready = p.path().join("results/proj/restart/workspace/ready");
    let clock = std::time::Instant::now();
    while !ready.exists() {
        assert!(
            clock.elapsed().as_secs() < 60,
            "the task did not get to its command"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    drop(first);
    let _second = LinuxServer::start_on(&python, port);
    let out = run.wait_within(std::time::Duration::from_secs(90));
    out.expect_code(0);
    let steps = out.task_file("restart", "response.log");
    let last: Value = serde_json::from_str(steps.lines().last().unwrap()).unwrap();
    assert_eq!(
        last["action"][0]["result"]["result"]["structured"]["stdout"], "again\n",
        "{last}"
    );
}

#[test]
#[cfg_attr(skip_mcp, ignore = "UFO_BATCH_SKIP_TESTS: needs mcp")]
fn a_task_can_neither_see_a_stdio_servers_secrets_nor_outlive_its_timeout_with_it() {
    let (fs, python) = servers();
    let linux = LinuxServer::start(&python);
    let p = Project::new();
    let secret = "server-secret-7c1e99d04b2a";
    let extra = format!(
        "\n[[mcp.servers]]\nname = \"slow\"\ncommand = \"{}\"\nargs = [\"{}\"]\nenv = {{ PYTHONWARNINGS = \"ignore\", MCP_SECRET = \"${{SERVER_SECRET}}\" }}\ntimeout = \"60s\"\n",
        python.display(),
        script("faulty_server.py")
    );
    p.file(
        "ufo-batch.toml",
        &config(&p, &fs, &python, &linux.url, &extra),
    );
    // The server runs (and holds the secret in its environment) while the task's
    // commands look for it in every process they can see.
    p.task(
        "snoop.json",
        json!({"request": "look for the server's secret", "actions": [
            {"action": "slow.echo", "parameters": {"text": "up"}},
            {"action": "execute_command", "parameters": {"command": "cat /proc/*/environ 2>/dev/null | tr '\\0' '\\n' | grep -c MCP_SECRET || true"}},
            {"action": "execute_command", "parameters": {"command": "cat /proc/*/environ /proc/*/cmdline 2>/dev/null | base64 -w0"}}
        ]}),
    );
    // A call longer than the task's own time limit: the task times out and its server
    // goes with it.
    p.task(
        "late.json",
        json!({"request": "wait too long", "timeout": "3s", "actions": [
            {"action": "slow.hang", "parameters": {"seconds": 30}}
        ]}),
    );
    let out = p.cmd_env(
        &["run", "tasks", "--progress", "lines"],
        &[("LINUX_MCP_KEY", KEY), ("SERVER_SECRET", secret)],
    );
    out.expect_code(1);
    let snoop = out.status("snoop");
    assert_eq!(snoop["status"], "passed", "{snoop}");
    let run = read_json(&out.run_dir("proj").join("run.json"));
    if run["sandbox"] == "jail" {
        let steps: Vec<Value> = out
            .task_file("snoop", "response.log")
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let stdout = |i: usize| steps[i]["action"][0]["result"]["result"]["stdout"].clone();
        assert_eq!(
            stdout(1),
            "0\n",
            "the server's environment is out of the task's sight"
        );
        let seen = stdout(2).as_str().unwrap().to_string();
        use base64::Engine;
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(seen.trim())
            .unwrap_or_default();
        let decoded = String::from_utf8_lossy(&decoded);
        assert!(
            !decoded.contains(secret) && !decoded.contains("MCP_SECRET"),
            "{decoded}"
        );
        assert!(
            !decoded.contains("faulty_server"),
            "the server's process is not in sight: {decoded}"
        );
    }
    let late = out.status("late");
    assert_eq!(late["status"], "timeout", "{late}");
    assert!(servers_of(&p).is_empty(), "{:?}", servers_of(&p));
    let printed = format!("{}{}", out.stdout, out.stderr);
    assert!(!printed.contains(secret));
    for entry in walkdir::WalkDir::new(p.path().join("results"))
        .into_iter()
        .flatten()
    {
        if entry.file_type().is_file() {
            let text = String::from_utf8_lossy(&std::fs::read(entry.path()).unwrap()).into_owned();
            assert!(
                !text.contains(secret),
                "the secret in {}",
                entry.path().display()
            );
        }
    }
}

#[test]
#[cfg_attr(skip_mcp, ignore = "UFO_BATCH_SKIP_TESTS: needs mcp")]
fn a_resume_runs_again_the_tasks_whose_mcp_servers_changed() {
    let (fs, _) = servers();
    let p = Project::new();
    let fs_config = |tools: &str| {
        format!(
            "[[mcp.servers]]\nname = \"fs\"\ncommand = \"node\"\nargs = [\"{}\", \"{{workspace}}\"]\ntools = {tools}\n",
            fs.display()
        )
    };
    p.file("ufo-batch.toml", &fs_config(r#"["write_file"]"#));
    p.task("plain.json", crate::helpers::shell_plan("plain", &["true"]));
    p.task(
        "uses_fs.json",
        json!({"request": "r", "actions": [{"action": "fs.write_file", "parameters": {"path": "a", "content": "b"}}]}),
    );
    p.run(&[]).expect_code(0);
    let again = p.run(&[]);
    again.expect_code(0);
    assert!(
        again.stderr.contains("2 already passed and are kept"),
        "{}",
        again.stderr
    );
    p.file(
        "ufo-batch.toml",
        &fs_config(r#"["write_file", "read_text_file"]"#),
    );
    let changed = p.run(&[]);
    changed.expect_code(0);
    assert!(
        changed.stderr.contains("1 already passed and is kept"),
        "{}",
        changed.stderr
    );
    assert!(
        changed.stderr.contains("1 task re-run:") && changed.stderr.contains("mcp"),
        "{}",
        changed.stderr
    );
}

#[test]
#[cfg_attr(skip_mcp, ignore = "UFO_BATCH_SKIP_TESTS: needs mcp")]
fn a_server_dying_as_the_run_is_stopped_cancels_its_task() {
    let (fs, python) = servers();
    let linux = LinuxServer::start(&python);
    let p = Project::new();
    p.file("ufo-batch.toml", &config(&p, &fs, &python, &linux.url, ""));
    p.task(
        "hang.json",
        json!({"request": "r", "actions": [{"action": "faulty.hang", "parameters": {"seconds": 1.5}}, {"action": "faulty.hang", "parameters": {"seconds": 40}}]}),
    );
    let run = p.start_env(
        &["run", "tasks", "--progress", "lines"],
        &[("LINUX_MCP_KEY", KEY)],
    );
    let clock = std::time::Instant::now();
    // The task's own server (not the check's before the run) is up once a call has passed.
    let log = p.path().join("results/proj/hang/response.log");
    while !log.exists() {
        assert!(
            clock.elapsed().as_secs() < 60,
            "the task did not get to its server"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    // As a scheduler does: the runner is told to stop, and the server dies at the same
    // moment (of the same signal, or killed).
    run.signal(libc::SIGTERM);
    for pid in servers_of(&p) {
        // SAFETY: kill(2) on a process of this test's run.
        unsafe { libc::kill(pid, libc::SIGKILL) };
    }
    let out = run.wait_within(std::time::Duration::from_secs(60));
    let status = out.status("hang");
    assert_eq!(status["status"], "cancelled", "{status}");
    assert!(servers_of(&p).is_empty(), "{:?}", servers_of(&p));
}

/// A server that lists 3,000 tools, answers 6 MB (twice: as text and structured) with control characters, or answers
/// a line no JSON reader takes: the prompt an agent gets stays bounded and says nothing
/// of the left-out tools but their count before the run; the answer is cut as local
/// output and escaped on the page; the malformed one is the server's fault, said as
/// such, not a call that did not answer in time. The start that lists its tools (before
/// the run, and for `ufo-batch tools`) is confined as a task's: it writes nowhere else.
#[test]
#[cfg_attr(skip_mcp, ignore = "UFO_BATCH_SKIP_TESTS: needs mcp")]
fn what_a_server_lists_or_answers_is_bounded_and_its_listing_start_is_confined() {
    let (_, python) = servers();
    let mock = MockLlm::start();
    mock.script("tools", vec![finish("looked at the tools")]);
    let p = llm_project();
    let mark = p.path().join("started-here.txt");
    let mut toml = std::fs::read_to_string(p.path().join("ufo-batch.toml")).unwrap();
    toml.push_str(&format!(
        "\n[[mcp.servers]]\nname = \"faulty\"\ncommand = \"{}\"\nargs = [\"{}\", \"--many-tools=3000\", \"--mark-start={}\"]\nenv = {{ PYTHONWARNINGS = \"ignore\" }}\ntimeout = \"10s\"\n",
        python.display(),
        script("faulty_server.py"),
        mark.display()
    ));
    p.file("ufo-batch.toml", &toml);
    p.task(
        "huge.json",
        json!({"request": "r", "actions": [{"action": "faulty.huge", "parameters": {"megabytes": 6}}]}),
    );
    p.task(
        "deep.json",
        json!({"request": "r", "actions": [{"action": "faulty.deep", "parameters": {}}]}),
    );
    p.task(
        "agent.json",
        json!({"request": format!("Look at the tools {}", marker("tools"))}),
    );
    let url = mock.url();
    let out = p.cmd(&[
        "run",
        "tasks",
        "--progress",
        "lines",
        "--llm-base-url",
        &url,
        "--eval",
        "none",
    ]);
    assert!(
        out.stderr.contains("MCP server `faulty`:") && out.stderr.contains("left out"),
        "{}",
        out.stderr
    );
    assert!(
        !mark.exists(),
        "a start of the server wrote outside its folder"
    );
    // The agent's prompt, as the model read it: bounded, the server's own tools in it.
    let first = &mock.received_for("tools")[0].body;
    let prompt = first["messages"][0]["content"].as_str().unwrap();
    assert!(prompt.contains("`faulty.echo`"), "{}", &prompt[..2000]);
    assert!(
        prompt.len() < 64 * 1024,
        "a prompt of {} bytes",
        prompt.len()
    );
    assert!(
        first.to_string().len() < 256 * 1024,
        "a request of {} bytes",
        first.to_string().len()
    );
    let huge = out.status("huge");
    assert_eq!(huge["status"], "passed", "{huge}");
    let logged = std::fs::metadata(p.path().join("results/proj/huge/response.log"))
        .unwrap()
        .len();
    assert!(logged < 1 << 20, "response.log is {logged} bytes");
    let page = out.task_file("huge", "task.html");
    assert!(
        !page.contains('\u{1b}') && !page.contains('\u{7}'),
        "raw control characters"
    );
    let deep = out.status("deep");
    assert_eq!(deep["status"], "error", "{deep}");
    let why = deep["error"].as_str().unwrap();
    assert!(
        why.contains("malformed message") && !why.contains("did not answer"),
        "{why}"
    );
    // `ufo-batch tools` starts the server confined too.
    let tools = p.cmd(&["tools"]);
    tools.expect_code(0);
    assert!(tools.stdout.contains("faulty.echo"), "{}", tools.stdout);
    assert!(
        !mark.exists(),
        "`tools` started the server with the runner's rights"
    );
}
