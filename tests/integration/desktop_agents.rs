//! UFO's two-tier desktop agents on real apps under a virtual display, driven by the
//! scripted loopback LLM: a HostAgent that selects a window and assigns subtasks, and
//! AppAgents that act in it. The scripted replies name windows and controls by name and
//! by the id the request listed (read back from the request). Without the
//! desktop stack they fail (`desktop::desktop_stack`).

use std::path::Path;

use serde_json::{Value, json};

use crate::desktop::desktop_stack;
use crate::helpers::{Output, Project, read_json, run_binary};
use crate::llm::{llm_project, run_with};
use crate::mock_llm::{MockLlm, Reply, marker, verdict};

/// The things the last user message of a request listed (windows or controls), each a
/// JSON object with an `id`.
pub(crate) fn listed(body: &Value) -> Vec<Value> {
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    let last = messages
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .cloned()
        .unwrap_or_default();
    let text = crate::mock_llm::message_text(&last);
    text.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["id"].is_string())
        .collect()
}

/// How many images a request carries.
fn images(body: &Value) -> usize {
    body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|m| m["content"].as_array())
        .flatten()
        .filter(|p| p["type"] == "image_url")
        .filter(|p| {
            p["image_url"]["url"]
                .as_str()
                .is_some_and(|u| u.starts_with("data:image/png;base64,iVBOR"))
        })
        .count()
}

/// A HostAgent reply.
pub(crate) fn host(status: &str, subtask: &str, arguments: Value) -> String {
    let function = if arguments.as_object().is_some_and(|a| !a.is_empty()) {
        "select_application_window"
    } else {
        ""
    };
    json!({"observation": "the desktop", "thought": "next move", "current_subtask": subtask,
           "message": [], "status": status, "plan": [], "function": function,
           "arguments": arguments, "comment": if status == "FINISH" { "all done" } else { "" }})
    .to_string()
}

/// The HostAgent selecting the listed window whose title holds `title` (by the id the
/// request listed, and its name), with `status`. An app that has not shown its
/// document's name in its title yet is picked when it is the only window, as a model
/// would; with none, the reply names the title alone (and fails if it is not there).
pub(crate) fn select(title: &'static str, status: &'static str, subtask: &'static str) -> Reply {
    Reply::computed(move |body| {
        let windows = listed(body);
        let only = (windows.len() == 1).then(|| windows[0].clone());
        let window = windows
            .iter()
            .find(|w| w["name"].as_str().is_some_and(|n| n.contains(title)))
            .cloned()
            .or(only)
            .unwrap_or_else(|| json!({"id": "", "name": title}));
        host(
            status,
            subtask,
            json!({"id": window["id"], "name": window["name"]}),
        )
    })
}

/// An AppAgent reply.
pub(crate) fn app(function: &str, arguments: Value, status: &str) -> String {
    json!({"observation": "the window", "thought": "act", "action": {"function": function,
           "arguments": arguments, "status": status}, "plan": [], "comment": "",
           "save_screenshot": {"save": false, "reason": ""}})
    .to_string()
}

/// An AppAgent action on the listed control of `control_type` whose name holds `name`
/// (by its id and name; by name alone when the request did not list it yet: a dialog
/// still opening).
pub(crate) fn on(
    name: &'static str,
    control_type: &'static str,
    function: &'static str,
    extra: Value,
    status: &'static str,
) -> Reply {
    Reply::computed(move |body| {
        let mut arguments = extra.as_object().cloned().unwrap_or_default();
        match listed(body).into_iter().find(|c| {
            c["control_type"] == control_type
                && c["name"].as_str().is_some_and(|n| n.contains(name))
        }) {
            Some(c) => {
                arguments.insert("id".into(), c["id"].clone());
                arguments.insert("name".into(), c["name"].clone());
            }
            None => {
                arguments.insert("name".into(), json!(name));
            }
        }
        arguments.insert("control_type".into(), json!(control_type));
        app(function, Value::Object(arguments), status)
    })
}

pub(crate) fn host_finish() -> Reply {
    Reply::Content(host("FINISH", "", json!({})))
}

