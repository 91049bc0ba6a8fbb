//! What a newcomer meets in the first hour: `run --help` complete and grouped, a start
//! line that says when the runner is root, `validate` saying every problem of a file at
//! once with what was probably meant, `output.md` showing a command as written inside
//! code spans, and a failed replay's page giving one reason, in the right words.

use serde_json::json;

use crate::helpers::Project;

#[test]
fn run_help_names_every_sandbox_and_default_under_headings() {
    let p = Project::new();
    let out = p.cmd(&["run", "--help"]);
    out.expect_code(0);
    let help = out.stdout;
    for wanted in [
        "jail, landlock, bwrap or none (default: auto)",
        "(default: auto)",
        "(default: 30s)",
        "(default: 10m)",
        "(default: 60s)",
        "Results and concurrency:",
        "Tasks:",
        "LLM:",
        "Failures and stopping:",
        "Confinement:",
        "Scale-out:",
    ] {
        assert!(help.contains(wanted), "{wanted:?} not in:\n{help}");
    }
    // Where results go comes before what the LLM is, and scale-out last.
    let at = |s: &str| help.find(s).unwrap();
    assert!(at("--out <DIR>") < at("--model <MODEL>"));
    assert!(at("--model <MODEL>") < at("--shard <I/N>"));
}

#[test]
fn a_root_runner_says_what_that_means_at_the_start() {
    let p = Project::new();
    p.task("t.json", json!({"request": "r", "actions": []}));
    let out = p.run(&[]);
    out.expect_code(0);
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    assert_eq!(
        out.stderr.contains("WARNING: ufo-batch runs as root"),
        root,
        "{}",
        out.stderr
    );
    if root {
        assert!(out.stderr.contains("/etc/shadow"), "{}", out.stderr);
    }
}

#[test]
fn validate_says_every_problem_of_a_file_with_what_was_meant() {
    let p = Project::new();
    p.task(
        "typos.json",
        json!({
            "request": "r",
            "timout": 30,
            "actions": [
                {"action": "execute_comand", "parameters": {"command": "ls"}},
                {"action": "execute_command", "parameters": {}}
            ],
            "evaluate": [{"type": "file_exist", "path": "a.txt"}]
        }),
    );
    // Without a request the file has no shape, and the rest is still checked.
    p.task(
        "no_request.json",
        json!({"reqest": "r", "actions": [{"action": "read_fil", "parameters": {"path": "a"}}],
               "evaluate": [{"type": "file_contains", "path": "a", "pattern": "(unclosed"}]}),
    );
    let out = p.cmd(&["validate", "tasks"]);
    out.expect_code(2);
    let said = out.stdout + &out.stderr;
    for wanted in [
        "no_request.json:1:1: no request",
        "unknown key `reqest`: did you mean `request`?",
        "`actions[0].action`: unknown tool `read_fil`",
        "did you mean `read_file`?",
        "`evaluate[0].pattern`: invalid regular expression",
    ] {
        assert!(said.contains(wanted), "{wanted:?} not in:\n{said}");
    }
    for wanted in [
        "`file_exist` is not one of",
        "did you mean `file_exists`?",
        "unknown tool `execute_comand`",
        "did you mean `execute_command`?",
        "`actions[1].parameters`: `execute_command` needs the parameter `command`",
        "unknown key `timout` ignored (did you mean `timeout`?)",
        "2 bad files with 7 problems",
    ] {
        assert!(said.contains(wanted), "{wanted:?} not in:\n{said}");
    }
}

#[test]
fn output_md_shows_commands_as_written_in_code_spans() {
    let p = Project::new();
    p.task(
        "listing.json",
        json!({"request": "list <python> files & more", "actions": [
            {"action": "execute_command", "parameters": {"command": "ls *.py > list.txt"}}
        ]}),
    );
    let out = p.run(&[]);
    out.expect_code(1);
    let md = out.task_file("listing", "output.md");
    assert!(
        md.contains("`execute_command(command=\"ls *.py > list.txt\")` failed"),
        "{md}"
    );
    assert!(!md.contains("&gt; list.txt"), "{md}");
    // Outside code spans a task's words are still shown, not rendered.
    assert!(md.contains("list &lt;python&gt; files &amp; more"), "{md}");
}

#[test]
fn a_failed_replay_gives_one_reason_in_the_right_words() {
    let p = Project::new();
    // Recorded: the first step's output differs now; the check after it then fails
    // only because the step that makes its file did not run.
    p.task(
        "recorded.json",
        json!({"request": "count", "files": {"app.log": "E\nE\nE\n"}, "actions": [
            {"action": "execute_command", "parameters": {"command": "grep -c E app.log"},
             "expect": {"exit_code": 0, "stdout": "2"}},
            {"action": "execute_command", "parameters": {"command": "touch done.txt"}}
        ], "evaluate": [{"type": "file_exists", "path": "done.txt"}]}),
    );
    // Hand-written: nothing recorded, the command exits 2.
    p.task(
        "hand.json",
        json!({"request": "fail", "actions": [
            {"action": "execute_command", "parameters": {"command": "echo oops >&2; exit 2"}}
        ]}),
    );
    let out = p.run(&[]);
    out.expect_code(1);

    let md = out.task_file("recorded", "output.md");
    assert!(
        md.contains("- **Result**: ❌ diverged (the tool said success)"),
        "{md}"
    );
    assert!(!md.contains("✅ success"), "{md}");
    assert!(
        md.contains("the session failed first, so the checks judged an unfinished workspace"),
        "{md}"
    );
    // The divergence is said in the Why and once in its step, not again as an Error.
    assert_eq!(
        md.matches("stdout line 1 is \"3\", expected \"2\"").count(),
        2,
        "{md}"
    );
    let page = out.task_file("recorded", "task.html");
    assert!(page.contains("badge s-failed\">diverged"), "{page}");

    let md = out.task_file("hand", "output.md");
    assert!(
        md.contains("- **Why**: step 1 `execute_command(command=\"echo oops >&2; exit 2\")` failed: exit code 2"),
        "{md}"
    );
    assert!(!md.contains("diverged"), "{md}");
    assert!(!md.contains("expected success"), "{md}");
    assert_eq!(out.status_of("hand"), "failed");
}
