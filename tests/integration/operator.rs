//! Operator sessions (UFO's `operator` and `normal_operator`) on real apps under a
//! virtual display, their model reached through stand-ins of the providers' APIs
//! (`tests/operator/stand_in.py`) that validate every request against the official
//! `openai` and `anthropic` SDKs' own types and build every reply from their models: an
//! operator types Unicode text into Mousepad and Writer and saves it, checked in the
//! file; a batch of actions runs in order, a failed one stops it and is told back; a
//! safety check is acknowledged, or refuses the task; a provider that refuses the tool
//! version is the configuration's error; the recorded plan replays with no model after
//! the window was moved and resized, by the element its actions hit. Without the desktop
//! stack or the SDKs' venv they fail naming the script that installs them.

use std::collections::HashMap;
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use serde_json::{Value, json};

use crate::desktop::desktop_stack;
use crate::desktop_agents::{host_finish, select, steps};
use crate::helpers::{Output, Project, read_json};
use crate::mock_llm::{MockLlm, marker};

/// The text every operator test types: accents, a dash, CJK and a symbol.
pub(crate) const UNICODE: &str = "naïve — 東京 ✓";

/// A stand-in of the providers' APIs, shared by the tests of one chat format.
pub(crate) struct StandIn {
    child: Child,
    url: String,
    log: PathBuf,
}

impl Drop for StandIn {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Fails the test unless the SDKs' venv is here (`helpers::require_stack`).
pub(crate) fn operator_stack() {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/setup-operator.sh");
    let ok = Command::new("bash")
        .arg(&script)
        .arg("--check")
        .output()
        .is_ok_and(|o| o.status.success());
    crate::helpers::require_stack("operator", ok, "bash scripts/setup-operator.sh")
}

impl StandIn {
    /// The stand-in for chat format `format` (started once), with `scenarios` added.
    pub(crate) fn with(format: &str, scenarios: Value) -> &'static StandIn {
        static SERVERS: OnceLock<Mutex<HashMap<String, &'static StandIn>>> = OnceLock::new();
        let servers = SERVERS.get_or_init(Mutex::default);
        let server = {
            let mut servers = servers.lock().unwrap_or_else(|p| p.into_inner());
            *servers
                .entry(format.to_string())
                .or_insert_with(|| Box::leak(Box::new(StandIn::start(format))))
        };
        server.add(scenarios);
        server
    }

    fn start(format: &str) -> StandIn {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let python = root.join("target/operator/venv/bin/python");
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("stand-ins");
        std::fs::create_dir_all(&dir).unwrap();
        let log = dir.join(format!("{format}-{}.jsonl", std::process::id()));
        let _ = std::fs::remove_file(&log);
        let mut child = Command::new(python)
            .arg(root.join("tests/operator/stand_in.py"))
            .args(["--log", log.to_str().unwrap(), "--format", format])
            .args(["--parent", &std::process::id().to_string()])
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start the stand-in");
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = std::io::BufReader::new(stdout).read_line(&mut line);
            let _ = tx.send(line);
        });
        let line = rx
            .recv_timeout(Duration::from_secs(120))
            .expect("the stand-in says where it listens");
        let url = line
            .trim()
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("the stand-in said {line:?}"))
            .to_string();
        StandIn { child, url, log }
    }

    /// Adds scenarios to the running server.
    fn add(&self, scenarios: Value) {
        let body = json!({"scenarios": scenarios}).to_string();
        let address = self.url.trim_start_matches("http://");
        let mut stream = std::net::TcpStream::connect(address).unwrap();
        let request = format!(
            "POST /stand-in/scenarios HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        std::io::Write::write_all(&mut stream, request.as_bytes()).unwrap();
        let mut answer = String::new();
        std::io::Read::read_to_string(&mut stream, &mut answer).unwrap();
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    }

    /// The server's root (its `/v1` for OpenAI and chat; its host for Anthropic).
    pub(crate) fn url(&self) -> &str {
        &self.url
    }

    /// The requests of scenario `name`, in order, each as the log has it.
    pub(crate) fn requests(&self, name: &str) -> Vec<Value> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter(|e| e["scenario"] == name)
            .collect()
    }

    /// The requests of `name`, every one of which the SDK's types took.
    #[track_caller]
    pub(crate) fn valid_requests(&self, name: &str) -> Vec<Value> {
        let requests = self.requests(name);
        assert!(
            !requests.is_empty(),
            "no request of {name} reached the stand-in"
        );
        for r in &requests {
            assert_ne!(
                r["invalid"], true,
                "a request of {name} does not validate: {}",
                r["reply"]
            );
        }
        requests
    }
}

