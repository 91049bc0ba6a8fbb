use serde_json::json;

use super::*;

fn calc() -> serde_json::Value {
    json!({
        "id": "0bf05a7d-b28b-44d2-955a-50b41e24012a",
        "snapshot": "libreoffice_calc",
        "instruction": "Put 'solved' in A1.",
        "source": "test",
        "config": [
            {"type": "download", "parameters": {"files": [
                {"url": "https://example.invalid/probe.xlsx", "path": "/home/user/Probe.xlsx"}
            ]}},
            {"type": "open", "parameters": {"path": "/home/user/Probe.xlsx"}}
        ],
        "related_apps": ["libreoffice_calc"],
        "evaluator": {
            "postconfig": [
                {"type": "activate_window", "parameters": {"window_name": "Probe.xlsx - LibreOffice Calc", "strict": true}},
                {"type": "execute", "parameters": {"command": ["python", "-c", "import pyautogui; pyautogui.hotkey('ctrl', 's')"]}}
            ],
            "func": "compare_table",
            "result": {"type": "vm_file", "path": "/home/user/Probe.xlsx", "dest": "Probe.xlsx"},
            "expected": {"type": "cloud_file", "path": "https://example.invalid/gold.xlsx", "dest": "gold.xlsx"},
            "options": {"rules": [{"type": "sheet_data", "sheet_idx0": 0, "sheet_idx1": "EI0"}]}
        }
    })
}

fn flaws(value: serde_json::Value) -> Vec<Flaw> {
    OsWorldTask::read(&value).expect_err("taken")
}

#[test]
fn a_calc_task_is_read_with_what_it_needs() {
    let task = OsWorldTask::read(&calc()).unwrap();
    assert_eq!(task.id, "0bf05a7d-b28b-44d2-955a-50b41e24012a");
    assert_eq!(task.config.len(), 2);
    assert_eq!(task.evaluator.funcs, ["compare_table"]);
    assert_eq!(task.evaluator.result[0].kind, "vm_file");
    assert_eq!(
        task.evaluator.expected[0].as_ref().unwrap().kind,
        "cloud_file"
    );
    assert!(!task.infeasible() && !task.os_only());
    let names = task.names();
    assert_eq!(
        names.steps.into_iter().collect::<Vec<_>>(),
        ["activate_window", "download", "execute", "open"]
    );
    assert_eq!(
        names.getters.into_iter().collect::<Vec<_>>(),
        ["cloud_file", "vm_file"]
    );
    let needs = task.needs();
    assert_eq!(
        needs.programs,
        [(
            "soffice".to_string(),
            "the app libreoffice_calc".to_string()
        )]
    );
    // Named as OSWorld's SetupController names it (checked with Python's uuid.uuid5).
    assert_eq!(
        needs.cache[0].name,
        "e66e3f39-326a-5ff6-8d79-f66499369895_Probe.xlsx"
    );
    assert_eq!(needs.cache[0].phase, Phase::Setup);
    assert_eq!(needs.cache[1].name, "gold.xlsx");
    assert_eq!(needs.cache[1].phase, Phase::Evaluation);
    assert!(needs.absent.is_empty());
    assert_eq!(task.json["instruction"], "Put 'solved' in A1.");
}

#[test]
fn os_and_infeasible_tasks_are_told_apart() {
    let task = OsWorldTask::read(&json!({
        "id": "b3d4a89c", "instruction": "Switch on Bluetooth.", "config": [],
        "related_apps": ["os"], "evaluator": {"func": "infeasible"}
    }))
    .unwrap();
    assert!(task.infeasible() && task.os_only());
    assert!(task.evaluator.result.is_empty());
}

#[test]
fn lists_of_metrics_need_as_many_getters() {
    let mut task = calc();
    task["evaluator"]["func"] = json!(["compare_table", "exact_match"]);
    let found = flaws(task);
    assert!(
        found.iter().any(
            |f| f.at == "evaluator.result" && f.message.contains("must be a list of 2 getters")
        ),
        "{found:?}"
    );
    let mut task = calc();
    task["evaluator"]["func"] = json!(["exact_match", "exact_match"]);
    task["evaluator"]["result"] = json!([{"type": "vm_command_line", "command": "ls"}, {"type": "vm_command_line", "command": "pwd"}]);
    task["evaluator"]["expected"] = json!([{"type": "rule", "rules": {"expected": "x"}}, null]);
    task["evaluator"]["options"] = json!([{}]);
    let found = flaws(task);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].at, "evaluator.options");
    assert!(
        found[0]
            .message
            .contains("lists 1 items, but `func` lists 2 metrics")
    );
}

#[test]
fn paths_out_of_the_desktop_are_flaws_where_they_are() {
    let mut task = calc();
    task["config"][0]["parameters"]["files"][0]["path"] = json!("/etc/cron.d/x");
    task["config"][1]["parameters"]["path"] = json!("/home/user/../../root/.ssh/id_rsa");
    task["evaluator"]["result"]["dest"] = json!("../../escape.xlsx");
    task["evaluator"]["expected"]["dest"] = json!("/tmp/gold.xlsx");
    let found = flaws(task);
    let at: Vec<&str> = found.iter().map(|f| f.at.as_str()).collect();
    assert_eq!(
        at,
        [
            "config[0].parameters.files[0].path",
            "config[1].parameters.path",
            "evaluator.result.dest",
            "evaluator.expected.dest"
        ]
    );
    assert!(
        found[0].message.contains("outside /home/user and /tmp"),
        "{}",
        found[0].message
    );
    assert!(found[1].message.contains("`..`"), "{}", found[1].message);
    // A rule's data is not a path.
    let mut task = calc();
    task["evaluator"]["expected"] = json!({"type": "rule", "rules": {"path": "/etc/passwd"}});
    assert!(OsWorldTask::read(&task).is_ok());
}

#[test]
fn a_task_without_its_parts_says_each() {
    let found = flaws(
        json!({"id": "../x", "instruction": "", "config": {"type": "sleep"}, "evaluator": {"func": "exact_match", "conj": "xor"}}),
    );
    let said: Vec<String> = found
        .iter()
        .map(|f| format!("{}: {}", f.at, f.message))
        .collect();
    assert!(
        said.iter()
            .any(|s| s.starts_with("id: OSWorld's task id \"../x\" cannot name a cache folder")),
        "{said:?}"
    );
    assert!(
        said.iter()
            .any(|s| s == "instruction: the instruction is empty"),
        "{said:?}"
    );
    assert!(
        said.iter()
            .any(|s| s.starts_with("config: must be a list of steps, not an object")),
        "{said:?}"
    );
    assert!(
        said.iter()
            .any(|s| s.starts_with("evaluator.conj: must be \"and\" or \"or\"")),
        "{said:?}"
    );
}
