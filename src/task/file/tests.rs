//! Tests of `task::file`.

use std::time::Duration;

use super::*;
use crate::executor::shell_tools;
use crate::record::ShapeName;

fn parse(text: &str) -> FileOutcome {
    parse_task(
        Path::new("t/x.json"),
        text,
        TaskId::parse("x"),
        shell_tools(),
    )
}

fn problems(text: &str) -> Vec<String> {
    match parse(text).result {
        Ok(_) => vec![],
        Err(ps) => ps.iter().map(|p| p.to_string()).collect(),
    }
}

#[test]
fn tells_the_four_shapes_apart() {
    let shapes = [
        (
            r#"{"task": "t", "object": "notepad", "close": true}"#,
            "UfoRequest",
        ),
        (r#"{"task": "t", "steps": ["a", "b"]}"#, "UfoStepPlan"),
        (r#"{"request": "r"}"#, "SeedRequest"),
        (r#"{"request": "r", "actions": []}"#, "RecordedPlan"),
    ];
    for (text, want) in shapes {
        let task = parse(text).result.unwrap();
        assert_eq!(format!("{:?}", ShapeName::of(&task.shape)), want, "{text}");
    }
}

#[test]
fn syntax_errors_have_line_and_column() {
    let p = problems("{\n  \"request\": \"a\"\n  \"actions\": []\n}");
    assert_eq!(p.len(), 1);
    assert!(
        p[0].starts_with("t/x.json:3:3: expected `,` or `}`"),
        "{}",
        p[0]
    );
    assert!(p[0].contains("fix: correct the JSON syntax"), "{}", p[0]);
}

#[test]
fn type_errors_name_the_key() {
    let p = problems("{\"request\": \"a\", \"actions\": [{\"action\": 5}]}");
    assert!(
        p[0].contains("`actions[0].action`: must be a string (\"...\"), not the number 5"),
        "{}",
        p[0]
    );
    let p = problems(r#"{"task": "a", "close": "maybe"}"#);
    assert!(p[0].contains("`close`: `close` is \"maybe\""), "{}", p[0]);
}

#[test]
fn missing_request_says_which_keys() {
    let p = problems(r#"{"object": "a.docx"}"#);
    assert!(
        p[0].contains("neither \"request\" nor \"task\""),
        "{}",
        p[0]
    );
    let p = problems(r#"{"request": "  "}"#);
    assert!(p[0].contains("the request is empty"), "{}", p[0]);
    let p = problems("[1, 2]");
    assert!(
        p[0].contains("must hold a JSON object, not an array"),
        "{}",
        p[0]
    );
}

#[test]
fn collects_every_semantic_problem() {
    let text = r#"{"id": "../up", "request": "r", "timeout": -1, "max_steps": 0,
        "files": {"/etc/x": ""},
        "actions": [{"action": "rm_rf", "parameters": {}},
                    {"action": "execute_command", "parameters": {"cmd": "ls"}}],
        "evaluate": [{"type": "file_contains", "path": "../a", "pattern": "("}]}"#;
    let p = problems(text);
    let joined = p.join("\n");
    for needle in [
        "`id`: the id `../up` has the segment `..`",
        "`timeout`: timeout -1 is not a positive",
        "`max_steps`: max_steps is 0",
        "`files./etc/x`: `/etc/x` is an absolute path",
        "`actions[0].action`: unknown tool `rm_rf`",
        "`actions[1].parameters`: `execute_command` needs the parameter `command`",
        "`evaluate[0].path`: `../a` leaves the workspace",
        "`evaluate[0].pattern`: invalid regular expression",
    ] {
        assert!(joined.contains(needle), "missing {needle:?} in\n{joined}");
    }
    // A bad declared id is not used; the path id is unaffected.
    assert!(parse(text).declared_id.is_none());
}

#[test]
fn lenient_where_ufo_files_are_loose() {
    let out = parse(r#"{"task": "t", "close": "True", "extra": 1, "timeout": "90s"}"#);
    let task = out.result.unwrap();
    assert!(task.close);
    assert_eq!(task.timeout, Some(Duration::from_secs(90)));
    assert_eq!(task.warnings, vec!["unknown key `extra` ignored"]);
}

#[test]
fn unsafe_path_id_suggests_an_explicit_id() {
    let out = parse_task(
        Path::new("t/my task.json"),
        r#"{"request": "r"}"#,
        TaskId::parse("my task"),
        shell_tools(),
    );
    let p = out.result.unwrap_err();
    assert!(p[0].to_string().contains("contains a space"), "{}", p[0]);
    assert!(p[0].to_string().contains("set a safe \"id\""), "{}", p[0]);
    let out = parse_task(
        Path::new("t/my task.json"),
        r#"{"id": "my_task", "request": "r"}"#,
        TaskId::parse("my task"),
        shell_tools(),
    );
    assert_eq!(out.result.unwrap().id.as_str(), "my_task");
}

#[test]
fn app_tools_load_in_plans_and_not_in_setup() {
    let with_all = |text: &str| match parse_task(
        Path::new("t/x.json"),
        text,
        TaskId::parse("x"),
        crate::executor::all_tools(),
    )
    .result
    {
        Ok(task) => Ok(task),
        Err(ps) => Err(ps
            .iter()
            .map(|p| p.to_string())
            .collect::<Vec<_>>()
            .join("\n")),
    };
    let plan = r#"{"request": "r", "actions": [
        {"agent": "AppAgent", "action": "set_edit_text", "parameters": {"name": "Body", "control_type": "Edit", "text": "hi"}},
        {"agent": "AppAgent", "action": "click_on_coordinates", "parameters": {"x": 0.5, "y": 0.25}}
    ]}"#;
    assert!(with_all(plan).unwrap().is_desktop());
    let setup = r#"{"request": "r", "setup": [{"action": "click_input", "parameters": {"name": "OK"}}], "actions": []}"#;
    let err = with_all(setup).unwrap_err();
    assert!(
        err.contains("setup[0].action") && err.contains("setup runs before the app opens"),
        "{err}"
    );
    let bad = r#"{"request": "r", "actions": [{"action": "click_on_coordinates", "parameters": {"x": "left", "y": 0.5}}]}"#;
    let err = with_all(bad).unwrap_err();
    assert!(
        err.contains("parameter `x` of `click_on_coordinates` must be a number"),
        "{err}"
    );
    // An LLM shape on an office document, or naming an app, is a desktop task; on a
    // text file or a table it stays with the shell's tools.
    let project = tempfile::tempdir().unwrap();
    let files = project.path().join("files");
    std::fs::create_dir_all(&files).unwrap();
    for name in ["draft.docx", "budget.XLSX", "nums.txt", "table.csv"] {
        std::fs::write(files.join(name), "x").unwrap();
    }
    let task_file = project.path().join("tasks/x.json");
    for (request, desktop) in [
        (r#"{"task": "t", "object": "draft.docx"}"#, true),
        (
            r#"{"task": "t", "object": "budget.XLSX", "steps": ["a"]}"#,
            true,
        ),
        (r#"{"task": "t", "app": "word"}"#, true),
        (r#"{"task": "t", "object": "notepad"}"#, true),
        (r#"{"request": "t", "app": "excel"}"#, true),
        (r#"{"task": "t", "object": "nums.txt"}"#, false),
        (r#"{"task": "t", "object": "table.csv"}"#, false),
        (r#"{"task": "t"}"#, false),
    ] {
        let task = parse_task(
            &task_file,
            request,
            TaskId::parse("x"),
            crate::executor::all_tools(),
        )
        .result
        .unwrap_or_else(|p| panic!("{request}: {p:?}"));
        assert_eq!(task.is_desktop(), desktop, "{request}");
    }
}

#[test]
fn one_reading_says_every_problem_where_the_file_has_it() {
    let text = r#"{"request": "r", "timout": 3,
        "actions": [{"action": "execute_command", "parameters": {"command": 5}},
                    {"action": "execute_comand", "parameters": {"command": "ls"}},
                    {"action": "execute_command", "parameters": {}}],
        "evaluate": [{"type": "file_exist", "path": "a"},
                     {"type": "file_exists", "path": "b"},
                     {"type": "file_equals", "path": 7, "content": "x"}]}"#;
    let outcome = parse(text);
    let said = problems(text);
    let joined = said.join("\n");
    // Types first (each where it is), then meaning; the set-aside items do not shift
    // the places of the ones after them.
    for wanted in [
        "`evaluate[0].type`: `file_exist` is not one of",
        "did you mean `file_exists`?",
        "`evaluate[2]`: must be a string (\"...\"), not the number 7",
        "`actions[1].action`: unknown tool `execute_comand`",
        "did you mean `execute_command`?",
        "`actions[2].parameters`: `execute_command` needs the parameter `command`",
    ] {
        assert!(joined.contains(wanted), "{wanted} not in:\n{joined}");
    }
    assert!(!joined.contains("evaluate[1]"), "{joined}");
    assert!(
        outcome
            .warnings
            .iter()
            .any(|w| w.contains("`timout`") && w.contains("did you mean `timeout`?")),
        "{:?}",
        outcome.warnings
    );
}

#[test]
fn every_problem_has_its_line_and_column() {
    let text = "{\"request\": \"r\",\n \"max_steps\": \"5\",\n \"actions\": [{\"action\": \"execute_comand\", \"parameters\": {}}],\n \"evaluate\": [{\"type\": \"file_exist\", \"path\": \"a\"}]}";
    let said = problems(text);
    assert!(said.len() >= 3, "{said:?}");
    for (p, line) in said.iter().zip([2, 4, 3]) {
        assert!(p.starts_with(&format!("t/x.json:{line}:")), "{said:#?}");
    }
    // A problem with the file as a whole is at its start.
    let said = problems("\n  {\"object\": \"a.docx\"}");
    assert!(said[0].starts_with("t/x.json:2:3: no request"), "{said:?}");
}

#[test]
fn a_misspelt_key_that_decides_the_shape_is_a_problem() {
    // `actons` would make this recorded plan an LLM task: a problem, not a warning.
    let text = r#"{"request": "r", "actons": [{"action": "execute_command", "parameters": {"command": "ls"}}]}"#;
    let said = problems(text);
    assert_eq!(said.len(), 1, "{said:?}");
    assert!(
        said[0].contains("`actons`: unknown key `actons`: did you mean `actions`?"),
        "{said:?}"
    );
    assert!(said[0].starts_with("t/x.json:1:18:"), "{said:?}");
    for (key, meant) in [
        ("evalute", "evaluate"),
        ("requst", "request"),
        ("stpes", "steps"),
    ] {
        let text = format!(r#"{{"task": "t", "{key}": []}}"#);
        let said = problems(&text);
        assert!(
            said.iter()
                .any(|p| p.contains(&format!("did you mean `{meant}`?"))),
            "{said:?}"
        );
    }
    // With the key itself there too, the near-miss is only unknown: a warning.
    let text = r#"{"request": "r", "evaluate": [], "evalute": []}"#;
    assert!(parse(text).result.is_ok());
    // A key far from any, or only like one, is a warning, as before.
    assert!(parse(r#"{"request": "r", "notes": "n"}"#).result.is_ok());
    assert!(parse(r#"{"task": "t", "request_id": "7"}"#).result.is_ok());
}