/// A project whose operator is `provider` at the stand-in.
pub(crate) fn operator_project(server: &StandIn, provider: &str, extra: &str) -> Project {
    let p = Project::new();
    let base = match provider {
        "anthropic" => server.url().to_string(),
        _ => format!("{}/v1", server.url()),
    };
    let model = match provider {
        "anthropic" => "claude-operator",
        "openai" => "gpt-5.4",
        _ => "ui-tars-1.5-7b",
    };
    p.file(
        "ufo-batch.toml",
        &format!(
            "[llm]\nmodel = \"test-model\"\ntimeout = \"5s\"\nmax_retries = 2\nretry_base = \"20ms\"\n\n\
             [operator]\nprovider = \"{provider}\"\nmodel = \"{model}\"\nbase_url = \"{base}\"\ntimeout = \"30s\"\nmax_retries = 1\n{extra}"
        ),
    );
    p
}

/// Mousepad's note, as a UFO project's file.
pub(crate) fn note_project(p: &Project) {
    p.file("files/note.txt", "an old line\n");
}

/// The scenario that replaces the note's text with [`UNICODE`] and saves it, clicking
/// into the text area first: one batch, then the end.
pub(crate) fn note_script() -> Value {
    json!([
        {"thought": "I click into the note, select its text and type over it.",
         "actions": [{"click": [0.25, 0.3]}, {"keypress": ["ctrl", "a"]}, {"type": UNICODE},
                     {"keypress": ["ctrl", "s"]}]},
        {"message": "The note says the new words and is saved."}
    ])
}

/// A note task in `mode`, for scenario `name`.
pub(crate) fn note_task(p: &Project, name: &str, mode: &str) {
    p.task(
        &format!("{name}.json"),
        json!({"task": format!("Replace the note's text with {UNICODE} and save it {}", marker(name)),
               "object": "note.txt", "mode": mode, "close": true, "timeout": 180,
               "evaluate": [{"type": "file_equals", "path": "note.txt", "content": UNICODE}]}),
    );
}

fn run(p: &Project, extra: &[&str]) -> Output {
    let mut args = vec!["--jobs", "2"];
    args.extend_from_slice(extra);
    p.cmd_env(
        &[&["run", "tasks", "--progress", "lines"], args.as_slice()].concat(),
        &[
            ("OPENAI_API_KEY", "sk-stand-in"),
            ("ANTHROPIC_API_KEY", "sk-ant-stand-in"),
        ],
    )
}

/// The note's text as the task left it.
fn note(out: &Output, id: &str) -> String {
    out.task_file(id, "workspace/note.txt")
}

#[test]
#[cfg_attr(
    any(skip_desktop, skip_operator),
    ignore = "UFO_BATCH_SKIP_TESTS: needs desktop, operator"
)]
fn an_openai_operator_types_unicode_into_mousepad_and_saves_it() {
    desktop_stack();
    operator_stack();
    let server = StandIn::with("ui-tars-1.5", json!({"openai-note": note_script()}));
    let p = operator_project(server, "openai", "");
    note_project(&p);
    note_task(&p, "openai-note", "operator");
    let out = run(&p, &[]);
    out.expect_code(0);
    assert_eq!(note(&out, "openai-note"), UNICODE);
    let status = out.status("openai-note");
    assert_eq!(status["session"], "OpenAIOperatorSession");
    // Each action of the batch is its own step, and the reply with no action the end.
    let steps = steps(&out, "openai-note");
    let tools: Vec<&str> = steps
        .iter()
        .flat_map(|s| s["action"].as_array().unwrap())
        .map(|a| a["function"].as_str().unwrap())
        .collect();
    assert_eq!(tools, ["click", "keypress", "type", "keypress"]);
    assert_eq!(steps.len(), 5);
    assert_eq!(steps[4]["status"], "FINISH");
    // The click: the model's point in its space, the desktop pixel, the element hit.
    let click = &steps[0]["action"][0];
    assert!(
        click["arguments"]["model"]["space"]
            .as_str()
            .unwrap()
            .starts_with("pixels of the 1280x800 screenshot"),
        "{click}"
    );
    let element = &click["result"]["result"]["element"];
    assert_eq!(
        element["role"], "text",
        "the hit test reaches the text area: {element}"
    );
    assert!(
        element["window"]
            .as_str()
            .unwrap()
            .ends_with("note.txt - Mousepad"),
        "{element}"
    );
    // What went to the provider: the GA tool; the conversation the server's; every call
    // answered with the screen after it.
    let requests = server.valid_requests("openai-note");
    assert_eq!(requests.len(), 2);
    let first = &requests[0]["body"];
    assert_eq!(first["tools"], json!([{"type": "computer"}]));
    assert_eq!(first["truncation"], "auto");
    let second = &requests[1]["body"];
    assert!(second["previous_response_id"].is_string());
    let output = &second["input"][0];
    assert_eq!(output["type"], "computer_call_output");
    assert_eq!(
        output["call_id"],
        requests[0]["reply"]["output"][1]["call_id"]
    );
    assert!(
        output["output"]["image_url"]
            .as_str()
            .unwrap()
            .starts_with("data:image/png;base64,")
    );
    // The step's output.md says where it acted, on what.
    let md = out.task_file("openai-note", "output.md");
    assert!(md.contains("- **Element**: text"), "{md}");
    assert!(md.contains("- **Model's point**: "), "{md}");
}

