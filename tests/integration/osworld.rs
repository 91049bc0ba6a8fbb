//! OSWorld without VMs: OSWorld-format tasks (tests/osworld, in OSWorld's own layout with
//! its cache folder) set up by OSWorld's own setup controller against OSWorld's own
//! server on each task's private desktop, and scored by OSWorld's own metrics, with
//! recorded plans that solve each (score 1) and that do not (score 0), several at once;
//! the plan a run records replays the same; OSWorld's 369 tasks run here as far as
//! this machine allows, the rest unsupported with their reasons; bad task files end in
//! clear errors, nothing written outside the task's desktop. Without the stack
//! (scripts/setup-osworld.sh, the desktop's) they fail naming it, unless skipped on
//! request (`UFO_BATCH_SKIP_TESTS=osworld`).

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::helpers::{read_json, run_binary};

/// Fails the test unless OSWorld's stack is here (its venv, server and task files, and
/// the desktop).
fn osworld_stack() {
    crate::desktop::desktop_stack();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let ok = std::process::Command::new("bash")
        .arg(root.join("scripts/setup-osworld.sh"))
        .arg("--check")
        .output()
        .is_ok_and(|o| o.status.success());
    crate::helpers::require_stack("osworld", ok, "bash scripts/setup-osworld.sh")
}

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/osworld")
}

fn cache() -> String {
    fixtures().join("cache").display().to_string()
}

/// The OSWorld task `domain/id` of the fixtures (`bad` ones with `bad`).
fn osworld_task(bad: bool, domain: &str, id: &str) -> Value {
    let base = if bad {
        fixtures().join("bad")
    } else {
        fixtures()
    };
    read_json(&base.join(format!("evaluation_examples/examples/{domain}/{id}.json")))
}

/// The one run folder under `out`.
fn run_folder(out: &Path) -> PathBuf {
    std::fs::read_dir(out)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.join("summary.json").exists())
        .expect("a run folder")
}

fn key(keys: &[&str]) -> Value {
    json!({"action": "keypress", "parameters": {"keys": keys}})
}

fn keys(k: &str, repeat: u32) -> Value {
    json!({"action": "keypress", "parameters": {"keys": [k], "repeat": repeat}})
}

/// Waits for the window titled `title` and brings it to the front, as an agent would
/// look before it types: the plan does not rest on how fast a loaded machine opens it.
fn ready(title: &str) -> Value {
    json!({"action": "execute_command", "parameters": {"command": format!(
        "xdotool search --sync --onlyvisible --name '{title}' windowactivate --sync && sleep 1"
    )}})
}

fn wait(seconds: f64) -> Value {
    json!({"action": "wait", "parameters": {"seconds": seconds}})
}

fn typing(text: &str) -> Value {
    json!({"action": "type", "parameters": {"text": text}})
}

/// A recorded plan of the OSWorld task `task`: its actions, and its last word.
fn plan(task: &Value, actions: Vec<Value>, says_fail: bool) -> Value {
    let mut plan = json!({
        "request": task["instruction"],
        "osworld": task,
        "actions": actions,
    });
    if says_fail {
        plan["last_action"] = json!("FAIL");
    }
    plan
}

const CALC: &str = "6a53248d-6cd1-5cb7-9ba6-caf325476143";
const WRITER: &str = "8555a342-3466-5db8-a6fd-cfcc80d888fb";
const IMPRESS: &str = "80fbfa2f-eb22-5c12-b849-b630be3745b9";
const OS: &str = "cf15a036-b51e-517d-bbb4-612e7affe1ff";
const INFEASIBLE: &str = "59976359-8337-532e-9edf-fdb718a40fa4";

