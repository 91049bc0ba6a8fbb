//! Task file shapes and bad files: `validate` reports every problem precisely and exits
//! 2; `run` reports each bad file as an `error` result and runs the rest.

use serde_json::json;

use crate::helpers::{Project, shell_plan};

/// A folder with one file of each shape and one of each kind of bad file.
fn mixed() -> Project {
    let p = Project::new();
    p.task("good/recorded.json", shell_plan("echo", &["echo hi"]))
        .task("ufo/request.json", json!({"task": "Insert a table", "object": "draft.docx", "close": false}))
        .task("ufo/step_plan.json", json!({"task": "Type a heading", "steps": ["type 'Test'", "make it heading 1"], "object": "draft.docx"}))
        .task("seed/request.json", json!({"request": "List the files"}))
        .file("tasks/ufo/draft.docx", "a document")
        .file("tasks/bad/syntax.json", "{\n  \"request\": \"x\",\n  \"actions\": [\n}\n")
        .task("bad/no_request.json", json!({"close": true}))
        .task("bad/wrong_type.json", json!({"request": "x", "actions": [{"action": "execute_command", "parameters": {"command": "ls"}}], "close": "sometimes"}))
        .task("bad/unsafe_id.json", json!({"id": "../../etc", "request": "x", "actions": []}))
        .task("bad/dup_a.json", json!({"id": "same", "request": "x", "actions": []}))
        .task("bad/dup_b.json", json!({"id": "same", "request": "y", "actions": []}))
        .task("bad/unknown_tool.json", json!({"request": "x", "actions": [{"action": "format_disk", "parameters": {}}]}))
        .file("tasks/bad/my task.json", "{\"request\": \"x\", \"actions\": []}");
    p
}

#[test]
fn validate_reports_every_problem_and_exits_2() {
    let p = mixed();
    let out = p.cmd(&["validate", "tasks"]);
    out.expect_code(2);
    let text = &out.stdout;
    for needle in [
        "tasks/bad/syntax.json:4:1: expected value",
        "tasks/bad/no_request.json:1:1: no request: the file has neither \"request\" nor \"task\"",
        "fix: use one of: execute_command, write_file, read_file, list_dir",
        "12 task files checked: 5 valid (2 RecordedPlan, 1 SeedRequest, 1 UfoRequest, 1 UfoStepPlan), 7 bad files with 7 problems",
    ] {
        assert!(text.contains(needle), "missing {needle:?} in:\n{text}");
    }
    // Every problem is said at its line and column, not only the parser's first.
    for (file, said) in [
        (
            "tasks/bad/wrong_type.json",
            "`close`: `close` is \"sometimes\"",
        ),
        (
            "tasks/bad/unsafe_id.json",
            "`id`: the id `../../etc` has the segment `..`",
        ),
        (
            "tasks/bad/unknown_tool.json",
            "`actions[0].action`: unknown tool `format_disk`",
        ),
        (
            "tasks/bad/my task.json",
            "the id `bad/my task` contains a space",
        ),
    ] {
        let line = text
            .lines()
            .find(|l| l.strip_prefix("error: ").unwrap_or(l).starts_with(file) && l.contains(said))
            .unwrap_or_else(|| panic!("missing {file}: {said} in:\n{text}"));
        let line = line.strip_prefix("error: ").unwrap_or(line);
        let position: Vec<&str> = line[file.len()..].splitn(4, ':').collect();
        assert!(
            position[0].is_empty()
                && position[1].parse::<u32>().is_ok()
                && position[2].parse::<u32>().is_ok(),
            "{line}"
        );
    }
    // A duplicate id is a problem of the batch, not of a place in one file.
    assert!(
        text.contains("tasks/bad/dup_b.json: duplicate id `same`: tasks/bad/dup_a.json has it too"),
        "{text}"
    );
}

#[test]
fn validate_passes_a_clean_folder() {
    let p = Project::new();
    p.task("a.json", shell_plan("a", &["true"]));
    let out = p.cmd(&["validate", "tasks"]);
    out.expect_code(0);
    assert_eq!(
        out.stdout,
        "1 task file checked: 1 valid (1 RecordedPlan)\n"
    );
}

#[test]
fn run_reports_bad_files_as_errors_and_runs_the_rest() {
    let p = mixed();
    // LLM tasks without a model are refused before anything runs...
    let out = p.run(&[]);
    out.expect_code(2);
    assert!(
        out.stderr
            .contains("need an LLM agent and none is configured"),
        "{}",
        out.stderr
    );
    // ...so this run keeps to the replays and the bad files.
    for dir in ["ufo", "seed"] {
        std::fs::remove_dir_all(p.path().join("tasks").join(dir)).unwrap();
    }
    let out = p.run(&[]);
    out.expect_code(1);
    assert_eq!(out.status_of("good/recorded"), "passed");
    assert_eq!(
        out.status_of("same"),
        "passed",
        "the first file with a duplicate id runs"
    );
    for (id, needle) in [
        (
            "bad/syntax",
            "invalid task file: line 4 column 1: expected value",
        ),
        ("bad/no_request", "no request"),
        ("bad/wrong_type", "`close` is \"sometimes\""),
        ("bad/unsafe_id", "has the segment `..`"),
        ("same.dup2", "duplicate id `same`"),
        ("bad/unknown_tool", "unknown tool `format_disk`"),
        ("bad/my_task", "contains a space"),
    ] {
        let status = out.status(id);
        assert_eq!(status["status"], "error", "{id}: {status}");
        let error = status["error"].as_str().unwrap();
        assert!(error.contains(needle), "{id}: {error}");
        let md = out.task_file(id, "output.md");
        assert!(md.contains("## Problems in the task file"), "{id}");
        // The request the file states, or no request line at all (never an empty one).
        match id {
            "bad/syntax" | "bad/no_request" | "same.dup2" => {
                assert!(!md.contains("**Request**"), "{id}: {md}");
            }
            _ => assert!(md.contains("- **Request**: x\n"), "{id}: {md}"),
        }
    }
    let totals = &out.summary()["totals"];
    assert_eq!(totals["total"], 9);
    assert_eq!(totals["passed"], 2);
    assert_eq!(totals["error"], 7);
    assert!(
        out.stderr
            .contains("ERROR   bad/syntax: invalid task file (1 problem)"),
        "{}",
        out.stderr
    );
}