#[test]
#[cfg_attr(
    any(skip_desktop, skip_operator),
    ignore = "UFO_BATCH_SKIP_TESTS: needs desktop, operator"
)]
fn an_anthropic_operator_does_the_host_agents_subtask_in_writer() {
    desktop_stack();
    operator_stack();
    let server = StandIn::with(
        "ui-tars-1.5",
        json!({"anthropic-writer": [
            {"thought": "I look closer at the page, then click into it, go to its end and type.",
             "actions": [{"zoom": [0.0, 0.0, 0.5, 0.25]}, {"click": [0.5, 0.45]}, {"cursor_position": true},
                         {"keypress": ["ctrl", "End"]}, {"type": format!(" {UNICODE}")},
                         {"keypress": ["ctrl", "s"]}]},
            {"message": "Typed and saved."}
        ]}),
    );
    let mock = MockLlm::start();
    mock.script(
        "writer-host",
        vec![
            select(
                "doc",
                "ASSIGN",
                "Type the words at the end of the document and save it [script:anthropic-writer]",
            ),
            host_finish(),
        ],
    );
    let p = operator_project(server, "anthropic", "");
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/documents/doc.odt");
    std::fs::create_dir_all(p.path().join("files")).unwrap();
    std::fs::copy(fixture, p.path().join("files/doc.odt")).unwrap();
    // The HostAgent's script by its marker; the operator's by the one the HostAgent
    // writes into its subtask.
    p.task(
        "writer.json",
        json!({"task": format!("Add {UNICODE} at the end of the document and save it {}",
                               marker("writer-host")),
               "object": "doc.odt", "mode": "normal_operator", "close": true, "timeout": 240,
               "evaluate": [{"type": "document_contains", "path": "doc.odt", "pattern": UNICODE}]}),
    );
    let url = mock.url();
    let out = run(&p, &["--llm-base-url", &url]);
    out.expect_code(0);
    let steps = steps(&out, "writer");
    let agents: Vec<&str> = steps
        .iter()
        .map(|s| s["agent_name"].as_str().unwrap())
        .collect();
    assert_eq!(agents[0], "HostAgent");
    assert!(
        agents[1..8].iter().all(|a| a.starts_with("OperatorAgent")),
        "{agents:?}"
    );
    assert_eq!(agents.last(), Some(&"HostAgent"));
    // The operator saw the window, not the desktop, and its points are the window's.
    let click = &steps[2]["action"][0];
    assert!(click["arguments"]["window"].is_object(), "{click}");
    let requests = server.valid_requests("anthropic-writer");
    let first = &requests[0]["body"];
    assert_eq!(
        first["tools"],
        json!([{"type": "computer_toolset_20260801"}])
    );
    let instruction = first["messages"][0]["content"][0]["text"].as_str().unwrap();
    assert!(
        instruction.starts_with("Please complete the following subtask: Type the words"),
        "{instruction}"
    );
    assert!(
        instruction.contains(
            "Please do not ask for consent to perform the task, just execute the action."
        ),
        "{instruction}"
    );
    // Every tool_use answered in order, echoing the toolset, the screen with the last.
    let second = &requests[1]["body"]["messages"];
    let results = second[2]["content"].as_array().unwrap();
    let ids: Vec<&Value> = requests[0]["reply"]["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["type"] == "tool_use")
        .map(|b| &b["id"])
        .collect();
    let answered: Vec<&Value> = results.iter().map(|r| &r["tool_use_id"]).collect();
    assert_eq!(answered, ids);
    assert!(results.iter().all(|r| r["toolset_name"] == "computer"));
    assert_eq!(results.last().unwrap()["content"][1]["type"], "image");
    // The zoom came back as a picture, the pointer's place in the model's pixels.
    assert_eq!(results[0]["content"][1]["type"], "image");
    let told = results[2]["content"][0]["text"].as_str().unwrap();
    assert!(told.starts_with("the pointer is at ("), "{told}");
}

#[test]
#[cfg_attr(
    any(skip_desktop, skip_operator),
    ignore = "UFO_BATCH_SKIP_TESTS: needs desktop, operator"
)]
fn an_operator_in_writer_and_a_normal_operator_in_mousepad() {
    desktop_stack();
    operator_stack();
    // An open model (Qwen2.5-VL's tool calls, pixels of its resized image) alone on
    // Writer's desktop.
    let server = StandIn::with(
        "qwen2.5-vl",
        json!({"qwen-writer": [
            {"thought": "Into the page, to its end.", "actions": [{"click": [0.5, 0.45]}, {"keypress": ["ctrl", "End"]}]},
            {"actions": [{"type": format!(" {UNICODE}")}, {"keypress": ["ctrl", "s"]}]},
            {"actions": [{"done": "saved"}]}
        ]}),
    );
    let p = operator_project(server, "chat", "format = \"qwen2.5-vl\"\n");
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/documents/doc.odt");
    std::fs::create_dir_all(p.path().join("files")).unwrap();
    std::fs::copy(fixture, p.path().join("files/doc.odt")).unwrap();
    p.task(
        "writer.json",
        json!({"task": format!("Add {UNICODE} at the end of the document and save it {}", marker("qwen-writer")),
               "object": "doc.odt", "mode": "operator", "close": true, "timeout": 240,
               "evaluate": [{"type": "document_contains", "path": "doc.odt", "pattern": UNICODE}]}),
    );
    run(&p, &[]).expect_code(0);
    let requests = server.valid_requests("qwen-writer");
    let system = requests[0]["body"]["messages"][0]["content"]
        .as_str()
        .unwrap();
    assert!(system.contains("resolution is 1288x812"), "{system}");
    // OpenAI's preview tool under a HostAgent, on Mousepad's window, with the run's mode.
    let server = StandIn::with(
        "ui-tars-1.5",
        json!({"preview-note": [
            {"actions": [{"click": [0.5, 0.5]}]},
            {"actions": [{"keypress": ["ctrl", "a"]}, {"type": UNICODE}, {"keypress": ["ctrl", "s"]}]},
            {"message": "Saved."}
        ]}),
    );
    let mock = MockLlm::start();
    mock.script(
        "note-host",
        vec![
            select(
                "note",
                "ASSIGN",
                "Replace the text and save the note [script:preview-note]",
            ),
            host_finish(),
        ],
    );
    let p = operator_project(
        server,
        "openai",
        "tool = \"computer_use_preview\"\nenvironment = \"linux\"\n",
    );
    note_project(&p);
    p.task(
        "note.json",
        json!({"task": format!("Replace the note's text with {UNICODE} and save it {}", marker("note-host")),
               "object": "note.txt", "close": true, "timeout": 180,
               "evaluate": [{"type": "file_equals", "path": "note.txt", "content": UNICODE}]}),
    );
    let url = mock.url();
    let out = run(&p, &["--llm-base-url", &url, "--mode", "normal_operator"]);
    out.expect_code(0);
    assert_eq!(note(&out, "note"), UNICODE);
    let requests = server.valid_requests("preview-note");
    let tool = &requests[0]["body"]["tools"][0];
    assert_eq!(tool["type"], "computer_use_preview");
    assert_eq!(tool["environment"], "linux");
    // The picture is the window's: Mousepad's, not the screen's.
    assert!(tool["display_width"].as_i64().unwrap() < 1280, "{tool}");
}

