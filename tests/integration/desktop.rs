//! Desktop tasks on real apps under a private virtual display: the sample UI plans
//! replay, a control that is not there fails naming the close ones, a read text that
//! differs diverges, and a desktop ends with its task (timeout) and with its runner
//! (`kill -9`). Without the desktop stack they fail naming scripts/setup-desktop.sh
//! (CI installs it), unless skipped on request (`UFO_BATCH_SKIP_TESTS=desktop`).

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::json;

use crate::helpers::{Project, processes_running, read_json, run_binary};

/// Fails the test unless the desktop stack is here (`helpers::require_stack`).
pub(crate) fn desktop_stack() {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/setup-desktop.sh");
    let ok = std::process::Command::new("bash")
        .arg(&script)
        .arg("--check")
        .output()
        .is_ok_and(|o| o.status.success());
    crate::helpers::require_stack("desktop", ok, "bash scripts/setup-desktop.sh")
}

/// Processes whose working folder is `dir` (a desktop starts all of its own there).
fn processes_in(dir: &Path) -> Vec<i32> {
    let Ok(dir) = dir.canonicalize() else {
        return Vec::new();
    };
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| std::fs::read_link(format!("/proc/{pid}/cwd")).is_ok_and(|c| c == dir))
        .collect()
}

fn gone_within(limit: Duration, mut check: impl FnMut() -> bool) -> bool {
    let start = std::time::Instant::now();
    while start.elapsed() < limit {
        if check() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    false
}

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/desktop")
}