/// The response.log lines of a task.
pub(crate) fn steps(out: &Output, id: &str) -> Vec<Value> {
    out.task_file(id, "response.log")
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The task logs of `ids`, for a failure's message.
fn logs(out: &Output, ids: &[&str]) -> String {
    ids.iter()
        .map(|id| format!("--- {id}/task.log\n{}", out.task_file(id, "task.log")))
        .collect::<Vec<_>>()
        .join("\n")
}

pub(crate) fn office_files(p: &Project) {
    let files = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/desktop/files");
    for name in ["report.docx", "budget.xlsx", "deck.pptx"] {
        let to = p.path().join("files").join(name);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(files.join(name), to).unwrap();
    }
}

#[test]
#[cfg_attr(skip_desktop, ignore = "UFO_BATCH_SKIP_TESTS: needs desktop")]
fn a_writer_task_is_assigned_performed_checked_and_replays_without_the_llm() {
    desktop_stack();
    let mock = MockLlm::start();
    mock.script(
        "writer",
        vec![
            select(
                "report",
                "ASSIGN",
                "Type the heading and the paragraph, then save as .docx",
            ),
            on(
                "",
                "Document",
                "keyboard_input",
                json!({"keys": "^1Quarterly report{ENTER}Sales grew by twelve percent."}),
                "CONTINUE",
            ),
            on(
                "",
                "Document",
                "keyboard_input",
                json!({"keys": "^s"}),
                "CONTINUE",
            ),
            on(
                "Use Word 2007–365 Format",
                "Button",
                "click_input",
                json!({}),
                "FINISH",
            ),
            host_finish(),
        ],
    );
    let p = llm_project();
    office_files(&p);
    p.task(
        "writer.json",
        json!({"task": format!("Write a heading and a paragraph into the report and save it {}", marker("writer")),
               "object": "report.docx", "close": true, "timeout": 240,
               "evaluate": [{"type": "document_contains", "path": "report.docx", "pattern": "^Quarterly report$"},
                            {"type": "document_contains", "path": "report.docx", "pattern": "^Sales grew by twelve percent\\.$"}]}),
    );
    let out = run_with(&p, &mock, &[]);
    out.expect_code(0);
    let status = out.status("writer");
    assert_eq!(status["status"], "passed", "{status}");
    assert_eq!(status["session"], "FromFileSession");
    assert_eq!(status["steps"], 5, "{status}");
    assert_eq!(status["llm"]["calls"], 5, "{status}");
    assert_eq!(
        status["llm"]["images"], 10,
        "two screenshots per call: {status}"
    );

    // The model saw the screen: the HostAgent the desktop's windows, the AppAgent the
    // window's controls, each with the annotated and the clean screenshot.
    let requests = mock.received_for("writer");
    assert_eq!(requests.len(), 5);
    let system = |i: usize| {
        requests[i].body["messages"][0]["content"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert!(system(0).starts_with("You are HostAgent"), "{}", system(0));
    assert!(system(1).starts_with("You are AppAgent"), "{}", system(1));
    for r in &requests {
        assert_eq!(images(&r.body), 2, "{}", r.body["messages"]);
    }
    let windows = listed(&requests[0].body);
    assert!(
        windows
            .iter()
            .any(|w| w["name"].as_str().unwrap().contains("report")),
        "{windows:?}"
    );
    let controls = listed(&requests[1].body);
    assert!(
        controls.iter().any(|c| c["control_type"] == "Document"),
        "{controls:?}"
    );
    let brief = requests[1].body["messages"][1]["content"].to_string();
    assert!(
        brief.contains("<Current subtask, from the HostAgent> Type the heading"),
        "{brief}"
    );
    // An older step's screenshots are not sent again.
    assert!(
        requests[3].body["messages"]
            .to_string()
            .contains("not shown again")
    );
    // The subtask's report reaches the HostAgent.
    assert!(
        requests[4].body["messages"]
            .to_string()
            .contains("<Subtask report> The AppAgent finished"),
        "{}",
        requests[4].body["messages"]
    );

    // response.log: UFO's HostAgent and AppAgent keys, with what UFO drops.
    let log = steps(&out, "writer");
    assert_eq!(log[0]["agent_type"], "HostAgent");
    assert_eq!(log[0]["status"], "ASSIGN");
    assert_eq!(log[0]["function_call"], "select_application_window");
    assert!(
        log[0]["application"].as_str().unwrap().contains("report"),
        "{}",
        log[0]
    );
    assert_eq!(log[0]["current_subtask"], log[0]["subtask"]);
    assert_eq!(log[1]["agent_type"], "AppAgent");
    assert!(
        log[1]["agent_name"]
            .as_str()
            .unwrap()
            .starts_with("AppAgent/"),
        "{}",
        log[1]
    );
    assert_eq!(log[1]["function_call"], "keyboard_input");
    assert_eq!(log[1]["thought"], "act");
    assert!(
        log[1]["action_success"]
            .as_array()
            .is_some_and(|a| a.len() == 1),
        "{}",
        log[1]
    );
    assert_eq!(log[1]["save_screenshot"]["save"], false);
    assert_eq!(log[4]["agent_type"], "HostAgent");
    assert_eq!(log[4]["status"], "FINISH");

    // output.md reads like UFO's: subtask, thought, action and the two screenshots.
    let md = out.task_file("writer", "output.md");
    for needle in [
        "- **Subtask**: Type the heading",
        "- **Agent**: HostAgent",
        "`keyboard_input(",
        r#"<img src="./action_step2_annotated.png" width="45%""#,
        r#"<img src="./action_step3.png" width="45%""#,
    ] {
        assert!(md.contains(needle), "{needle}\n{md}");
    }

    // plan.json names each control by name and type, and replays with no LLM.
    let run = out.run_dir("proj");
    let plan = read_json(&run.join("writer/plan.json"));
    let actions = plan["actions"].as_array().unwrap();
    assert_eq!(actions[0]["action"], "select_application_window");
    assert!(
        actions[0]["parameters"]["name"]
            .as_str()
            .unwrap()
            .contains("report"),
        "{plan}"
    );
    assert_eq!(
        actions[1]["parameters"]["control_type"], "Document",
        "{plan}"
    );
    assert!(actions[1]["parameters"]["name"].is_string(), "{plan}");
    assert_eq!(
        actions[3]["expect"]["control"]["control_type"], "Button",
        "{plan}"
    );
    let elsewhere = tempfile::tempdir().unwrap();
    let replay = run_binary(
        elsewhere.path(),
        &[
            "run",
            run.to_str().unwrap(),
            "--out",
            "replays",
            "--progress",
            "lines",
        ],
        &[],
    );
    assert_eq!(replay.code, 0, "{}\n{}", replay.stdout, replay.stderr);
    let replayed = read_json(
        &elsewhere
            .path()
            .join("replays/proj-replay/writer/status.json"),
    );
    assert_eq!(replayed["status"], "passed", "{replayed}");
    assert_eq!(replayed["session"], "FollowerSession");
}

#[test]
#[cfg_attr(skip_desktop, ignore = "UFO_BATCH_SKIP_TESTS: needs desktop")]
fn two_subtasks_and_a_step_plan_on_calc() {
    desktop_stack();
    let mock = MockLlm::start();
    mock.script(
        "two",
        vec![
            select("budget", "ASSIGN", "Enter 1250 and 830 into A1 and A2"),
            on(
                "",
                "Document",
                "keyboard_input",
                json!({"keys": "^{HOME}1250{ENTER}830{ENTER}"}),
                "FINISH",
            ),
            select(
                "budget",
                "ASSIGN",
                "Put their sum into A3 and save as .xlsx",
            ),
            on(
                "",
                "Document",
                "keyboard_input",
                json!({"keys": "^{HOME}{DOWN 2}=SUM{(}A1:A2{)}{ENTER}^s"}),
                "CONTINUE",
            ),
            on(
                "Use Excel 2007–365 Format",
                "Button",
                "click_input",
                json!({}),
                "FINISH",
            ),
            host_finish(),
        ],
    );
    mock.script(
        "steps",
        vec![
            select("budget", "FINISH", ""),
            on(
                "",
                "Document",
                "keyboard_input",
                json!({"keys": "^{HOME}77{ENTER}"}),
                "FINISH",
            ),
            on(
                "",
                "Document",
                "keyboard_input",
                json!({"keys": "^s"}),
                "CONTINUE",
            ),
            on(
                "Use Excel 2007–365 Format",
                "Button",
                "click_input",
                json!({}),
                "FINISH",
            ),
        ],
    );
    let p = llm_project();
    office_files(&p);
    p.task(
        "two.json",
        json!({"task": format!("Enter two amounts and their sum {}", marker("two")), "object": "budget.xlsx", "timeout": 240,
               "evaluate": [{"type": "cell_equals", "path": "budget.xlsx", "cell": "A1", "value": 1250},
                            {"type": "cell_equals", "path": "budget.xlsx", "cell": "A3", "value": 2080}]}),
    );
    p.task(
        "steps.json",
        json!({"task": format!("Put 77 into the budget {}", marker("steps")), "object": "budget.xlsx", "timeout": 240,
               "steps": ["1. type 77 into A1", "2. save the spreadsheet as .xlsx"],
               "evaluate": [{"type": "cell_equals", "path": "budget.xlsx", "cell": "A1", "value": 77}]}),
    );
    let out = run_with(&p, &mock, &["--jobs", "2"]);
    assert_eq!(out.code, 0, "{}", logs(&out, &["two", "steps"]));
    let two = out.status("two");
    assert_eq!(two["status"], "passed", "{two}");
    let log = steps(&out, "two");
    let assigns: Vec<&Value> = log.iter().filter(|s| s["status"] == "ASSIGN").collect();
    assert_eq!(assigns.len(), 2, "{log:?}");
    assert_eq!(assigns[1]["subtask_index"], 2);
    // Each subtask starts the AppAgent with a fresh memory.
    let requests = mock.received_for("two");
    let second_subtask = requests[3].body["messages"].as_array().unwrap();
    assert_eq!(
        second_subtask.len(),
        3,
        "system, brief, screen: {second_subtask:?}"
    );

    // The step plan: round 0 is the HostAgent's, then one round per step.
    let steps_status = out.status("steps");
    assert_eq!(steps_status["status"], "passed", "{steps_status}");
    assert_eq!(steps_status["session"], "FollowerSession");
    assert_eq!(steps_status["rounds"], 3, "{steps_status}");
    assert_eq!(steps_status["round_steps"], json!([1, 1, 2]));
    let requests = mock.received_for("steps");
    let round0 = requests[0].body["messages"][1]["content"].to_string();
    assert!(
        round0.contains("output the FINISH status immediately"),
        "{round0}"
    );
    let round2 = requests[2].body["messages"][1]["content"].to_string();
    assert!(
        round2.contains("<Current subtask (step 2 of 2)> 2. save"),
        "{round2}"
    );
    assert!(round2.contains("1. 1. type 77 into A1"), "{round2}");

    // Calc names its sheet view after the document's URL: the workspace in it is written
    // as {workspace}, so the recordings replay in another run's folder.
    let run = out.run_dir("proj");
    let plan = std::fs::read_to_string(run.join("two/plan.json")).unwrap();
    assert!(plan.contains("file://{workspace}/budget.xlsx"), "{plan}");
    assert!(!plan.contains(run.to_str().unwrap()), "{plan}");
    let elsewhere = tempfile::tempdir().unwrap();
    let replay = run_binary(
        elsewhere.path(),
        &[
            "run",
            run.to_str().unwrap(),
            "--out",
            "replays",
            "--jobs",
            "2",
            "--progress",
            "lines",
        ],
        &[],
    );
    assert_eq!(replay.code, 0, "{}\n{}", replay.stdout, replay.stderr);
}

#[test]
#[cfg_attr(skip_desktop, ignore = "UFO_BATCH_SKIP_TESTS: needs desktop")]
fn confirm_is_denied_a_bad_reply_is_asked_again_and_the_judge_sees_the_screen() {
    desktop_stack();
    let mock = MockLlm::start();
    mock.script(
        "confirm",
        vec![
            select("confirm-note", "ASSIGN", "Delete everything"),
            on(
                "",
                "Edit",
                "keyboard_input",
                json!({"keys": "^a{DELETE}^s"}),
                "CONFIRM",
            ),
        ],
    );
    // An AppAgent that gives up fails the task, saying why; one that takes no action
    // ends its subtask (UFO's reading).
    mock.script(
        "gives_up",
        vec![
            select("gives-up-note", "ASSIGN", "Find the chart"),
            Reply::Content(
                json!({"observation": "a note", "thought": "no chart here", "action": {"function": "",
                       "arguments": {}, "status": "FAIL"}, "plan": [], "comment": "the note has no chart"})
                .to_string(),
            ),
        ],
    );
    mock.script(
        "idle",
        vec![
            select("idle-note", "ASSIGN", "Look at the note"),
            Reply::Content(app("", json!({}), "CONTINUE")),
            host_finish(),
        ],
    )
    .judge("idle", vec![verdict("yes", "looked")]);
    mock.script(
        "reask",
        vec![
            Reply::Content(host("PENDING", "", json!({}))),
            select("reask-note", "ASSIGN", "Write hello"),
            Reply::Content("I will type now.".into()),
            on(
                "",
                "Edit",
                "set_edit_text",
                json!({"text": "hello\n"}),
                "CONTINUE",
            ),
            on(
                "",
                "Edit",
                "keyboard_input",
                json!({"keys": "^s"}),
                "FINISH",
            ),
            host_finish(),
        ],
    )
    .judge("reask", vec![verdict("yes", "the note says hello")]);
    // A dataflow file (UFO's dataflow/): one round per refined step after the
    // HostAgent's round 0.
    mock.script(
        "flow",
        vec![
            select("Mousepad", "FINISH", ""),
            on(
                "",
                "Edit",
                "set_edit_text",
                json!({"text": "a\n"}),
                "FINISH",
            ),
            on(
                "",
                "Edit",
                "keyboard_input",
                json!({"keys": "{END}b"}),
                "FINISH",
            ),
        ],
    )
    .judge("flow", vec![verdict("yes", "two lines")]);
    let p = llm_project();
    for name in ["confirm-note", "reask-note", "gives-up-note", "idle-note"] {
        p.file(&format!("files/{name}.txt"), "first line\n");
        let marker = marker(&name.trim_end_matches("-note").replace('-', "_"));
        p.task(
            &format!("{}.json", name.trim_end_matches("-note").replace('-', "_")),
            json!({"task": format!("Work on the note {marker}"), "object": format!("{name}.txt"), "app": "notepad"}),
        );
    }
    p.task(
        "prefill/1.json",
        json!({"app": "notepad", "unique_id": "1", "task": format!("two lines {}", marker("flow")),
               "refined_steps": ["write a", "add b"]}),
    );
    let out = run_with(&p, &mock, &["--jobs", "3"]);
    assert_eq!(
        out.code,
        1,
        "{}",
        logs(&out, &["confirm", "reask", "gives_up", "idle", "prefill/1"])
    );

    let flow = out.status("prefill/1");
    assert_eq!(flow["status"], "passed", "{flow}");
    assert_eq!(
        (
            flow["shape"].as_str(),
            flow["session"].as_str(),
            flow["rounds"].as_u64()
        ),
        (Some("ufo_dataflow"), Some("FollowerSession"), Some(3))
    );

    let confirm = out.status("confirm");
    assert_eq!(confirm["status"], "failed", "{confirm}");
    assert!(
        confirm["error"]
            .as_str()
            .unwrap()
            .contains("unattended runs deny it"),
        "{confirm}"
    );
    let note = std::fs::read_to_string(
        out.run_dir("proj")
            .join("confirm/workspace/confirm-note.txt"),
    )
    .unwrap();
    assert_eq!(note, "first line\n", "the denied action must not run");
    let last = steps(&out, "confirm").pop().unwrap();
    assert_eq!(last["agent_type"], "AppAgent");
    assert_eq!(last["action"], json!([]), "{last}");
    assert!(
        !out.task_file("confirm", "task.log")
            .contains("step 2: keyboard_input(")
    );

    let gave_up = out.status("gives_up");
    assert_eq!(gave_up["status"], "failed", "{gave_up}");
    assert_eq!(
        gave_up["error"],
        "the AppAgent said FAIL: the note has no chart"
    );
    let idle = out.status("idle");
    assert_eq!(idle["status"], "passed", "{idle}");
    assert_eq!(idle["steps"], 3, "{idle}");

    let reask = out.status("reask");
    assert_eq!(reask["status"], "passed", "{reask}");
    assert_eq!(reask["llm"]["bad_replies"], 1, "{reask}");
    assert!(
        out.task_file("reask", "task.log")
            .contains("could not be used")
    );
    let requests = mock.received_for("reask");
    // PENDING is answered: nobody is there.
    assert!(
        requests[1].body["messages"]
            .to_string()
            .contains("no human is available")
    );
    // The judge saw the request, the steps and the screenshots, the final one last.
    let judge: Vec<_> = requests.iter().filter(|r| r.judge).collect();
    assert_eq!(judge.len(), 1);
    // Five steps, each one's screen, then the final one.
    assert_eq!(images(&judge[0].body), 6, "{}", judge[0].body["messages"]);
    let parts = judge[0].body["messages"][1]["content"].as_array().unwrap();
    let labels: Vec<&str> = parts.iter().filter_map(|p| p["text"].as_str()).collect();
    assert_eq!(labels[1], "<Screenshot of step 1>", "{labels:?}");
    assert_eq!(labels[labels.len() - 2], "<Final Screenshot>", "{labels:?}");
    assert_eq!(parts[parts.len() - 2]["type"], "image_url");
    let text = judge[0].body["messages"].to_string();
    assert!(text.contains("AppAgent/"), "{text}");
    let evaluation = read_json(&out.run_dir("proj").join("reask/evaluation.log"));
    assert_eq!(evaluation["complete"], "yes");
    assert_eq!(evaluation["evaluator"], "llm");
}

#[test]
#[cfg_attr(skip_desktop, ignore = "UFO_BATCH_SKIP_TESTS: needs desktop")]
fn without_vision_the_model_gets_the_control_list_as_text_only() {
    desktop_stack();
    let mock = MockLlm::start();
    mock.script(
        "blind",
        vec![
            select("blind-note", "ASSIGN", "Read the note"),
            on("", "Edit", "texts", json!({}), "CONTINUE"),
            Reply::Content(app("", json!({}), "FINISH")),
            host_finish(),
        ],
    )
    .judge("blind", vec![verdict("yes", "read")]);
    let p = llm_project();
    p.file(
        "ufo-batch.toml",
        "[llm]\nmodel = \"test-model\"\ntimeout = \"2s\"\nvision = false\n",
    );
    p.file("files/blind-note.txt", "first line\n");
    p.task(
        "blind.json",
        json!({"task": format!("Read the note {}", marker("blind")), "object": "blind-note.txt", "app": "notepad"}),
    );
    let out = run_with(&p, &mock, &[]);
    out.expect_code(0);
    let requests = mock.received_for("blind");
    assert_eq!(requests.len(), 5);
    for r in &requests {
        assert_eq!(images(&r.body), 0, "{}", r.body["messages"]);
    }
    // What `texts` read reaches the AppAgent with the next screen; the judge of a
    // desktop task is told so even without screenshots.
    let next = requests[2].body["messages"].to_string();
    assert!(next.contains("text:\\nfirst line"), "{next}");
    assert!(requests[4].judge);
    let judge_system = requests[4].body["messages"][0]["content"].as_str().unwrap();
    assert!(
        judge_system.contains("desktop applications"),
        "{judge_system}"
    );
    assert!(
        listed(&requests[1].body)
            .iter()
            .any(|c| c["control_type"] == "Edit")
    );
    let status = out.status("blind");
    assert!(status["llm"].get("images").is_none(), "{status}");
    // The screenshots are still saved for the trajectory.
    assert!(
        out.run_dir("proj")
            .join("blind/action_step1_annotated.png")
            .exists()
    );

    // A replay that meets another text diverges, saying at which step and how: the
    // object it replays with (kept beside the plan, as it was given) is changed.
    let run = out.run_dir("proj");
    std::fs::write(run.join("blind/files/blind-note.txt"), "another line\n").unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let replay = run_binary(
        elsewhere.path(),
        &[
            "run",
            run.to_str().unwrap(),
            "--out",
            "replays",
            "--progress",
            "lines",
        ],
        &[],
    );
    assert_eq!(replay.code, 1, "{}\n{}", replay.stdout, replay.stderr);
    let replayed = read_json(
        &elsewhere
            .path()
            .join("replays/proj-replay/blind/status.json"),
    );
    let why = replayed["error"].as_str().unwrap_or_default();
    assert!(
        why.contains("step 2") && why.contains("texts") && why.contains("first line"),
        "{replayed}"
    );
}