#[test]
#[cfg_attr(
    any(skip_desktop, skip_operator),
    ignore = "UFO_BATCH_SKIP_TESTS: needs desktop, operator"
)]
fn open_models_in_their_formats_type_into_mousepad() {
    desktop_stack();
    operator_stack();
    for format in ["ui-tars-1.5", "qwen3-vl", "ui-tars-2"] {
        let name = format!("chat-{format}");
        let server = StandIn::with(
            format,
            json!({name.clone(): [
                {"thought": "Into the note.", "actions": [{"click": [0.25, 0.3]}, {"keypress": ["ctrl", "a"]}]},
                {"actions": [{"type": UNICODE}, {"keypress": ["ctrl", "s"]}]},
                {"actions": [{"done": "saved"}]}
            ]}),
        );
        let p = operator_project(
            server,
            "chat",
            &format!("format = \"{format}\"\nkeep_screenshots = 2\n"),
        );
        note_project(&p);
        note_task(&p, &name, "operator");
        let out = run(&p, &[]);
        out.expect_code(0);
        assert_eq!(note(&out, &name), UNICODE, "{format}");
        let requests = server.valid_requests(&name);
        assert_eq!(requests.len(), 3, "{format}");
        // Only the last screenshots go again.
        let images = |r: &Value| {
            r["body"]
                .to_string()
                .matches("data:image/png;base64,")
                .count()
        };
        assert_eq!(images(&requests[2]), 2, "{format}");
    }
}