#[test]
#[cfg_attr(
    any(skip_desktop, skip_harbor),
    ignore = "UFO_BATCH_SKIP_TESTS: needs desktop, harbor"
)]
fn the_sample_ui_plans_replay_on_real_apps() {
    desktop_stack();
    let out_dir = tempfile::tempdir().unwrap();
    let examples = examples();
    let out = run_binary(
        out_dir.path(),
        &[
            "run",
            examples.to_str().unwrap(),
            "--out",
            "results",
            "--jobs",
            "3",
            "--save-ui-tree",
            "--progress",
            "lines",
        ],
        &[],
    );
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let run = out_dir.path().join("results/desktop/tasks");
    for task in [
        "text_editor_note",
        "writer_report",
        "calc_budget",
        "report_api",
    ] {
        let dir = run.join(task);
        let status = read_json(&dir.join("status.json"));
        assert_eq!(status["status"], "passed", "{task}: {status}");
        for file in [
            "action_step1.png",
            "action_step1_annotated.png",
            "action_step_final.png",
        ] {
            let bytes = std::fs::read(dir.join(file)).unwrap_or_default();
            assert!(bytes.starts_with(b"\x89PNG"), "{task}: {file} is not a PNG");
        }
        let tree = read_json(&dir.join("ui_trees/ui_tree_step1.json"));
        assert!(
            tree[0]["children"]
                .as_array()
                .is_some_and(|c| !c.is_empty()),
            "{task}: {tree}"
        );
        let md = std::fs::read_to_string(dir.join("output.md")).unwrap();
        assert!(
            md.contains(r#"<img src="./action_step1_annotated.png" width="45%""#)
                && md.contains(r#"<img src="./action_step2.png" width="45%""#),
            "{task}: {md}"
        );
        // The recording of the replay says what each action acted on (a control, or
        // what an API tool answered).
        let plan = read_json(&dir.join("plan.json"));
        assert!(
            plan["actions"].as_array().unwrap().iter().any(|a| {
                a["expect"]["control"]["control_type"].is_string()
                    || a["expect"]["text"].is_string()
            }),
            "{task}: {plan}"
        );
        assert!(
            processes_in(&dir.join("workspace")).is_empty(),
            "{task}: processes left"
        );
    }
    // The documents were really saved in their formats.
    let note = std::fs::read_to_string(run.join("text_editor_note/workspace/note.txt")).unwrap();
    assert_eq!(note, "Shopping list\nBuy milk\nCall Ada\n");

    // The run's recordings replay as they are (UFO's `click_element` by label among
    // them, recorded as the click of the control it found).
    let documented = read_json(&run.join("ufo_documented_plan/plan.json"));
    assert_eq!(
        documented["actions"][1]["action"], "click_input",
        "{documented}"
    );
    assert_eq!(documented["actions"][1]["parameters"]["name"], "File");
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
    assert!(
        replay.stderr.contains("5 tasks: 5 passed"),
        "{}\n{}",
        replay.stdout,
        replay.stderr
    );
    // Each task's trajectory is ATIF with its screenshots, as Harbor reads it, and the
    // run opens in Harbor's viewer with them.
    let python = crate::harbor::harbor_python();
    let files = crate::harbor::trajectories(&run);
    let mut args = vec!["trajectory"];
    args.extend(files.iter().map(String::as_str));
    crate::harbor::harbor_check(&python, &args);
    let t = read_json(&run.join("writer_report/trajectory.json"));
    assert_eq!(
        t["steps"][1]["message"][1]["source"]["path"], "action_step1_annotated.png",
        "{t}"
    );
    let (_out, viewer, job) =
        crate::harbor::export_and_view(&python, &out_dir.path().join("results/desktop"));
    let trial = "tasks__writer_report";
    let served = viewer.json(&format!("/api/jobs/{job}/trials/{trial}/trajectory"));
    assert_eq!(served["session_id"], "tasks/writer_report");
    let (code, png) = viewer.get(&format!(
        "/api/jobs/{job}/trials/{trial}/files/agent/action_step1_annotated.png"
    ));
    assert_eq!(code, 200);
    assert!(png.starts_with(b"\x89PNG"), "a screenshot is served");
}

fn editor_task(p: &Project, name: &str, file: &str, actions: serde_json::Value, timeout: u32) {
    p.file(&format!("tasks/{file}"), "first line\n");
    p.task(
        &format!("{name}.json"),
        json!({"request": "edit the note", "object": file, "timeout": timeout, "actions": actions}),
    );
}

#[test]
#[cfg_attr(skip_desktop, ignore = "UFO_BATCH_SKIP_TESTS: needs desktop")]
fn a_control_that_is_not_there_fails_naming_the_close_ones() {
    desktop_stack();
    let p = Project::new();
    editor_task(
        &p,
        "missing",
        "missing.txt",
        json!([{"action": "click_input", "parameters": {"name": "Fil", "control_type": "MenuItem"}}]),
        60,
    );
    editor_task(
        &p,
        "differs",
        "differs.txt",
        json!([{"action": "texts", "parameters": {"control_type": "Edit"}, "expect": {"text": "second line"}}]),
        60,
    );
    let out = p.run(&["--jobs", "2"]);
    let missing = out.status("missing");
    assert_eq!(missing["status"], "failed", "{missing}");
    let error = missing["error"].as_str().unwrap();
    assert!(
        error.contains(r#"no control is MenuItem "Fil"; closest: [1] MenuItem "File""#),
        "{error}"
    );
    let differs = out.status("differs");
    assert_eq!(differs["status"], "failed", "{differs}");
    let error = differs["error"].as_str().unwrap();
    assert!(
        error.contains(r#"the text read line 1 is "first line", expected "second line""#),
        "{error}"
    );
}

#[test]
#[cfg_attr(skip_desktop, ignore = "UFO_BATCH_SKIP_TESTS: needs desktop")]
fn a_desktop_ends_with_its_task_and_with_its_runner() {
    desktop_stack();
    // A task that outlives its time limit: its desktop and app end with it.
    let p = Project::new();
    editor_task(
        &p,
        "slow",
        "slow-desktop-1.txt",
        json!([{"action": "wait", "parameters": {"seconds": 120}}]),
        4,
    );
    let out = p.cmd_within(
        &["run", "tasks", "--progress", "lines"],
        Duration::from_secs(60),
    );
    assert_eq!(out.status_of("slow"), "timeout", "{}", out.stderr);
    let ws = out.run_dir("proj").join("slow/workspace");
    assert!(
        processes_in(&ws).is_empty(),
        "the timed-out task's desktop is still running"
    );
    assert!(
        out.run_dir("proj")
            .join("slow/action_step_final.png")
            .exists()
    );

    // The runner killed with SIGKILL mid-task: the jail's init loses its socket and ends
    // the desktop, app and all.
    let p = Project::new();
    editor_task(
        &p,
        "held",
        "killed-desktop-2.txt",
        json!([{"action": "wait", "parameters": {"seconds": 120}}]),
        300,
    );
    let runner = p.start(&["run", "tasks", "--progress", "lines"]);
    let app = "/usr/bin/mousepad killed-desktop-2.txt";
    assert!(
        gone_within(Duration::from_secs(60), || !processes_running(app)
            .is_empty()),
        "the app never started"
    );
    let ws = p.path().join("results/proj/held/workspace");
    assert!(!processes_in(&ws).is_empty());
    runner.signal(libc::SIGKILL);
    assert!(
        gone_within(Duration::from_secs(10), || processes_in(&ws).is_empty()),
        "the desktop outlived its runner: {:?}",
        processes_in(&ws)
    );
}

#[test]
#[cfg_attr(skip_desktop, ignore = "UFO_BATCH_SKIP_TESTS: needs desktop")]
fn ufos_documented_plan_shape_runs_and_names_what_it_cannot_open() {
    desktop_stack();
    // UFO's documentation shows this plan (Outlook, a "New Email" label): it loads, and
    // it fails saying there is no Outlook here rather than pretending.
    let p = Project::new();
    p.task(
        "documented.json",
        json!({"request": "Send an email to John", "actions": [
            {"agent": "HostAgent", "action": "select_application", "parameters": {"app_name": "Outlook"}},
            {"agent": "AppAgent", "action": "click_element", "parameters": {"label": "New Email"}}
        ]}),
    );
    p.cmd(&["validate", "tasks"]).expect_code(0);
    let out = p.run(&[]);
    let status = out.status("documented");
    assert_eq!(status["status"], "failed", "{status}");
    let error = status["error"].as_str().unwrap();
    assert!(error.contains("unknown app `Outlook`"), "{error}");
}

#[test]
#[cfg_attr(skip_desktop, ignore = "UFO_BATCH_SKIP_TESTS: needs desktop")]
fn three_libreoffice_sessions_run_at_once_without_meeting() {
    desktop_stack();
    let p = Project::new();
    let report = examples().join("files/report.docx");
    std::fs::create_dir_all(p.path().join("files")).unwrap();
    std::fs::copy(&report, p.path().join("files/report.docx")).unwrap();
    for i in 1..=3 {
        let line = format!("Session {i} wrote this.");
        p.task(
            &format!("w{i}.json"),
            json!({"request": "write a line", "object": "report.docx", "timeout": 240, "actions": [
                {"action": "keyboard_input", "parameters": {"control_type": "Document", "keys": line}},
                {"action": "texts", "parameters": {"control_type": "Document"}, "expect": {"text": line}}
            ]}),
        );
    }
    let out = p.cmd_within(
        &["run", "tasks", "--jobs", "3", "--progress", "lines"],
        Duration::from_secs(300),
    );
    let spans: Vec<(String, String)> = (1..=3)
        .map(|i| {
            let s = out.status(&format!("w{i}"));
            assert_eq!(s["status"], "passed", "w{i}: {s}\n{}", out.stderr);
            (
                s["started"].as_str().unwrap().to_string(),
                s["finished"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    // All three ran at the same time (timestamps in one format sort as text).
    let latest_start = spans.iter().map(|s| &s.0).max().unwrap();
    let earliest_end = spans.iter().map(|s| &s.1).min().unwrap();
    assert!(latest_start < earliest_end, "{spans:?}");
}

#[test]
#[cfg_attr(skip_desktop, ignore = "UFO_BATCH_SKIP_TESTS: needs desktop")]
fn a_desktop_app_cannot_reach_the_machine() {
    desktop_stack();
    // A desktop's jail allows Unix sockets (the display and the buses need them), so
    // the machine's socket folders must be out of its sight: a listener the test opens
    // in /var/tmp is not there for an app, nor is /run, and the rest is read-only.
    let socket = PathBuf::from(format!(
        "/var/tmp/ufo-batch-desktop-test-{}.sock",
        std::process::id()
    ));
    let _ = std::fs::remove_file(&socket);
    let listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    listener.set_nonblocking(true).unwrap();
    let probe = format!(
        "ls -A /run > run.txt 2>&1; ls -A /var/tmp > vartmp.txt 2>&1; ls -A ../.. > run_folder.txt 2>&1; \
         (echo x > /etc/ufo-batch-owned) 2> etc.txt; \
         python3 -c \"import socket; s = socket.socket(socket.AF_UNIX); s.connect('{}')\" 2> connect.txt; \
         exec mousepad note.txt",
        socket.display()
    );
    let p = Project::new();
    p.task(
        "hostile.json",
        json!({"request": "probe", "app": {"command": ["sh", "-c", probe]},
               "files": {"note.txt": "x\n"}, "timeout": 120,
               "actions": [{"action": "texts", "parameters": {"control_type": "Edit"}}]}),
    );
    let out = p.run(&[]);
    let status = out.status("hostile");
    let _ = std::fs::remove_file(&socket);
    assert_eq!(status["status"], "passed", "{status}");
    let ws = out.run_dir("proj").join("hostile/workspace");
    let read = |f: &str| std::fs::read_to_string(ws.join(f)).unwrap_or_default();
    assert_eq!(read("run.txt"), "", "/run is visible");
    assert_eq!(read("vartmp.txt"), "", "/var/tmp is visible");
    // The run's folder shows only this task's own folder (other tasks are hidden).
    assert_eq!(
        read("run_folder.txt").trim(),
        "hostile",
        "{}",
        read("run_folder.txt")
    );
    assert!(
        read("etc.txt").contains("Read-only file system"),
        "{}",
        read("etc.txt")
    );
    assert!(
        read("connect.txt").contains("No such file or directory"),
        "{}",
        read("connect.txt")
    );
    assert!(
        listener.accept().is_err(),
        "the app connected to the machine's socket"
    );
    assert!(!Path::new("/etc/ufo-batch-owned").exists());
}

#[test]
#[cfg_attr(skip_desktop, ignore = "UFO_BATCH_SKIP_TESTS: needs desktop")]
fn every_app_tool_runs_on_a_real_app() {
    desktop_stack();
    let p = Project::new();
    editor_task(
        &p,
        "tools",
        "tools.txt",
        json!([
            {"action": "select_application_window", "parameters": {"name": "Mousepad"}},
            {"action": "get_app_window_info", "parameters": {"field_list": ["control_text", "control_rect"]}},
            {"action": "get_ui_tree", "parameters": {}},
            {"action": "capture_window_screenshot", "parameters": {}},
            {"action": "capture_desktop_screenshot", "parameters": {"all_screens": true}},
            {"action": "wheel_mouse_input", "parameters": {"control_type": "Edit", "wheel_dist": -3}},
            {"action": "click_on_coordinates", "parameters": {"x": 0.5, "y": 0.5}},
            {"action": "drag_on_coordinates", "parameters": {"start_x": 0.05, "start_y": 0.13, "end_x": 0.3, "end_y": 0.13, "duration": 0.3}},
            {"action": "keyboard_input", "parameters": {"control_type": "Edit", "keys": "^{END}second line{ENTER}"}},
            {"action": "wait", "parameters": {"seconds": 0.2}},
            {"action": "summary", "parameters": {"text": "The note has two lines."}},
            {"action": "texts", "parameters": {"control_type": "Edit"}, "expect": {"text": "first line\nsecond line"}}
        ]),
        120,
    );
    let out = p.run(&[]);
    let status = out.status("tools");
    assert_eq!(status["status"], "passed", "{status}");
    let dir = out.run_dir("proj").join("tools");
    let steps: Vec<serde_json::Value> = std::fs::read_to_string(dir.join("response.log"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let result = |i: usize| steps[i]["action"][0]["result"]["result"].clone();
    assert!(
        result(1)["control_text"]
            .as_str()
            .unwrap()
            .contains("Mousepad"),
        "{}",
        result(1)
    );
    assert!(
        result(2)[0]["children"]
            .as_array()
            .is_some_and(|c| !c.is_empty())
    );
    for (i, file) in [
        (3, "action_step_capture1.png"),
        (4, "action_step_capture2.png"),
    ] {
        assert_eq!(result(i)["screenshot"], file);
        assert!(
            std::fs::read(dir.join(file))
                .unwrap()
                .starts_with(b"\x89PNG")
        );
    }
    assert_eq!(result(10)["text"], "The note has two lines.");
    assert_eq!(steps.len(), 12);
}

#[test]
#[cfg_attr(skip_desktop, ignore = "UFO_BATCH_SKIP_TESTS: needs desktop")]
fn desktop_tasks_retry_and_resume_like_shell_tasks() {
    desktop_stack();
    // An app that does not start is an infrastructure error: retried. A task that
    // passed is kept by the next run.
    let p = Project::new();
    p.task(
        "broken.json",
        json!({"request": "edit", "files": {"note.txt": "x\n"}, "timeout": 120,
               "app": {"command": ["sh", "-c", "exit 3"]},
               "actions": [{"action": "texts", "parameters": {"control_type": "Edit"}}]}),
    );
    editor_task(
        &p,
        "fine",
        "fine.txt",
        json!([{"action": "texts", "parameters": {"control_type": "Edit"}, "expect": {"text": "first line"}}]),
        120,
    );
    let out = p.run(&["--retries", "1"]);
    let broken = out.status("broken");
    assert_eq!(broken["status"], "error", "{broken}");
    let attempts = broken["attempts"].as_array().unwrap();
    assert_eq!(attempts.len(), 2, "{broken}");
    assert!(
        attempts[0]["error"]
            .as_str()
            .unwrap()
            .contains("exited with code 3"),
        "{broken}"
    );
    assert_eq!(out.status("fine")["status"], "passed");
    let again = p.run(&[]);
    let said = format!("{}{}", again.stdout, again.stderr);
    assert!(
        said.contains("1 already passed and is kept (--fresh to run it again)"),
        "{said}"
    );
    assert_eq!(
        again.status("fine")["attempts"].as_array().unwrap().len(),
        1
    );
}

#[test]
#[cfg_attr(skip_desktop, ignore = "UFO_BATCH_SKIP_TESTS: needs desktop")]
fn select_application_moves_the_actions_to_the_app_it_opens() {
    desktop_stack();
    // Writer and Calc show their windows in one LibreOffice instance; the actions go to
    // the window the selection opened.
    let p = Project::new();
    p.task(
        "switch.json",
        json!({"request": "two apps", "timeout": 180, "actions": [
            {"agent": "HostAgent", "action": "select_application", "parameters": {"app_name": "word"}},
            {"action": "get_app_window_info", "parameters": {"field_list": ["control_text", "control_rect"]}},
            {"agent": "HostAgent", "action": "select_application", "parameters": {"app_name": "excel"}},
            {"action": "get_app_window_info", "parameters": {"field_list": ["control_text", "control_rect"]}}
        ]}),
    );
    let out = p.run(&[]);
    assert_eq!(out.status_of("switch"), "passed", "{}", out.stderr);
    let log = std::fs::read_to_string(out.run_dir("proj").join("switch/response.log")).unwrap();
    let names: Vec<String> = log
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|r| r["action"][0]["function"] == "get_app_window_info")
        .map(|r| {
            r["action"][0]["result"]["result"]["control_text"]
                .as_str()
                .unwrap_or("")
                .to_string()
        })
        .collect();
    assert!(names[0].ends_with("LibreOffice Writer"), "{names:?}");
    assert!(names[1].ends_with("LibreOffice Calc"), "{names:?}");
}