#[test]
fn missing_path_and_empty_folder_exit_2_before_running() {
    let p = Project::new();
    let out = p.cmd(&["run", "nowhere"]);
    out.expect_code(2);
    assert!(
        out.stderr
            .contains("error: no such file or folder: nowhere"),
        "{}",
        out.stderr
    );
    p.file("empty/readme.txt", "");
    let out = p.cmd(&["run", "empty"]);
    out.expect_code(2);
    assert!(
        out.stderr
            .contains("no task files (*.json) found under empty"),
        "{}",
        out.stderr
    );
    assert!(
        !p.path().join("results").exists(),
        "nothing may be written before a run starts"
    );
}

#[test]
fn bad_options_and_config_exit_2_with_the_reason() {
    let p = Project::new();
    p.task("a.json", shell_plan("a", &["true"]));
    let out = p.run(&["--jobs", "0"]);
    out.expect_code(2);
    assert!(
        out.stderr.contains("--jobs must be at least 1"),
        "{}",
        out.stderr
    );
    let out = p.run(&["--timeout", "soon"]);
    out.expect_code(2);
    assert!(
        out.stderr.contains("--timeout: \"soon\" is not a duration"),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains("environment"), "{}", out.stderr);
    // A bad value from the environment is traced to its variable.
    for (var, value, flag) in [
        ("UFO_BATCH_JOBS", "abc", "--jobs"),
        ("UFO_BATCH_TIMEOUT", "-5s", "--timeout"),
    ] {
        let out = p.cmd_env(&["run", "tasks"], &[(var, value)]);
        out.expect_code(2);
        assert!(
            out.stderr.contains(&format!(
                "note: {flag} was not given: its value comes from the environment variable {var}"
            )),
            "{}",
            out.stderr
        );
    }
    p.file("ufo-batch.toml", "[run]\njobs = \"many\"\n");
    let out = p.run(&[]);
    out.expect_code(2);
    assert!(
        out.stderr.contains("bad config file ufo-batch.toml"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("line 2"), "{}", out.stderr);
}

#[test]
fn a_single_file_can_be_run() {
    let p = Project::new();
    p.task("one.json", shell_plan("one", &["echo one > out.txt"]));
    let out = p.cmd(&["run", "tasks/one.json", "--progress", "lines"]);
    out.expect_code(0);
    let status = crate::helpers::read_json(&out.run_dir("one").join("one/status.json"));
    assert_eq!(status["status"], "passed");
}

/// Edge inputs `validate` and `run` must judge alike: each bad for both (an `error`
/// result blamed on the task file at run), each good for both.
#[test]
fn validate_and_run_share_one_set_of_rules_on_edge_inputs() {
    let long = "d/".repeat(3100) + "f.txt";
    let bad = [
        (
            "negative_timeout",
            json!({"request": "x", "actions": [{"action": "execute_command", "parameters": {"command": "true", "timeout": -5}}]}),
        ),
        (
            "fraction_timeout",
            json!({"request": "x", "actions": [{"action": "execute_command", "parameters": {"command": "true", "timeout": 1.5}}]}),
        ),
        (
            "long_files_path",
            json!({"request": "x", "files": {long.clone(): "x"}, "actions": []}),
        ),
        (
            "long_write_path",
            json!({"request": "x", "actions": [{"action": "write_file", "parameters": {"path": long, "content": "x"}}]}),
        ),
    ];
    let p = Project::new();
    p.task("good.json", json!({"request": "x", "actions": [{"action": "execute_command", "parameters": {"command": "true", "timeout": 0}}]}));
    for (name, task) in &bad {
        p.task(&format!("{name}.json"), task.clone());
    }
    let out = p.cmd(&["validate", "tasks"]);
    out.expect_code(2);
    for (name, _) in &bad {
        assert!(
            out.stdout.contains(&format!("tasks/{name}.json:")),
            "validate passed {name}:\n{}",
            out.stdout
        );
    }
    assert!(!out.stdout.contains("tasks/good.json:"), "{}", out.stdout);
    assert!(
        out.stdout
            .contains("must be a whole number, 0 or more, not a negative integer"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("a path may be at most 2048"),
        "{}",
        out.stdout
    );
    // The echoed path is shortened, not 6,000 characters.
    assert!(out.stdout.lines().all(|l| l.len() < 600), "{}", out.stdout);
    let run = p.run(&[]);
    assert_eq!(run.status_of("good"), "passed");
    for (name, _) in &bad {
        let status = run.status(name);
        assert_eq!(status["status"], "error", "{name}: {status}");
        assert_eq!(status["blame"], "task_file", "{name}: {status}");
    }
}