#[test]
#[cfg_attr(
    any(skip_desktop, skip_operator),
    ignore = "UFO_BATCH_SKIP_TESTS: needs desktop, operator"
)]
fn a_failed_action_stops_its_batch_and_the_model_is_told() {
    desktop_stack();
    operator_stack();
    let server = StandIn::with(
        "ui-tars-1.5",
        json!({"batch-fails": [
            {"actions": [{"click": {"px": [5000, 10]}}]},
            {"actions": [{"click": [0.25, 0.3]}, {"keypress": ["ctrl", "warp"]}, {"type": "never typed"}]},
            {"actions": [{"keypress": ["ctrl", "a"]}, {"type": UNICODE}, {"keypress": ["ctrl", "s"]}]},
            {"message": "Done after the mistake."}
        ]}),
    );
    let p = operator_project(server, "openai", "");
    note_project(&p);
    note_task(&p, "batch-fails", "operator");
    let out = run(&p, &[]);
    out.expect_code(0);
    assert_eq!(note(&out, "batch-fails"), UNICODE);
    let steps = steps(&out, "batch-fails");
    let actions: Vec<(&str, &str)> = steps
        .iter()
        .flat_map(|s| s["action"].as_array().unwrap())
        .map(|a| {
            (
                a["function"].as_str().unwrap(),
                a["result"]["status"].as_str().unwrap(),
            )
        })
        .collect();
    // A point off the screen is refused; the third action of the next batch never ran.
    assert_eq!(
        actions,
        [
            ("click", "failure"),
            ("click", "success"),
            ("keypress", "failure"),
            ("keypress", "success"),
            ("type", "success"),
            ("keypress", "success")
        ]
    );
    let off = &steps[0]["action"][0]["result"]["error"];
    assert!(
        off.as_str()
            .unwrap()
            .contains("(5000, 10) is outside the screenshot"),
        "{off}"
    );
    let failed = &steps[2]["action"][0]["result"]["error"];
    assert!(
        failed
            .as_str()
            .unwrap()
            .contains("no key is named \"warp\""),
        "{failed}"
    );
    let requests = server.valid_requests("batch-fails");
    assert!(
        requests[1]["body"]
            .to_string()
            .contains("is outside the screenshot")
    );
    let told = requests[2]["body"].to_string();
    assert!(told.contains("no key is named"), "{told}");
    assert!(told.contains("not run: an earlier action"), "{told}");
}