/// Each fixture task with a plan that solves it and one that does not (named
/// `<name>_solved` and `<name>_unsolved`).
fn plans() -> Vec<(String, Value)> {
    let calc = osworld_task(false, "libreoffice_calc", CALC);
    let writer = osworld_task(false, "libreoffice_writer", WRITER);
    let impress = osworld_task(false, "libreoffice_impress", IMPRESS);
    let os = osworld_task(false, "os", OS);
    let infeasible = osworld_task(false, "os", INFEASIBLE);
    let solved = [
        (
            "calc",
            plan(
                &calc,
                vec![
                    ready("Quarterly_Totals.xlsx - LibreOffice Calc"),
                    key(&["ctrl", "Home"]),
                    keys("Down", 5),
                    key(&["Right"]),
                    typing("=SUM(B2:B5)"),
                    key(&["Return"]),
                    wait(0.5),
                ],
                false,
            ),
        ),
        (
            "writer",
            plan(
                &writer,
                vec![
                    ready("Meeting_Notes.docx - LibreOffice Writer"),
                    key(&["ctrl", "End"]),
                    key(&["Return"]),
                    typing("Next meeting on Friday."),
                    wait(0.5),
                ],
                false,
            ),
        ),
        (
            "impress",
            plan(
                &impress,
                vec![
                    ready("Review.pptx - LibreOffice Impress"),
                    key(&["Tab"]),
                    key(&["Return"]),
                    key(&["ctrl", "a"]),
                    typing("Quarterly results"),
                    key(&["Escape"]),
                    key(&["Escape"]),
                    wait(0.5),
                ],
                false,
            ),
        ),
        (
            "os",
            plan(
                &os,
                vec![json!({"action": "execute_command", "parameters": {
                    "command": "mkdir -p ~/reports && echo done > /home/user/reports/summary.txt"}})],
                false,
            ),
        ),
        ("infeasible", plan(&infeasible, vec![], true)),
    ];
    let unsolved = [
        ("calc", plan(&calc, vec![wait(1.0)], false)),
        (
            "writer",
            plan(&writer, vec![wait(1.0), typing("Nothing to see.")], false),
        ),
        ("impress", plan(&impress, vec![wait(1.0)], false)),
        (
            "os",
            plan(
                &os,
                vec![json!({"action": "execute_command", "parameters": {
                    "command": "mkdir -p ~/Reports && echo done > ~/Reports/summary.txt"}})],
                false,
            ),
        ),
        (
            "infeasible",
            plan(
                &infeasible,
                vec![json!({"action": "execute_command", "parameters": {"command": "true"}})],
                false,
            ),
        ),
    ];
    solved
        .into_iter()
        .map(|(n, p)| (format!("{n}_solved"), p))
        .chain(
            unsolved
                .into_iter()
                .map(|(n, p)| (format!("{n}_unsolved"), p)),
        )
        .collect()
}

