//! Experience (UFO's SAVE_EXPERIENCE / RAG_EXPERIENCE / RAG_DEMONSTRATION): a run that
//! saves records in UFO's `experience.yaml` (checked with PyYAML as UFO loads it, and
//! appended to by UFO's own `ExperienceSummarizer.create_or_update_yaml`), a second run
//! whose agents are given the records like their task and no others, recorded plans
//! saved without a model and used as demonstrations, saving at once and under `kill -9`,
//! and files that cannot be used.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::{Value, json};

use crate::helpers::{Project, eventually_within, shell_plan};
use crate::llm::llm_project;
use crate::mock_llm::{MockLlm, Reply, action, finish};

/// A summary reply with UFO's ten keys.
fn summary(command: &str, tips: &str) -> Reply {
    Reply::Content(
        json!({
            "Observation": "a workspace with the input file",
            "Thought": "one shell command does it",
            "ControlLabel": "", "ControlText": "",
            "Function": "execute_command", "Args": {"command": command},
            "Status": "FINISH", "Plan": "<FINISH>", "Comment": "done in one step",
            "Tips": tips,
        })
        .to_string(),
    )
}

/// Runs `python` (UFO's venv) with `code`, UFO's code on its path; its stdout.
fn ufo_python(code: &str) -> String {
    crate::ufo_real::ufo_installed();
    let out = Command::new(crate::ufo_real::ufo_python())
        .arg("-c")
        .arg(code)
        .env("PYTHONPATH", crate::ufo_real::ufo_source())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "python failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Reads `path` as UFO's AppAgent reads each record (`rag_experience_retrieve`: the
/// document's metadata `request`, `example`, `Tips`, `Sub-task`, `app_list`), after
/// `yaml.safe_load` as `create_or_update_yaml` loads the file; the records as JSON.
fn read_as_ufo(path: &Path) -> Value {
    let code = format!(
        r#"
import json, yaml
with open({path:?}) as f:
    data = yaml.safe_load(f)
assert isinstance(data, dict), type(data)
out = {{}}
for key, record in data.items():
    assert key.startswith("example"), key
    request = record.get("request", "")
    response = record.get("example", {{}})
    tips = record.get("Tips", "")
    subtask = record.get("Sub-task", "")
    apps = [app.lower() for app in record["app_list"]]
    assert isinstance(request, str) and request, record
    assert isinstance(response, dict), record
    for k in ["Observation", "Thought", "ControlLabel", "ControlText", "Function", "Args", "Status", "Plan", "Comment"]:
        assert k in response, (key, k)
    assert isinstance(tips, str) and isinstance(subtask, str), record
    out[key] = {{"request": request, "example": response, "Tips": tips, "Sub-task": subtask, "apps": apps,
                 "task_id": record.get("task_id"), "run": record.get("run"), "model": record.get("model")}}
print(json.dumps(out))
"#,
        path = path.display().to_string()
    );
    serde_json::from_str(&ufo_python(&code)).unwrap()
}

/// Appends `summaries` to `path` with UFO's own `create_or_update_yaml` (its vector
/// store's imports, langchain, stubbed: only the YAML half runs).
fn append_as_ufo(path: &Path, summaries: Value) {
    let code = format!(
        r#"
import json, sys, types
for name in ["langchain", "langchain.docstore", "langchain.docstore.document", "langchain_community", "langchain_community.vectorstores"]:
    sys.modules[name] = types.ModuleType(name)
sys.modules["langchain.docstore.document"].Document = object
sys.modules["langchain_community.vectorstores"].FAISS = object
from ufo.experience.summarizer import ExperienceSummarizer
ExperienceSummarizer.create_or_update_yaml(json.loads({summaries:?}), {path:?})
"#,
        summaries = summaries.to_string(),
        path = path.display().to_string()
    );
    ufo_python(&code);
}

fn system_prompt(body: &Value) -> String {
    body["messages"][0]["content"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[test]
#[cfg_attr(skip_ufo, ignore = "UFO_BATCH_SKIP_TESTS: needs ufo")]
fn a_run_saves_ufo_records_and_the_next_run_gives_them_to_similar_tasks_only() {
    crate::ufo_real::ufo_installed();
    let mock = MockLlm::start();
    mock.script_key(
        "kxsumq",
        vec![
            action(
                "execute_command",
                json!({"command": "awk -F, 'NR>1 {s+=$2} END {print s}' sales.csv > total.txt"}),
                "CONTINUE",
            ),
            finish("the total is in total.txt"),
            summary(
                "awk -F, 'NR>1 {s+=$2} END {print s}' sales.csv > total.txt",
                "- skip the header row\n- the amount is the second column",
            ),
        ],
    );
    mock.script_key(
        "kxfailq",
        vec![
            action("execute_command", json!({"command": "true"}), "CONTINUE"),
            finish("done"),
        ],
    );
    let p = llm_project();
    p.task(
        "sum.json",
        json!({"request": "Sum the amount column of sales.csv into total.txt kxsumq",
               "files": {"sales.csv": "item,amount\na,2\nb,3\n"},
               "evaluate": [{"type": "file_equals", "path": "total.txt", "content": "5\n"}]}),
    );
    p.task(
        "reverse.json",
        json!({"request": "Reverse the lines of poem.txt into back.txt kxfailq",
               "files": {"poem.txt": "a\nb\n"},
               "evaluate": [{"type": "file_equals", "path": "back.txt", "content": "b\na\n"}]}),
    );
    let url = mock.url();
    let out = p.run(&["--llm-base-url", &url, "--save-experience", "passed"]);
    out.expect_code(1);

    // The passed task saved one record, summarized by the model at its cost.
    let sum = out.status("sum");
    assert_eq!(sum["experience"]["saved"], json!(["example0"]), "{sum}");
    assert_eq!(sum["llm"]["calls"], 3, "{sum}");
    assert_eq!(
        sum["usage"]["prompt_tokens"],
        3 * crate::mock_llm::PROMPT_TOKENS
    );
    let asked = mock.received_key("kxsumq");
    let last = &asked.last().unwrap().body;
    let system = system_prompt(last);
    assert!(
        system.starts_with("You are an expert summarizer"),
        "{system}"
    );
    assert!(system.contains("execute_command"), "{system}");
    let trajectory = last["messages"][1]["content"].as_str().unwrap();
    assert!(
        trajectory.starts_with("[Agent Trajectory]:"),
        "{trajectory}"
    );
    assert!(trajectory.contains("\"Function\": \"execute_command\""));
    assert!(trajectory.contains("[Task to be completed]:\nSum the amount column"));
    // The failed one saved nothing (the policy is `passed`).
    assert!(out.status("reverse").get("experience").is_none());
    let md = out.task_file("sum", "output.md");
    assert!(
        md.contains("## Experience") && md.contains("Saved as experience: example0."),
        "{md}"
    );

    // UFO reads it, and UFO's own saver appends to it.
    let file = p.path().join("results/experience/experience.yaml");
    let records = read_as_ufo(&file);
    assert_eq!(records.as_object().unwrap().len(), 1, "{records}");
    let ours = &records["example0"];
    assert_eq!(ours["example"]["Function"], "execute_command");
    assert_eq!(
        ours["Tips"],
        "- skip the header row\n- the amount is the second column"
    );
    assert_eq!(ours["apps"], json!(["shell"]));
    assert_eq!(
        (&ours["task_id"], &ours["run"], &ours["model"]),
        (&json!("sum"), &json!("proj"), &json!("test-model"))
    );
    let ufo_example = json!({"Observation": "Excel is open", "Thought": "select the column", "ControlLabel": "12",
        "ControlText": "Amount", "Function": "click_input", "Args": {"button": "left"}, "Status": "CONTINUE",
        "Plan": "sum it", "Comment": ""});
    append_as_ufo(
        &file,
        json!([{"example": ufo_example, "Tips": "- use AutoSum",
                "request": "Sum the amount column of the sales sheet", "Sub-task": "Sum the amount column of the sales sheet",
                "app_list": ["EXCEL.EXE"]}]),
    );
    let records = read_as_ufo(&file);
    assert_eq!(records["example1"]["apps"], json!(["excel.exe"]));
    assert_eq!(
        records["example0"]["example"]["Function"],
        "execute_command"
    );

    // The next run: the similar shell task is given our record (not UFO's Excel one,
    // not a task of another app); the unrelated one is given nothing.
    let mock = MockLlm::start();
    mock.script_key(
        "kxaddq",
        vec![
            action(
                "execute_command",
                json!({"command": "awk -F, 'NR>1 {s+=$2} END {print s}' orders.csv > total.txt"}),
                "CONTINUE",
            ),
            finish("done"),
        ],
    );
    mock.script_key(
        "kxrenameq",
        vec![
            action("execute_command", json!({"command": "true"}), "CONTINUE"),
            finish("done"),
        ],
    );
    p.file(
        "next/add.json",
        &json!({"request": "Add up the amount column of orders.csv kxaddq",
                "files": {"orders.csv": "item,amount\na,4\n"},
                "evaluate": [{"type": "file_equals", "path": "total.txt", "content": "4\n"}]})
        .to_string(),
    );
    p.file(
        "next/rename.json",
        &json!({"request": "Rename every jpeg picture kxrenameq", "evaluate": [{"type": "command", "run": "true"}]})
            .to_string(),
    );
    let url = mock.url();
    let out = p.cmd(&[
        "run",
        "next",
        "--progress",
        "lines",
        "--llm-base-url",
        &url,
        "--experience",
        "results/experience",
    ]);
    out.expect_code(0);
    let add = &mock.received_key("kxaddq")[0].body;
    let system = system_prompt(add);
    assert!(system.contains("<## Response Examples:>"), "{system}");
    assert!(
        system.contains(
            "| [User Request]:\n|     Sum the amount column of sales.csv into total.txt kxsumq"
        ),
        "{system}"
    );
    assert!(
        system.contains("- skip the header row\n|     - the amount is the second column"),
        "{system}"
    );
    assert!(
        !system.contains("AutoSum"),
        "UFO's Excel record went to a shell task: {system}"
    );
    // The record is quoted as data, with where it came from, as the model read it.
    assert!(
        system.contains(
            "[Example 1:] (experience: record `example0`, saved by run `proj` from its task `sum`)\n| "
        ),
        "{system}"
    );
    assert!(system.contains("\n[End of Example 1]\n"), "{system}");
    let rename = &mock.received_key("kxrenameq")[0].body;
    assert!(!system_prompt(rename).contains("Response Examples"));
    // Every later step keeps the examples in its system prompt.
    let later = &mock.received_key("kxaddq")[1].body;
    assert!(system_prompt(later).contains("<## Response Examples:>"));

    // What was given is recorded and shown.
    let status = crate::helpers::read_json(&p.path().join("results/next/add/status.json"));
    let given = &status["experience"]["given"];
    assert_eq!(given.as_array().unwrap().len(), 1, "{status}");
    assert_eq!(given[0]["agent"], "LinuxAgent");
    assert_eq!(given[0]["source"], "experience");
    assert_eq!(given[0]["key"], "example0");
    assert_eq!(given[0]["from"], "proj/sum");
    assert!(given[0]["score"].as_f64().unwrap() > 0.0, "{status}");
    let rename_status =
        crate::helpers::read_json(&p.path().join("results/next/rename/status.json"));
    assert!(rename_status.get("experience").is_none(), "{rename_status}");
    let md = std::fs::read_to_string(p.path().join("results/next/add/output.md")).unwrap();
    assert!(
        md.contains("| LinuxAgent | experience | example0 |") && md.contains("| proj/sum |"),
        "{md}"
    );
    let html = std::fs::read_to_string(p.path().join("results/next/add/task.html")).unwrap();
    assert!(
        html.contains("<h2>Experience</h2>") && html.contains("<code>example0</code>"),
        "{html}"
    );
    let report = std::fs::read_to_string(p.path().join("results/next/report.md")).unwrap();
    assert!(
        report.contains("## Experience\n\n1 task was given experience (1 record in all); 0 tasks saved as experience (0 records)."),
        "{report}"
    );
    let summary = crate::helpers::read_json(&p.path().join("results/next/summary.json"));
    assert_eq!(
        summary["experience"],
        json!({"tasks_given": 1, "records_given": 1, "tasks_saved": 0, "records_saved": 0, "tasks_not_saved": 0})
    );
}

/// `n` recorded shell plans under `tasks/`, each sleeping `sleep` seconds first.
fn plans(p: &Project, n: usize, sleep: &str) {
    for i in 0..n {
        p.task(
            &format!("t{i:02}.json"),
            shell_plan(
                &format!("Write the number {i} into n.txt"),
                &[&format!("sleep {sleep}; echo {i} > n.txt"), "cat n.txt"],
            ),
        );
    }
}

/// The records of an experience file, by key, read with the YAML parser (no UFO).
fn records_of(path: &Path) -> serde_json::Map<String, Value> {
    let text = std::fs::read_to_string(path).unwrap();
    let value: Value = serde_norway::from_str(&text)
        .unwrap_or_else(|e| panic!("{} is torn: {e}\n{text}", path.display()));
    value.as_object().cloned().unwrap_or_default()
}

#[test]
fn recorded_plans_save_without_a_model_once_and_serve_as_demonstrations() {
    let p = Project::new();
    plans(&p, 2, "0");
    p.run(&["--save-experience", "passed", "--experience-dir", "exp"])
        .expect_code(0);
    let file = p.path().join("exp/experience.yaml");
    let records = records_of(&file);
    assert_eq!(records.len(), 2, "{records:?}");
    let first = records
        .values()
        .find(|r| r["task_id"] == "t00")
        .expect("t00 saved");
    assert_eq!(first["model"], "recorded plan");
    assert_eq!(first["example"]["Function"], "execute_command");
    assert_eq!(
        first["example"]["Args"]["command"],
        "sleep 0; echo 0 > n.txt"
    );
    assert_eq!(
        first["example"]["Plan"],
        "execute_command(command=\"cat n.txt\")"
    );
    assert_eq!(first["app_list"], json!(["shell"]));

    // Run again from scratch: the same tasks are not saved twice.
    let out = p.run(&[
        "--save-experience",
        "passed",
        "--experience-dir",
        "exp",
        "--fresh",
    ]);
    out.expect_code(0);
    assert_eq!(records_of(&file).len(), 2);
    assert!(out.status("t00").get("experience").is_none());
    let log = out.task_file("t00", "task.log");
    assert!(
        log.contains("not saved as experience again: the experience file already holds this task from run proj"),
        "{log}"
    );

    // The plans as demonstrations for an LLM task like them.
    let mock = MockLlm::start();
    mock.script_key(
        "kxwriteq",
        vec![
            action(
                "execute_command",
                json!({"command": "echo 7 > n.txt"}),
                "CONTINUE",
            ),
            finish("done"),
        ],
    );
    let q = llm_project();
    q.task(
        "seven.json",
        json!({"request": "Write the number 7 into n.txt kxwriteq",
               "evaluate": [{"type": "file_equals", "path": "n.txt", "content": "7\n"}]}),
    );
    let demos = p.path().join("tasks");
    let url = mock.url();
    q.run(&[
        "--llm-base-url",
        &url,
        "--demonstrations",
        demos.to_str().unwrap(),
        "--experience-top-k",
        "1",
    ])
    .expect_code(0);
    let system = system_prompt(&mock.received_key("kxwriteq")[0].body);
    assert!(
        system.contains("[Example 1:] (demonstration: the recorded plan `"),
        "{system}"
    );
    assert!(!system.contains("[Example 2:]"), "top-k is 1: {system}");
    assert!(system.contains("Write the number"), "{system}");
    let given = crate::helpers::read_json(&q.path().join("results/proj/seven/status.json"));
    assert_eq!(given["experience"]["given"][0]["source"], "demonstration");
    assert!(
        given["experience"]["given"][0]["key"]
            .as_str()
            .unwrap()
            .starts_with('t'),
        "{given}"
    );
}

/// The scripted model of many tasks at once: each task writes its number after a pause,
/// then finishes; a summary request gets a summary.
fn serve_numbers(mock: &MockLlm) {
    let reply = Reply::computed(|body| {
        let messages = body["messages"].as_array().cloned().unwrap_or_default();
        let system = messages[0]["content"].as_str().unwrap_or_default();
        let text = body["messages"].to_string();
        let n = text
            .split("Write the number ")
            .nth(1)
            .and_then(|rest| rest.split_whitespace().next())
            .unwrap_or("0")
            .to_string();
        let command = format!("sleep 0.3; echo {n} > n.txt");
        let said = |r: Reply| match r {
            Reply::Content(c) => c,
            _ => unreachable!(),
        };
        if system.starts_with("You are an expert summarizer") {
            said(summary(&command, "- write the number"))
        } else if messages.iter().any(|m| m["role"] == "assistant") {
            said(finish("done"))
        } else {
            said(action(
                "execute_command",
                json!({"command": command}),
                "CONTINUE",
            ))
        }
    });
    mock.serve_all(reply, Duration::ZERO);
}

#[test]
fn thirty_two_tasks_save_at_once_and_a_kill_leaves_the_file_whole() {
    let p = llm_project();
    for i in 0..32 {
        p.task(
            &format!("t{i:02}.json"),
            json!({"request": format!("Write the number {i} into n.txt"),
                   "evaluate": [{"type": "file_equals", "path": "n.txt", "content": format!("{i}\n")}]}),
        );
    }
    let mock = MockLlm::start();
    serve_numbers(&mock);
    let url = mock.url();
    let file = p.path().join("exp/experience.yaml");
    let args = [
        "run",
        "tasks",
        "--progress",
        "lines",
        "--llm-base-url",
        &url,
        "--jobs",
        "16",
        "--save-experience",
        "passed",
        "--experience-dir",
        "exp",
    ];
    let started = p.start(&args);
    assert!(
        eventually_within(
            || file.exists()
                && std::fs::read_to_string(&file).is_ok_and(|t| t.matches("task_id:").count() >= 4),
            Duration::from_secs(60)
        ),
        "no record was saved"
    );
    started.signal(libc::SIGKILL);
    let _ = started.wait();
    let at_kill = records_of(&file).len();
    assert!((4..=32).contains(&at_kill), "{at_kill}");
    // The run resumed: every task saved once, none twice.
    p.cmd(&args).expect_code(0);
    let records = records_of(&file);
    let mut ids: Vec<String> = records
        .values()
        .map(|r| r["task_id"].as_str().unwrap().to_string())
        .collect();
    ids.sort();
    let expected: Vec<String> = (0..32).map(|i| format!("t{i:02}")).collect();
    assert_eq!(ids, expected);
    assert!(records.values().all(|r| r["model"] == "test-model"));
    let t07 = records.values().find(|r| r["task_id"] == "t07").unwrap();
    assert_eq!(
        t07["example"]["Args"]["command"],
        "sleep 0.3; echo 7 > n.txt"
    );
    // No temporary file is left, only the lock file beside it.
    let mut names: Vec<String> = std::fs::read_dir(p.path().join("exp"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["experience.yaml", "experience.yaml.lock"]);
}

/// A project with one recorded plan and `experience.yaml` under `exp/` made by `make`.
fn with_experience(make: impl FnOnce(&Path)) -> (Project, PathBuf) {
    let p = Project::new();
    plans(&p, 1, "0");
    let dir = p.path().join("exp");
    std::fs::create_dir_all(&dir).unwrap();
    make(&dir.join("experience.yaml"));
    (p, dir)
}

/// Makes a file at the path given.
type MakeFile = dyn FnOnce(&Path);

#[test]
fn an_experience_file_that_cannot_be_used_is_refused_before_anything_runs() {
    let limit = Duration::from_secs(60);
    let cases: Vec<(&str, Box<MakeFile>, &str)> = vec![
        (
            "a folder in its place",
            Box::new(|f: &Path| std::fs::create_dir(f).unwrap()),
            "it is a folder, not a regular file",
        ),
        (
            "a list",
            Box::new(|f: &Path| std::fs::write(f, "- a\n- b\n").unwrap()),
            "its top level is not a mapping of example0, example1, ...",
        ),
        (
            "a billion laughs",
            Box::new(|f: &Path| {
                let mut y = String::from(
                    "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n",
                );
                for (i, name) in ["b", "c", "d", "e", "f", "g", "h", "i"].iter().enumerate() {
                    let prev = ["a", "b", "c", "d", "e", "f", "g", "h"][i];
                    y.push_str(&format!("{name}: &{name} [*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev}]\n"));
                }
                std::fs::write(f, y).unwrap();
            }),
            "repetition limit exceeded",
        ),
        (
            "100 MB",
            Box::new(|f: &Path| {
                let line = "example0:\n  request: \"x\"\n";
                let mut text = String::with_capacity(100 << 20);
                while text.len() < 100 << 20 {
                    text.push_str("# padding padding padding padding padding padding padding\n");
                }
                text.push_str(line);
                std::fs::write(f, text).unwrap();
            }),
            "more than the 33554432 bytes accepted",
        ),
        (
            "nested 400,000 deep",
            Box::new(|f: &Path| {
                std::fs::write(f, format!("example0: {}", "[".repeat(400_000))).unwrap()
            }),
            "nests 400000 levels of [ and {, more than the 64 read",
        ),
        (
            "not UTF-8",
            Box::new(|f: &Path| std::fs::write(f, b"example0: \xff\xfe\n").unwrap()),
            "cannot read",
        ),
    ];
    for (what, make, said) in cases {
        let (p, dir) = with_experience(make);
        let before = std::fs::symlink_metadata(dir.join("experience.yaml")).map(|m| m.len());
        for flag in ["--experience", "--experience-dir"] {
            let mut args = vec!["run", "tasks", "--progress", "lines"];
            let d = dir.to_str().unwrap();
            if flag == "--experience" {
                args.extend(["--experience", d]);
            } else {
                args.extend(["--save-experience", "always", "--experience-dir", d]);
            }
            let out = p.cmd_within(&args, limit);
            assert_eq!(
                out.code, 2,
                "{what} ({flag}): {}\n{}",
                out.stdout, out.stderr
            );
            assert!(out.stderr.contains(said), "{what} ({flag}): {}", out.stderr);
            assert!(
                !p.path().join("results/proj").exists(),
                "{what} ({flag}): a run dir was made"
            );
        }
        let after = std::fs::symlink_metadata(dir.join("experience.yaml")).map(|m| m.len());
        assert_eq!(before.ok(), after.ok(), "{what}: the file changed");
    }
}

#[test]
fn records_that_cannot_be_used_are_left_out_with_a_warning_and_an_empty_file_runs() {
    let (p, dir) = with_experience(|f| {
        std::fs::write(
            f,
            "example0: [1, 2]\nexample1:\n  request: Sum it\n  example: just text\nexample2:\n  example: {}\nexample3:\n  request: Write the number into n.txt\n  app_list: [shell]\n  example: {Function: execute_command}\n",
        )
        .unwrap()
    });
    let d = dir.to_str().unwrap().to_string();
    let out = p.run(&["--experience", &d]);
    out.expect_code(0);
    assert!(
        out.stderr.contains("3 records left out: example0: it is not a mapping of keys; example1: its `example` is not a mapping; example2: it has no `request` text"),
        "{}",
        out.stderr
    );
    std::fs::write(dir.join("experience.yaml"), "").unwrap();
    let out = p.run(&["--experience", &d, "--fresh"]);
    out.expect_code(0);
    assert!(
        out.stderr
            .contains("holds no experience records: tasks are given none from it"),
        "{}",
        out.stderr
    );
    let missing = p.run(&["--experience", "no-such-dir"]);
    missing.expect_code(2);
    assert!(
        missing
            .stderr
            .contains("--experience / [experience] retrieve no-such-dir: no such file or folder"),
        "{}",
        missing.stderr
    );
}

#[test]
fn a_task_is_never_given_its_own_record_and_later_tasks_get_what_this_run_saved() {
    let p = llm_project();
    let task = |name: &str, key: &str| {
        p.task(
            &format!("{name}.json"),
            json!({"request": format!("Sum the amount column of {name}.csv into total.txt {key}"),
                   "files": {format!("{name}.csv"): "amount\n1\n"},
                   "evaluate": [{"type": "file_equals", "path": "total.txt", "content": "1\n"}]}),
        );
    };
    task("alpha", "kxalphaq");
    task("beta", "kxbetaq");
    let replies = |name: &str| {
        vec![
            action(
                "execute_command",
                json!({"command": format!("tail -n 1 {name}.csv > total.txt")}),
                "CONTINUE",
            ),
            finish("done"),
            summary(
                &format!("tail -n 1 {name}.csv > total.txt"),
                "- the last line is the total",
            ),
        ]
    };
    let run = |fresh: bool| {
        let mock = MockLlm::start();
        mock.script_key("kxalphaq", replies("alpha"));
        mock.script_key("kxbetaq", replies("beta"));
        let url = mock.url();
        let mut args = vec![
            "--llm-base-url",
            &url,
            "--jobs",
            "1",
            "--save-experience",
            "passed",
            "--experience",
            "results/experience",
        ];
        if fresh {
            args.push("--fresh");
        }
        p.run(&args).expect_code(0);
        let given = |key: &str| -> Vec<String> {
            let system = system_prompt(&mock.received_key(key)[0].body);
            ["kxalphaq", "kxbetaq"]
                .into_iter()
                .filter(|k| {
                    system.contains(&format!(
                        "| [User Request]:\n|     Sum the amount column of {}",
                        if *k == "kxalphaq" { "alpha" } else { "beta" }
                    ))
                })
                .map(str::to_string)
                .collect()
        };
        (given("kxalphaq"), given("kxbetaq"))
    };
    // One at a time: the second task is given the first one's record, never its own.
    let (alpha, beta) = run(false);
    assert!(!alpha.contains(&"kxalphaq".to_string()), "{alpha:?}");
    assert!(!beta.contains(&"kxbetaq".to_string()), "{beta:?}");
    assert_eq!(alpha.len() + beta.len(), 1, "{alpha:?} {beta:?}");
    // The same run again: both records are there, each task is given the other's only.
    let (alpha, beta) = run(true);
    assert_eq!(alpha, ["kxbetaq"]);
    assert_eq!(beta, ["kxalphaq"]);
    assert_eq!(
        records_of(&p.path().join("results/experience/experience.yaml")).len(),
        2
    );
}

#[test]
#[cfg_attr(skip_desktop, ignore = "UFO_BATCH_SKIP_TESTS: needs desktop")]
fn the_app_agent_is_given_the_records_of_its_app_and_saves_its_subtask() {
    use crate::desktop_agents::{app, host_finish, on, select};
    crate::desktop::desktop_stack();
    let p = llm_project();
    p.file(
        "ufo-batch.toml",
        "[llm]\nmodel = \"test-model\"\ntimeout = \"5s\"\nvision = false\n",
    );
    // Records as UFO writes them on Windows: Notepad's, and Word's with the same words.
    let example = |f: &str| {
        json!({"Observation": "", "Thought": "", "ControlLabel": "3", "ControlText": "Text editor",
               "Function": f, "Args": {}, "Status": "FINISH", "Plan": "<FINISH>", "Comment": ""})
    };
    p.file(
        "exp/experience.yaml",
        &serde_norway::to_string(&json!({
            "example0": {"example": example("texts"), "Tips": "- the note is in the Edit control",
                         "request": "Read the note in the editor", "Sub-task": "Read the note in the editor",
                         "app_list": ["notepad.exe"]},
            "example1": {"example": example("select_text"), "Tips": "- a Word tip",
                         "request": "Read the note in the document", "Sub-task": "Read the note in the document",
                         "app_list": ["WINWORD.EXE"]},
        }))
        .unwrap(),
    );
    p.file("files/exp-note.txt", "first line\n");
    p.task(
        "note.json",
        json!({"task": "Read the note kxnoteq", "object": "exp-note.txt", "app": "notepad",
               "evaluate": [{"type": "command", "run": "true"}]}),
    );
    let mock = MockLlm::start();
    mock.script_key(
        "kxnoteq",
        vec![
            select("exp-note", "ASSIGN", "Read the note kxnoteq"),
            on("", "Edit", "texts", json!({}), "CONTINUE"),
            Reply::Content(app("", json!({}), "FINISH")),
            host_finish(),
            summary("", "- read it with texts"),
        ],
    );
    let url = mock.url();
    p.run(&[
        "--llm-base-url",
        &url,
        "--experience",
        "exp",
        "--save-experience",
        "passed",
        "--experience-dir",
        "saved",
    ])
    .expect_code(0);
    let requests = mock.received_key("kxnoteq");
    // The HostAgent is given nothing (as UFO's); the AppAgent Notepad's record only.
    assert!(!system_prompt(&requests[0].body).contains("Response Examples"));
    let app_system = system_prompt(&requests[1].body);
    assert!(
        app_system.contains("<## Response Examples:>"),
        "{app_system}"
    );
    assert!(
        app_system.contains("- the note is in the Edit control"),
        "{app_system}"
    );
    assert!(!app_system.contains("a Word tip"), "{app_system}");
    let status = crate::helpers::read_json(&p.path().join("results/proj/note/status.json"));
    assert_eq!(
        status["experience"]["given"][0]["agent"], "AppAgent",
        "{status}"
    );
    assert_eq!(status["experience"]["given"][0]["key"], "example0");
    assert_eq!(
        status["experience"]["saved"],
        json!(["example0"]),
        "{status}"
    );
    // Its record names its app as a record of UFO's does, so UFO's Notepad finds it.
    let saved = records_of(&p.path().join("saved/experience.yaml"));
    let apps = saved["example0"]["app_list"].as_array().unwrap();
    assert_eq!(apps[0], "notepad", "{apps:?}");
    assert_eq!(saved["example0"]["request"], "Read the note kxnoteq");
}

#[test]
fn experience_is_never_saved_in_a_run_folder_nor_through_a_link() {
    let p = Project::new();
    plans(&p, 1, "0");
    p.run(&[]).expect_code(0);
    for args in [
        vec![
            "--save-experience",
            "passed",
            "--experience-dir",
            "results/proj/exp/deeper",
        ],
        // The run's own folder is the default experience folder's name.
        vec!["--save-experience", "passed", "--name", "experience"],
    ] {
        let out = p.run(&args);
        assert_eq!(out.code, 2, "{args:?}: {}", out.stderr);
        assert!(
            out.stderr
                .contains("which --fresh deletes whole; save experience elsewhere"),
            "{args:?}: {}",
            out.stderr
        );
    }
    // A refused run leaves no folder it made behind, whatever refused it (here the
    // folder retrieved from is not there).
    let out = p.run(&[
        "--save-experience",
        "passed",
        "--experience-dir",
        "fresh/deeper",
        "--experience",
        "nowhere",
    ]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    for made in ["results/proj/exp", "results/experience", "fresh"] {
        assert!(!p.path().join(made).exists(), "{made} was left behind");
    }
    std::fs::create_dir_all(p.path().join("linked")).unwrap();
    std::os::unix::fs::symlink("/etc/hostname", p.path().join("linked/experience.yaml")).unwrap();
    let out = p.run(&["--save-experience", "passed", "--experience-dir", "linked"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("a link (saving would replace it with a file)"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_task_that_could_not_be_saved_is_said_on_the_console_not_only_in_the_report() {
    // The summarizer answers what is not a summary, every time.
    let mock = MockLlm::start();
    let mut replies = vec![finish("done")];
    replies.extend(vec![Reply::Content("I would rather not.".into()); 6]);
    mock.script_key("kxnosumq", replies);
    let p = llm_project();
    p.task(
        "touch.json",
        json!({"request": "Say done kxnosumq", "files": {"a.txt": "x"},
               "evaluate": [{"type": "file_equals", "path": "a.txt", "content": "x"}]}),
    );
    let out = p.run(&["--llm-base-url", &mock.url(), "--save-experience", "passed"]);
    out.expect_code(0);
    let status = out.status("touch");
    let why = status["experience"]["not_saved"].as_str().unwrap();
    let line = out
        .stderr
        .lines()
        .find(|l| l.starts_with("warning: 1 task could not be saved as experience"))
        .unwrap_or_else(|| panic!("no warning on the console:\n{}", out.stderr));
    assert!(line.contains("touch: "), "{line}");
    assert!(line.contains(&why[..why.len().min(40)]), "{line}\n{why}");
    // The one-line result is on standard output (a pipe here), as the console ends.
    let last = out.stderr.lines().last().unwrap();
    assert_eq!(out.stdout.trim_end(), last, "{}", out.stdout);
    assert!(last.starts_with("1 task: 1 passed"), "{last}");
}