#[test]
#[cfg_attr(
    any(skip_desktop, skip_operator),
    ignore = "UFO_BATCH_SKIP_TESTS: needs desktop, operator"
)]
fn safety_checks_are_acknowledged_and_counted_or_refuse_the_task() {
    desktop_stack();
    operator_stack();
    let checked = |name: &str| {
        json!({name: [
            {"safety_checks": [{"code": "sensitive_domain", "message": "The page asks for a password."}],
             "actions": [{"click": [0.25, 0.3]}, {"keypress": ["ctrl", "a"]}, {"type": UNICODE}, {"keypress": ["ctrl", "s"]}]},
            {"message": "Saved."}
        ]})
    };
    let server = StandIn::with("ui-tars-1.5", checked("safety-ack"));
    StandIn::with("ui-tars-1.5", checked("safety-refuse"));
    let p = operator_project(server, "openai", "");
    note_project(&p);
    note_task(&p, "safety-ack", "operator");
    let out = run(&p, &[]);
    out.expect_code(0);
    assert_eq!(out.status("safety-ack")["llm"]["safety_checks"], 1);
    let second = &server.valid_requests("safety-ack")[1]["body"]["input"][0];
    assert_eq!(
        second["acknowledged_safety_checks"][0]["code"],
        "sensitive_domain"
    );
    let step = &steps(&out, "safety-ack")[0];
    assert_eq!(step["safety_checks"][0]["code"], "sensitive_domain");
    assert!(
        out.task_file("safety-ack", "task.log")
            .contains("acknowledged"),
        "the acknowledgement is said"
    );
    let p = operator_project(server, "openai", "safety_checks = \"refuse\"\n");
    note_project(&p);
    note_task(&p, "safety-refuse", "operator");
    let out = run(&p, &[]);
    out.expect_code(1);
    let status = out.status("safety-refuse");
    assert_eq!(status["status"], "failed");
    let why = status["error"].as_str().unwrap();
    assert!(
        why.contains("sensitive_domain") && why.contains("safety_checks = \"refuse\""),
        "{why}"
    );
    assert_eq!(note(&out, "safety-refuse"), "an old line\n", "nothing ran");
}

#[test]
#[cfg_attr(
    any(skip_desktop, skip_operator),
    ignore = "UFO_BATCH_SKIP_TESTS: needs desktop, operator"
)]
fn a_provider_that_refuses_the_tool_version_is_the_configurations_error() {
    desktop_stack();
    operator_stack();
    let refusal = json!({"type": "error", "error": {"type": "invalid_request_error",
        "message": "tools.0: the tool type 'computer_20251124' is not supported by this model; use computer_toolset_20260801"}});
    let server = StandIn::with(
        "ui-tars-1.5",
        json!({"tool-refused": [{"fault": {"status": 400, "body": refusal}}]}),
    );
    let p = operator_project(server, "anthropic", "tool = \"computer_20251124\"\n");
    note_project(&p);
    note_task(&p, "tool-refused", "operator");
    let out = run(&p, &[]);
    out.expect_code(1);
    let status = out.status("tool-refused");
    assert_eq!(status["status"], "error", "{status}");
    let why = status["error"].as_str().unwrap();
    assert!(why.contains("not supported by this model"), "{why}");
    assert!(why.contains("check [operator] tool"), "{why}");
    // The older tool went with its beta header, and validated as the beta type.
    let request = &server.valid_requests("tool-refused")[0];
    assert_eq!(
        request["headers"]["anthropic-beta"],
        "computer-use-2025-11-24"
    );
    assert_eq!(request["body"]["tools"][0]["display_width_px"], 1280);
}

#[test]
#[cfg_attr(
    any(skip_desktop, skip_operator),
    ignore = "UFO_BATCH_SKIP_TESTS: needs desktop, operator"
)]
fn anthropics_older_computer_tool_drives_mousepad() {
    desktop_stack();
    operator_stack();
    let server = StandIn::with("ui-tars-1.5", json!({"older-tool": note_script()}));
    let p = operator_project(server, "anthropic", "tool = \"computer_20251124\"\n");
    note_project(&p);
    note_task(&p, "older-tool", "operator");
    let out = run(&p, &[]);
    out.expect_code(0);
    assert_eq!(note(&out, "older-tool"), UNICODE);
    let requests = server.valid_requests("older-tool");
    assert_eq!(
        requests[0]["headers"]["anthropic-beta"],
        "computer-use-2025-11-24"
    );
    // Its replies name the tool `computer` and the member in `action`.
    let first_use = requests[0]["reply"]["content"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["type"] == "tool_use")
        .cloned()
        .unwrap();
    assert_eq!(first_use["name"], "computer");
    assert_eq!(first_use["input"]["action"], "left_click");
}