#[test]
#[cfg_attr(
    any(skip_desktop, skip_osworld),
    ignore = "UFO_BATCH_SKIP_TESTS: needs desktop, osworld"
)]
fn osworlds_own_evaluator_scores_each_task_solved_and_not_several_at_once() {
    osworld_stack();
    let dir = tempfile::tempdir().unwrap();
    let plans = plans();
    for (name, plan) in &plans {
        std::fs::write(
            dir.path().join(format!("{name}.json")),
            serde_json::to_string_pretty(plan).unwrap(),
        )
        .unwrap();
    }
    let out = run_binary(
        dir.path(),
        &[
            "run",
            ".",
            "--out",
            "runs",
            "--osworld-cache",
            &cache(),
            "-j",
            "4",
        ],
        &[],
    );
    let stderr = &out.stderr;
    // Some do not pass: exit code 1, every task with its verdict.
    assert_eq!(Some(out.code), Some(1), "{stderr}");
    let run = run_folder(&dir.path().join("runs"));
    for (name, _) in &plans {
        let status = read_json(&run.join(name).join("status.json"));
        let solved = name.ends_with("_solved");
        let (want, score) = if solved {
            ("passed", 1.0)
        } else {
            ("failed", 0.0)
        };
        assert_eq!(status["status"], want, "{name}: {status:#}\n{stderr}");
        assert_eq!(status["score"], json!(score), "{name}: {status:#}");
        let log = std::fs::read_to_string(run.join(name).join("task.log")).unwrap();
        assert!(log.contains("OSWorld's desktop ready in"), "{name}: {log}");
        assert!(log.contains("evaluation (OsWorld)"), "{name}: {log}");
    }
    let status = |name: &str| read_json(&run.join(name).join("status.json"));
    assert!(
        status("calc_unsolved")["error"]
            .as_str()
            .unwrap()
            .starts_with("OSWorld's evaluator (compare_table) scored 0"),
        "{:#}",
        status("calc_unsolved")
    );
    assert_eq!(status("os_solved")["domain"], "os");
    assert_eq!(status("calc_solved")["domain"], "libreoffice_calc");
    assert!(
        status("infeasible_unsolved")["error"]
            .as_str()
            .unwrap()
            .contains("the agent said it finished an infeasible task")
    );
    // The OS task went to the LinuxAgent's shell, on the same desktop's files.
    let home = run.join("os_solved/workspace/reports/summary.txt");
    assert_eq!(std::fs::read_to_string(home).unwrap(), "done\n");
    let report = std::fs::read_to_string(run.join("report.md")).unwrap();
    assert!(report.contains("## By domain"), "{report}");
    assert!(
        report.contains("| libreoffice_calc | 2 | 2 | 1 | 1 | 0 | 0 | 0.500 |"),
        "{report}"
    );
    assert!(
        report.contains("| os | 4 | 4 | 2 | 2 | 0 | 0 | 0.500 |"),
        "{report}"
    );
    let summary = read_json(&run.join("summary.json"));
    assert_eq!(summary["totals"]["passed"], 5, "{summary:#}");
    let os = summary["domains"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["domain"] == "os")
        .cloned()
        .unwrap();
    assert_eq!(
        (os["tasks"].as_u64(), os["passed"].as_u64()),
        (Some(4), Some(2)),
        "{os:#}"
    );
    assert_eq!(summary["totals"]["failed"], 5, "{summary:#}");
    let csv = std::fs::read_to_string(run.join("summary.csv")).unwrap();
    assert!(csv.lines().next().unwrap().ends_with(",score"), "{csv}");

    // `compare` sets the mean scores side by side.
    let runs = run.display().to_string();
    let cmp = run_binary(dir.path(), &["compare", &runs, &runs], &[]);
    assert_eq!(cmp.code, 0, "{}{}", cmp.stdout, cmp.stderr);
    assert!(
        cmp.stdout
            .contains("| mean score | 0.500 | 0.500 | +0.000 |"),
        "{}",
        cmp.stdout
    );

    // The plan the solved Calc run recorded replays as a regression test: set up and
    // scored the same.
    let recorded = run.join("calc_solved/plan.json");
    let replay = tempfile::tempdir().unwrap();
    std::fs::copy(&recorded, replay.path().join("calc_again.json")).unwrap();
    let out = run_binary(
        replay.path(),
        &[
            "run",
            "calc_again.json",
            "--out",
            "runs",
            "--osworld-cache",
            &cache(),
        ],
        &[],
    );
    let stderr = &out.stderr;
    assert_eq!(Some(out.code), Some(0), "{stderr}");
    let again = read_json(&run_folder(&replay.path().join("runs")).join("calc_solved/status.json"));
    assert_eq!(again["score"], json!(1.0), "{again:#}");
}

#[test]
#[cfg_attr(
    any(skip_desktop, skip_osworld),
    ignore = "UFO_BATCH_SKIP_TESTS: needs desktop, osworld"
)]
fn osworlds_own_suite_runs_as_far_as_this_machine_allows_the_rest_unsupported() {
    osworld_stack();
    let suite = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("target/osworld/OSWorld/evaluation_examples/test_all.json");
    let dir = tempfile::tempdir().unwrap();
    let out = run_binary(
        dir.path(),
        &[
            "run",
            "--suite",
            &suite.display().to_string(),
            "--out",
            "runs",
            "-j",
            "4",
        ],
        &[],
    );
    let stderr = &out.stderr;
    let run = dir.path().join("runs/test_all");
    let summary = read_json(&run.join("summary.json"));
    let totals = &summary["totals"];
    assert_eq!(totals["total"], 369, "{totals:#}\n{stderr}");
    // Nothing is failed against an agent: a task this machine cannot run is unsupported
    // with its reason; one it can run has no agent here (no model given).
    assert_eq!(totals["failed"], 0, "{totals:#}");
    assert_eq!(totals["passed"], 0, "{totals:#}");
    let unsupported = totals["unsupported"].as_u64().unwrap();
    assert!(unsupported >= 300, "{totals:#}");
    assert_eq!(
        totals["error"].as_u64().unwrap() + unsupported,
        369,
        "{totals:#}"
    );
    let mut reasons = std::collections::BTreeMap::<String, usize>::new();
    for row in summary["tasks"].as_array().unwrap() {
        let why = row["error"].as_str().unwrap_or_default().to_string();
        match row["status"].as_str().unwrap() {
            "unsupported" => {
                assert!(
                    why.starts_with("it needs")
                        || why.starts_with("OSWorld's metric")
                        || why.starts_with("no cached file"),
                    "{row:#}"
                );
                let kind: String = why.split(['(', ':']).next().unwrap().to_string();
                *reasons.entry(kind).or_default() += 1;
            }
            "error" => assert!(why.contains("needs an LLM agent"), "{row:#}"),
            other => panic!("{other}: {row:#}"),
        }
    }
    // Most for the downloads no cache holds.
    let downloads = reasons
        .iter()
        .filter(|(k, _)| k.starts_with("it needs files of OSWorld's cache"))
        .map(|(_, n)| n)
        .sum::<usize>();
    assert!(downloads >= 100, "{reasons:#?}");
    let report = std::fs::read_to_string(run.join("report.md")).unwrap();
    assert!(
        report.contains("| chrome | 46 | 0 | 0 | 0 | 0 | 46 | — |"),
        "{report}"
    );
    // Unsupported is not a failure of the run.
    assert_eq!(
        Some(out.code),
        Some(1),
        "the errors (no model) fail the run: {stderr}"
    );
}