#[test]
#[cfg_attr(
    any(skip_desktop, skip_operator),
    ignore = "UFO_BATCH_SKIP_TESTS: needs desktop, operator"
)]
fn a_reply_with_neither_an_action_nor_a_message_is_corrected() {
    desktop_stack();
    operator_stack();
    let server = StandIn::with(
        "ui-tars-1.5",
        json!({"empty-reply": [
            {"thought": "hmm"},
            {"actions": [{"click": [0.25, 0.3]}, {"keypress": ["ctrl", "a"]}, {"type": UNICODE}, {"keypress": ["ctrl", "s"]}]},
            {"message": "Saved."}
        ]}),
    );
    let p = operator_project(server, "openai", "");
    note_project(&p);
    note_task(&p, "empty-reply", "operator");
    let out = run(&p, &[]);
    out.expect_code(0);
    assert_eq!(out.status("empty-reply")["llm"]["bad_replies"], 1);
    let corrected = server.valid_requests("empty-reply")[1]["body"].to_string();
    assert!(
        corrected.contains("neither an action nor a message"),
        "{corrected}"
    );
}

/// A fixture that moves and resizes Mousepad's window once it shows, as a window
/// manager would (an X11 ConfigureWindow through libX11), so that a replay meets its
/// window elsewhere and of another size.
const MOVE_WINDOW: &str = r#"
import ctypes, time
x = ctypes.cdll.LoadLibrary("libX11.so.6")
x.XOpenDisplay.restype = ctypes.c_void_p
x.XDefaultRootWindow.argtypes = [ctypes.c_void_p]
x.XDefaultRootWindow.restype = ctypes.c_ulong
x.XQueryTree.argtypes = [ctypes.c_void_p, ctypes.c_ulong, ctypes.POINTER(ctypes.c_ulong), ctypes.POINTER(ctypes.c_ulong), ctypes.POINTER(ctypes.POINTER(ctypes.c_ulong)), ctypes.POINTER(ctypes.c_uint)]
x.XMoveResizeWindow.argtypes = [ctypes.c_void_p, ctypes.c_ulong, ctypes.c_int, ctypes.c_int, ctypes.c_uint, ctypes.c_uint]
x.XFetchName.argtypes = [ctypes.c_void_p, ctypes.c_ulong, ctypes.POINTER(ctypes.c_char_p)]
d = None
for _ in range(200):
    d = x.XOpenDisplay(None)
    if d: break
    time.sleep(0.05)
root = x.XDefaultRootWindow(d)
for _ in range(400):
    r, p, n = ctypes.c_ulong(), ctypes.c_ulong(), ctypes.c_uint()
    kids = ctypes.POINTER(ctypes.c_ulong)()
    x.XQueryTree(d, root, ctypes.byref(r), ctypes.byref(p), ctypes.byref(kids), ctypes.byref(n))
    for i in range(n.value):
        name = ctypes.c_char_p()
        if x.XFetchName(d, kids[i], ctypes.byref(name)) and name.value and b" - Mousepad" in name.value:
            # Again over a second and a half: an app still starting may set its own
            # geometry after the first move (seen under load).
            for _ in range(6):
                x.XMoveResizeWindow(d, kids[i], 330, 210, 820, 520)
                x.XFlush(d)
                time.sleep(0.25)
            open("moved", "w").close()
            raise SystemExit(0)
    time.sleep(0.05)
"#;