#[test]
#[cfg_attr(
    any(skip_desktop, skip_osworld),
    ignore = "UFO_BATCH_SKIP_TESTS: needs desktop, osworld"
)]
fn bad_osworld_tasks_end_in_clear_errors_and_touch_nothing_outside_their_desktop() {
    osworld_stack();
    let dir = tempfile::tempdir().unwrap();
    // Those that run get a plan each; the rest are refused before anything of them runs.
    let runs = [
        (
            "missing_result",
            "libreoffice_calc",
            "3e31fd34-6e67-5ae1-ac2e-62f7c36ad62d",
        ),
        (
            "failing_setup",
            "libreoffice_calc",
            "ae92c651-5fd6-53d1-aae8-745f6e5a8f5f",
        ),
        (
            "needs_skimage",
            "gimp",
            "4ab29abc-e9bf-5906-954c-3c4c4ee4a889",
        ),
        ("unknown_step", "os", "10405e79-1dc3-599c-8919-5b20431fb309"),
        (
            "unknown_metric",
            "os",
            "b76dd096-80fa-5361-9fa0-b922eb524841",
        ),
        ("climbs_out", "os", "e41fdaea-9dd7-5a29-a001-980ff3dd4e30"),
        ("outside_home", "os", "68036914-717c-5d6e-8040-592d8392c98a"),
    ];
    for (name, domain, id) in runs {
        let task = osworld_task(true, domain, id);
        let plan = plan(&task, vec![wait(0.5)], false);
        std::fs::write(dir.path().join(format!("{name}.json")), plan.to_string()).unwrap();
    }
    let out = run_binary(
        dir.path(),
        &[
            "run",
            ".",
            "--out",
            "runs",
            "--osworld-cache",
            &cache(),
            "-j",
            "4",
        ],
        &[],
    );
    let stderr = &out.stderr;
    let run = run_folder(&dir.path().join("runs"));
    let status = |name: &str| read_json(&run.join(name).join("status.json"));
    let said = |name: &str| {
        status(name)["error"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    };
    assert_eq!(status("missing_result")["status"], "failed", "{stderr}");
    assert!(
        said("missing_result")
            .ends_with("the result was not found: /home/user/Quarterly_Totals_saved.xlsx"),
        "{}",
        said("missing_result")
    );
    assert_eq!(status("failing_setup")["status"], "error");
    assert_eq!(status("failing_setup")["blame"], "task_file");
    assert!(
        said("failing_setup").starts_with("setup step 1 (open) failed"),
        "{}",
        said("failing_setup")
    );
    assert_eq!(status("needs_skimage")["status"], "unsupported");
    assert_eq!(
        said("needs_skimage"),
        "OSWorld's metric compare_images needs skimage, which is not installed here"
    );
    assert_eq!(status("unknown_step")["status"], "error");
    assert!(said("unknown_step").contains("has no setup step type \"tidy_up_desktop\""));
    assert_eq!(status("unknown_metric")["status"], "error");
    assert!(said("unknown_metric").contains("has no metric \"compare_spreadsheets_magically\""));
    for name in ["climbs_out", "outside_home"] {
        assert_eq!(status(name)["status"], "error", "{name}");
        assert!(
            said(name).starts_with("invalid task file"),
            "{name}: {}",
            said(name)
        );
        let log = std::fs::read_to_string(run.join(name).join("task.log")).unwrap();
        assert!(log.contains("the task's desktop"), "{name}: {log}");
    }
    assert!(!Path::new("/etc/ufo-batch-osworld-test.txt").exists());
}

#[test]
fn validate_reads_osworld_task_files_and_their_suites_are_no_tasks() {
    let dir = tempfile::tempdir().unwrap();
    let good = fixtures().join("evaluation_examples");
    let out = run_binary(dir.path(), &["validate", &good.display().to_string()], &[]);
    let text = format!("{}{}", out.stderr, out.stdout);
    assert_eq!(Some(out.code), Some(0), "{text}");
    assert!(text.contains("5 task files checked: 5 valid"), "{text}");
    assert!(!text.contains("test_small.json"), "{text}");
    let bad = fixtures().join("bad/evaluation_examples/examples/os");
    let out = run_binary(dir.path(), &["validate", &bad.display().to_string()], &[]);
    let text = format!("{}{}", out.stderr, out.stdout);
    assert_ne!(Some(out.code), Some(0), "{text}");
    assert!(
        text.contains("\"/etc/ufo-batch-osworld-test.txt\" is outside /home/user and /tmp"),
        "{text}"
    );
    assert!(
        text.contains("\"/home/user/../../etc/ufo-batch-osworld-test.txt\" goes up with `..`"),
        "{text}"
    );
    // A suite given by name stands for its tasks.
    let suite = fixtures().join("evaluation_examples/test_small.json");
    let out = run_binary(dir.path(), &["validate", &suite.display().to_string()], &[]);
    let text = format!("{}{}", out.stderr, out.stdout);
    assert!(text.contains("5 task files checked: 5 valid"), "{text}");
}

#[test]
#[cfg_attr(
    any(skip_desktop, skip_osworld),
    ignore = "UFO_BATCH_SKIP_TESTS: needs desktop, osworld"
)]
fn the_linux_agent_takes_osworlds_os_tasks_on_the_desktops_shell() {
    use crate::mock_llm::{MockLlm, Reply, action, finish};
    osworld_stack();
    let mock = MockLlm::start();
    mock.script_key(
        "a folder named reports",
        vec![
            action(
                "execute_command",
                json!({"command": "mkdir -p ~/reports && echo done > /home/user/reports/summary.txt"}),
                "CONTINUE",
            ),
            finish("the folder and its file are there"),
        ],
    );
    mock.script_key(
        "refresh rate to 1000 Hz",
        vec![Reply::Content(
            json!({"observation": "no display offers 1000 Hz", "thought": "it cannot be done",
                   "action": {"function": "", "arguments": {}, "status": "FAIL"}, "plan": [],
                   "comment": "no display here can refresh at 1000 Hz"})
            .to_string(),
        )],
    );
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("ufo-batch.toml"),
        "[llm]\nmodel = \"test-model\"\ntimeout = \"5s\"\n",
    )
    .unwrap();
    let tasks = fixtures().join("evaluation_examples/examples/os");
    let url = mock.url();
    let out = run_binary(
        dir.path(),
        &[
            "run",
            &tasks.display().to_string(),
            "--out",
            "runs",
            "--llm-base-url",
            &url,
            "--osworld-cache",
            &cache(),
        ],
        &[],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let run = run_folder(&dir.path().join("runs"));
    for id in [OS, INFEASIBLE] {
        let status = read_json(&run.join(id).join("status.json"));
        assert_eq!(status["status"], "passed", "{status:#}");
        assert_eq!(status["score"], json!(1.0), "{status:#}");
        assert_eq!(status["domain"], "os", "{status:#}");
        let log = std::fs::read_to_string(run.join(id).join("response.log")).unwrap();
        assert!(log.contains("\"agent_type\":\"LinuxAgent\""), "{log}");
    }
}