#[test]
#[cfg_attr(
    any(skip_desktop, skip_operator),
    ignore = "UFO_BATCH_SKIP_TESTS: needs desktop, operator"
)]
fn a_recorded_operator_run_replays_by_element_after_its_window_moved() {
    desktop_stack();
    operator_stack();
    let server = StandIn::with("ui-tars-1.5", json!({"record-note": note_script()}));
    let p = operator_project(server, "openai", "");
    note_project(&p);
    note_task(&p, "record-note", "operator");
    run(&p, &[]).expect_code(0);
    let plan_path = p.path().join("results/proj/record-note/plan.json");
    let mut plan = read_json(&plan_path);
    let click = &plan["actions"][0];
    assert_eq!(click["action"], "click");
    assert_eq!(click["parameters"]["element"]["role"], "text", "{click}");
    let recorded_at = (
        click["parameters"]["x"].as_i64().unwrap(),
        click["parameters"]["y"].as_i64().unwrap(),
    );
    // The replay: Mousepad moved and resized as it shows (its old place is now bare
    // desktop: a click there would type nowhere); the replay waits until it moved, and
    // a moment more for the app to follow.
    plan["id"] = json!("replay");
    plan["app"] = json!({"command": ["sh", "-c", "python3 move.py & exec mousepad note.txt"]});
    plan["files"] = json!({"move.py": MOVE_WINDOW});
    plan["actions"].as_array_mut().unwrap().splice(
        0..0,
        [
            json!({"action": "execute_command", "parameters": {
                "command": "for i in $(seq 300); do [ -e moved ] && exit 0; sleep 0.1; done; exit 1"
            }}),
            json!({"action": "wait", "parameters": {"seconds": 1}}),
        ],
    );
    let replay = Project::new();
    note_project(&replay);
    replay.task("replay.json", plan.clone());
    let out = replay.run(&[]);
    out.expect_code(0);
    assert_eq!(note(&out, "replay"), UNICODE);
    let steps = steps(&out, "replay");
    let clicked = &steps[2]["action"][0]["result"]["result"];
    let at = (
        clicked["at"][0].as_i64().unwrap(),
        clicked["at"][1].as_i64().unwrap(),
    );
    assert!(
        at.0 > 330 && at.1 > 210,
        "the click followed the window to {at:?} (recorded at {recorded_at:?})"
    );
    assert!(
        clicked["how"]
            .as_str()
            .unwrap()
            .starts_with("on the recorded text"),
        "{clicked}"
    );
    // Neither the element nor a window to follow: a divergence, with both screens
    // (replayed beside the recording, where its screenshots are).
    let mut gone = plan;
    gone["id"] = json!("gone");
    gone["actions"][2]["parameters"]["element"]["role"] = json!("push button");
    gone["actions"][2]["parameters"]["element"]["name"] = json!("No Such Button");
    gone["actions"][2]["parameters"]["element"]["path"] = json!([]);
    p.file(
        "results/proj/record-note/gone.json",
        &serde_json::to_string_pretty(&gone).unwrap(),
    );
    let out = p.cmd(&[
        "run",
        "results/proj/record-note/gone.json",
        "--name",
        "gone-run",
        "--progress",
        "lines",
    ]);
    out.expect_code(1);
    let status = read_json(&out.run_dir("gone-run").join("gone/status.json"));
    assert_eq!(status["status"], "failed");
    let why = status["error"].as_str().unwrap();
    assert!(why.contains("diverged from the recording"), "{why}");
    assert!(
        why.contains("push button \"No Such Button\"") && why.contains("is not in the window now"),
        "{why}"
    );
    let recorded = p.path().join("results/proj/record-note/action_step1.png");
    assert!(
        why.contains(&format!(
            "the screen now: action_step3.png; as recorded: {}",
            Path::new("results/proj/record-note/action_step1.png").display()
        )) && recorded.is_file(),
        "{why}"
    );
}

#[test]
#[cfg_attr(
    any(skip_desktop, skip_operator),
    ignore = "UFO_BATCH_SKIP_TESTS: needs desktop, operator"
)]
fn an_open_menus_item_is_the_element_hit_and_replays() {
    desktop_stack();
    operator_stack();
    // Mousepad's File menu at the top left, its Save item below (an open menu is no
    // window of its own: the hit test looks into it first).
    let server = StandIn::with(
        "ui-tars-1.5",
        json!({"menu-save": [
            {"actions": [{"click": [0.25, 0.3]}, {"keypress": ["ctrl", "a"]}, {"type": UNICODE},
                         {"click": {"px": [19, 12]}}]},
            {"actions": [{"click": {"px": [44, 164]}}]},
            {"message": "Saved through the menu."}
        ]}),
    );
    let p = operator_project(server, "openai", "");
    note_project(&p);
    note_task(&p, "menu-save", "operator");
    let out = run(&p, &[]);
    out.expect_code(0);
    assert_eq!(note(&out, "menu-save"), UNICODE);
    let steps = steps(&out, "menu-save");
    let hit = |n: usize| steps[n]["action"][0]["result"]["result"]["element"].clone();
    assert_eq!(
        (hit(3)["role"].clone(), hit(3)["name"].clone()),
        (json!("menu"), json!("File"))
    );
    assert_eq!(
        (hit(4)["role"].clone(), hit(4)["name"].clone()),
        (json!("menu item"), json!("Save")),
        "{}",
        hit(4)
    );
    // The recording replays with no model, the menu item found again as it opens.
    let replayed = p.cmd(&[
        "run",
        "results/proj/menu-save/plan.json",
        "--name",
        "menu-replay",
        "--progress",
        "lines",
    ]);
    replayed.expect_code(0);
}
