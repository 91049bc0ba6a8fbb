//! What a task, a task file, a plan or a model names is touched with the task's rights,
//! in every sandbox mode: the runner follows no link a task left (dangling, to a host
//! file, to a folder, swapped in a tight loop), copies no object from outside the task
//! file's project, reads no more of a task's output than a bound, shows control codes
//! instead of obeying them, and refuses `files` it cannot write as the task file's fault.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::helpers::{Project, read_json};

/// Every sandbox mode; the test fails without bubblewrap (`scripts/setup-tests.sh`
/// installs it).
fn sandbox_modes() -> Vec<&'static str> {
    let bwrap = std::process::Command::new("bwrap")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    crate::helpers::require_stack("bwrap", bwrap, "apt-get install bubblewrap");
    vec!["none", "jail", "landlock", "bwrap"]
}

/// An action expected to fail.
fn failing(action: &str, parameters: Value) -> Value {
    json!({"action": action, "parameters": parameters, "expect": {"status": "failure"}})
}

fn command(line: &str) -> Value {
    json!({"action": "execute_command", "parameters": {"command": line}})
}

/// A folder outside the project holding a host file, as an attacker would aim at.
struct Host {
    dir: PathBuf,
}

impl Host {
    fn new(p: &Project) -> Self {
        let dir = p.path().parent().unwrap().join("host");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("target.txt"), "HOST-SECRET\n").unwrap();
        Self { dir }
    }

    fn path(&self, name: &str) -> String {
        self.dir.join(name).display().to_string()
    }

    /// The host folder is as the test made it: one file, unchanged.
    #[track_caller]
    fn untouched(&self, mode: &str) {
        let names: Vec<String> = std::fs::read_dir(&self.dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["target.txt"], "{mode}: the host folder changed");
        assert_eq!(
            std::fs::read_to_string(self.dir.join("target.txt")).unwrap(),
            "HOST-SECRET\n",
            "{mode}: the host file changed"
        );
    }
}

/// Every file of a task's results folder but its workspace, as text.
fn results_text(dir: &Path) -> String {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .flatten()
        .filter(|e| {
            e.file_type().is_file() && !e.path().components().any(|c| c.as_os_str() == "workspace")
        })
        .map(|e| String::from_utf8_lossy(&std::fs::read(e.path()).unwrap_or_default()).into_owned())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Links a task makes (dangling, to a host file, to a host folder, to the runner's own
/// config file) are never written or read through, in any sandbox mode; the config a task
/// tried to plant does not exist, so the next run is as confined as this one.
#[test]
#[cfg_attr(skip_bwrap, ignore = "UFO_BATCH_SKIP_TESTS: needs bwrap")]
fn the_runner_follows_no_link_a_task_makes_in_any_sandbox_mode() {
    for mode in sandbox_modes() {
        let p = Project::new();
        let host = Host::new(&p);
        let planted = p.path().join("ufo-batch.toml");
        p.task(
            "links.json",
            json!({"request": "write and read through links", "actions": [
                command(&format!(
                    "ln -s {} dangling && ln -s {} existing && ln -s {} up && ln -s {} planted && echo in > real.txt && ln -s real.txt inside",
                    host.path("new.txt"), host.path("target.txt"), host.dir.display(), planted.display()
                )),
                failing("write_file", json!({"path": "dangling", "content": "x"})),
                failing("write_file", json!({"path": "existing", "content": "x", "append": true})),
                failing("write_file", json!({"path": "up/new.txt", "content": "x"})),
                failing("write_file", json!({"path": "up/deeper/new.txt", "content": "x"})),
                failing("write_file", json!({"path": "planted", "content": "[sandbox]\nmode = \"none\"\n"})),
                failing("write_file", json!({"path": "inside", "content": "x"})),
                failing("read_file", json!({"path": "existing"})),
                failing("read_file", json!({"path": "up/target.txt"})),
                failing("list_dir", json!({"path": "up"})),
                failing("execute_command", json!({"command": "true", "cwd": "up"}))
            ], "evaluate": [
                {"type": "file_contains", "path": "existing", "pattern": "HOST"}
            ]}),
        );
        p.task(
            "checks.json",
            json!({"request": "checks through links", "actions": [
                command(&format!("ln -s {} doc.txt && ln -s {} up", host.path("target.txt"), host.dir.display()))
            ], "evaluate": [
                {"type": "file_equals", "path": "doc.txt", "content": "anything"},
                {"type": "document_contains", "path": "doc.txt", "pattern": "HOST"},
                {"type": "file_exists", "path": "up/target.txt"}
            ]}),
        );
        let out = p.run(&["--sandbox", mode]);
        out.expect_code(1);
        host.untouched(mode);
        assert!(!planted.exists(), "{mode}: a config was planted");
        let links = out.status("links");
        assert_eq!(links["status"], "failed", "{mode}: {links}");
        // Every step went as recorded (each refused): only the check failed.
        let why = links["error"].as_str().unwrap();
        assert!(
            why.contains("file_contains existing") && why.contains("symbolic link"),
            "{mode}: {why}"
        );
        let log = out.task_file("links", "response.log");
        assert_eq!(
            log.matches("links are not followed").count(),
            10,
            "{mode}: {log}"
        );
        assert!(
            log.contains("cwd `up` is not a folder of the workspace"),
            "{mode}"
        );
        let checks = out.status("checks");
        let why = checks["error"].as_str().unwrap();
        assert!(why.contains("symbolic link"), "{mode}: {why}");
        let evaluation: Value =
            serde_json::from_str(&out.task_file("checks", "evaluation.log")).unwrap();
        let scores = evaluation["sub_scores"].as_array().unwrap();
        assert_eq!(scores.len(), 3, "{mode}: {evaluation}");
        for score in scores {
            assert_eq!(score["evaluation"], "no", "{mode}: {score}");
            assert!(
                score["detail"].as_str().unwrap().contains("symbolic link"),
                "{mode}: {score}"
            );
        }
        let all = results_text(&out.run_dir("proj"));
        assert!(
            !all.contains("HOST-SECRET"),
            "{mode}: the host file was read"
        );
        // The next run from the same folder is as confined as asked.
        let again = p.run(&["--sandbox", mode]);
        assert!(
            again.stderr.contains(&format!("sandbox {mode}")),
            "{}",
            again.stderr
        );
    }
}

/// A link swapped in a tight loop between a host file and a workspace file (and a
/// folder link between a host folder and a workspace folder), while 1,000 file tool calls
/// go through it: every call is refused, nothing outside changes, nothing is read.
#[test]
#[cfg_attr(skip_bwrap, ignore = "UFO_BATCH_SKIP_TESTS: needs bwrap")]
fn a_link_swapped_in_a_tight_loop_never_leads_out() {
    for mode in sandbox_modes() {
        let p = Project::new();
        let host = Host::new(&p);
        // `mv -T` renames over the link: it is always a link, to one place or the other.
        // (Under bubblewrap a command's background processes end with it: there the
        // links stay as they were made.)
        let swapper = format!(
            "(while :; do ln -sfn {t} a && mv -T a link; ln -sfn real.txt b && mv -T b link; \
              ln -sfn {d} c && mv -T c dirlink; ln -sfn realdir e && mv -T e dirlink; done) \
             >/dev/null 2>&1 &",
            t = host.path("target.txt"),
            d = host.dir.display()
        );
        let mut actions = vec![
            command(
                "echo in > real.txt && mkdir realdir && ln -s real.txt link && ln -s realdir dirlink",
            ),
            command(&swapper),
        ];
        for i in 0..250 {
            actions.push(failing(
                "write_file",
                json!({"path": "link", "content": format!("w{i}\n"), "append": true}),
            ));
            actions.push(failing("read_file", json!({"path": "link"})));
            actions.push(failing(
                "write_file",
                json!({"path": "dirlink/target.txt", "content": format!("d{i}\n")}),
            ));
            actions.push(failing("read_file", json!({"path": "dirlink/target.txt"})));
        }
        p.task("race.json", json!({"request": "race", "actions": actions}));
        let out = p.run(&["--sandbox", mode, "--timeout", "150s"]);
        out.expect_code(0);
        host.untouched(mode);
        assert_eq!(out.status("race")["steps"], 1002, "{mode}");
        let all = results_text(&out.run_dir("proj"));
        assert!(
            !all.contains("HOST-SECRET"),
            "{mode}: the host file was read"
        );
        assert_eq!(
            out.task_file("race", "workspace/real.txt"),
            "in\n",
            "{mode}: written through a link to the workspace"
        );
    }
}

/// An object named by an absolute path, by `..`, through a link in `files/` (or a
/// `files/` that is itself a link), or unreadable with the task's rights (another user's
/// file of mode 600 when the runner is root) is the task file's fault: `validate` says so,
/// and the run copies nothing.
#[test]
fn objects_come_only_from_the_project_and_with_the_tasks_rights() {
    let p = Project::new();
    let host = Host::new(&p);
    p.file("files/ok.txt", "fine\n");
    let private = p.path().join("files/private.txt");
    std::fs::write(&private, "PRIVATE\n").unwrap();
    let c = std::ffi::CString::new(private.to_str().unwrap()).unwrap();
    // SAFETY: chown and chmod of a file this test made. As root, another user's file of
    // mode 600; otherwise the test's own file of mode 000 (as unreadable without
    // privileges as the other user's is to a task).
    unsafe {
        if libc::geteuid() == 0 {
            assert_eq!(libc::chown(c.as_ptr(), 65534, 65534), 0);
            assert_eq!(libc::chmod(c.as_ptr(), 0o600), 0);
        } else {
            assert_eq!(libc::chmod(c.as_ptr(), 0o000), 0);
        }
    }
    std::os::unix::fs::symlink(
        host.dir.join("target.txt"),
        p.path().join("files/linked.txt"),
    )
    .unwrap();
    let read = |object: &str| {
        json!({"request": "read the object", "object": object, "actions": [
            {"action": "read_file", "parameters": {"path": "ok.txt"}}]})
    };
    p.task("ok.json", read("ok.txt"));
    p.task("absolute.json", read(&host.path("target.txt")));
    p.task("climbs.json", read("../../host/target.txt"));
    p.task("linked.json", read("linked.txt"));
    p.task("private.json", read("private.txt"));
    let out = p.cmd(&["validate", "tasks"]);
    out.expect_code(2);
    for (id, why) in [
        (
            "absolute",
            "is an absolute path; objects come only from the task file's own project",
        ),
        ("climbs", "leaves the task file's folder"),
        ("linked", "is a symbolic link"),
        ("private", "(objects are read with the task's rights)"),
    ] {
        let at = out
            .stdout
            .find(&format!("{id}.json"))
            .unwrap_or_else(|| panic!("{id}: {}", out.stdout));
        assert!(out.stdout[at..].contains(why), "{id}: {}", out.stdout);
    }
    let out = p.run(&["--retries", "2"]);
    out.expect_code(1);
    assert_eq!(out.status_of("ok"), "passed");
    for id in ["absolute", "climbs", "linked", "private"] {
        let status = out.status(id);
        assert_eq!(status["status"], "error", "{id}: {status}");
        assert_eq!(out.row(id)["attempts"], 0, "{id}: refused before it ran");
    }
    let all = results_text(&out.run_dir("proj"));
    assert!(
        !all.contains("HOST-SECRET") && !all.contains("PRIVATE"),
        "{all}"
    );
    // The object is kept beside the plan, which names it by its name: the plan replays.
    let dir = out.run_dir("proj").join("ok");
    assert_eq!(read_json(&dir.join("plan.json"))["object"], "ok.txt");
    assert_eq!(
        std::fs::read_to_string(dir.join("files/ok.txt")).unwrap(),
        "fine\n"
    );
    // Copied elsewhere with its files/ folder, as a regression suite keeps it.
    std::fs::create_dir_all(p.path().join("regression/files")).unwrap();
    std::fs::copy(dir.join("plan.json"), p.path().join("regression/ok.json")).unwrap();
    std::fs::copy(
        dir.join("files/ok.txt"),
        p.path().join("regression/files/ok.txt"),
    )
    .unwrap();
    let replay = p.cmd(&["run", "regression", "--progress", "lines"]);
    replay.expect_code(0);
    let replayed = read_json(&replay.run_dir("regression").join("ok/status.json"));
    assert_eq!(replayed["status"], "passed", "{replayed}");
}

/// `files` that `validate` refuses (a NUL, a name too long, a file where another needs a
/// folder, two keys for one file) and that a run could not write: an error of the task
/// file, never retried as the machine's.
#[test]
fn files_that_cannot_be_written_are_the_task_files_fault() {
    let p = Project::new();
    let long = "x".repeat(300);
    for (id, files) in [
        ("nul", json!({"a\u{0}b": "x"})),
        ("long", json!({long.clone(): "x"})),
        ("prefix", json!({"a": "x", "a/b": "y"})),
        ("twice", json!({"a/./b": "x", "a/b": "y"})),
    ] {
        p.task(
            &format!("{id}.json"),
            json!({"request": "r", "files": files, "actions": [command("true")]}),
        );
    }
    let out = p.cmd(&["validate", "tasks"]);
    out.expect_code(2);
    for why in [
        "holds a NUL character",
        "has a name of 300 bytes; file systems take at most 255",
        "`a` is a file, but `a/b` needs `a` to be a folder",
        "name the same file",
    ] {
        assert!(out.stdout.contains(why), "{why}: {}", out.stdout);
    }
    let out = p.run(&["--retries", "2"]);
    out.expect_code(1);
    for id in ["nul", "long", "prefix", "twice"] {
        let row = out.row(id);
        assert_eq!(row["status"], "error", "{id}: {row}");
        // Refused before it ran: no attempt, nothing to retry.
        assert_eq!(row["attempts"], 0, "{id}: {row}");
        let status = out.status(id);
        assert_eq!(status["blame"], "task_file", "{id}: {status}");
    }
}

/// A folder of a million entries: `list_dir` gives the first 1,000 by name and counts
/// the rest, and the runner's memory stays small.
#[test]
fn list_dir_on_a_million_entries_is_bounded() {
    // In memory: a million files take minutes to make on some disks. Landlock, not a
    // jail, which has a /dev of its own.
    let p = Project::in_memory();
    p.task(
        "many.json",
        json!({"request": "list", "actions": [
            command("mkdir many && cd many && seq -f f%07g 1000000 | xargs touch"),
            {"action": "list_dir", "parameters": {"path": "many"}}
        ]}),
    );
    let out = p.run(&["--timeout", "170s", "--sandbox", "landlock"]);
    out.expect_code(0);
    let log = out.task_file("many", "response.log");
    let last: Value = serde_json::from_str(log.lines().last().unwrap()).unwrap();
    let result = &last["action"][0]["result"]["result"];
    let entries = result["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 1000);
    assert_eq!(entries[0]["name"], "f0000001");
    assert_eq!(entries[999]["name"], "f0001000");
    assert_eq!(result["more"], 999_000);
    assert!(log.len() < 200_000, "response.log is {} bytes", log.len());
    let run = read_json(&out.run_dir("proj").join("run.json"));
    let peak = run["runner"]["peak_rss_kb"].as_u64().unwrap();
    assert!(peak < 100_000, "the runner peaked at {peak} KiB");
}

/// A document whose text is huge (slides full of control characters, a large text file
/// the task wrote): the check says so, and the runner's memory stays small.
#[test]
fn document_checks_keep_the_runner_small() {
    let p = Project::new();
    let mut deck = Vec::new();
    {
        use std::io::Write;
        let mut zip = zip::ZipWriter::new(std::io::Cursor::new(&mut deck));
        let options = zip::write::SimpleFileOptions::default();
        // Each slide under the reader's 64 MiB for one part; 24 million characters of
        // text in all, each six bytes as JSON.
        let run = format!("<a:p><a:r><a:t>{}</a:t></a:r></a:p>", "&#1;".repeat(4096));
        for slide in 1..=3 {
            zip.start_file(format!("ppt/slides/slide{slide}.xml"), options)
                .unwrap();
            write!(zip, r#"<p:sld xmlns:p="p" xmlns:a="a">"#).unwrap();
            for _ in 0..2000 {
                zip.write_all(run.as_bytes()).unwrap();
            }
            write!(zip, "</p:sld>").unwrap();
        }
        zip.finish().unwrap();
    }
    assert!(deck.len() < 2 << 20, "the deck is {} bytes", deck.len());
    // The deck is the task's object, beside its task file.
    std::fs::create_dir_all(p.path().join("tasks")).unwrap();
    std::fs::write(p.path().join("tasks/deck.pptx"), &deck).unwrap();
    p.task(
        "deck.json",
        json!({"request": "check a deck", "object": "deck.pptx", "actions": [command("true")],
               "evaluate": [{"type": "document_contains", "path": "deck.pptx", "pattern": "never"}]}),
    );
    p.task(
        "big.json",
        json!({"request": "check a big text", "actions": [
            command("head -c 67108864 /dev/zero | tr '\\0' '\\1' > big.txt")
        ], "evaluate": [
            {"type": "document_contains", "path": "big.txt", "pattern": "never"}
        ]}),
    );
    let out = p.run(&["--jobs", "2", "--eval", "checks"]);
    out.expect_code(1);
    for id in ["deck", "big"] {
        let status = out.status(id);
        let why = status["error"].as_str().unwrap();
        assert!(
            why.contains("MiB a check reads") || why.contains("within 1024 MiB of memory"),
            "{id}: {why}"
        );
    }
    let run = read_json(&out.run_dir("proj").join("run.json"));
    let peak = run["runner"]["peak_rss_kb"].as_u64().unwrap();
    assert!(peak < 100_000, "the runner peaked at {peak} KiB");
}

/// Control codes a command prints, in a failed setup, a failed replay step and a
/// `command` check, reach no terminal line and no text file raw; JSON keeps them exact.
#[test]
fn control_codes_are_shown_not_obeyed_in_every_text_channel() {
    let p = Project::new();
    let evil = r"printf '\033]0;owned\007\033[2J\000\233x' >&2; exit 3";
    p.task(
        "setup.json",
        json!({"request": "r", "setup": [command(evil)], "actions": [command("true")]}),
    );
    p.task(
        "step.json",
        json!({"request": "r\u{1b}[31m", "actions": [command(evil)]}),
    );
    p.task(
        "check.json",
        json!({"request": "r", "actions": [command("true")], "evaluate": [
            {"type": "command", "run": evil}
        ]}),
    );
    let out = p.run(&[]);
    out.expect_code(1);
    let raw = |text: &str| {
        text.chars()
            .any(|c| c.is_control() && c != '\n' && c != '\t' && c != '\r')
    };
    assert!(!raw(&out.stderr), "terminal: {:?}", out.stderr);
    assert!(out.stderr.contains("\\x1b]0;owned"), "{}", out.stderr);
    let run = out.run_dir("proj");
    for file in ["report.md", "summary.csv"] {
        let text = std::fs::read_to_string(run.join(file)).unwrap();
        assert!(!raw(&text), "{file}: {text:?}");
    }
    for id in ["setup", "step", "check"] {
        let text = out.task_file(id, "output.md");
        assert!(!raw(&text), "{id}/output.md: {text:?}");
    }
    assert!(out.task_file("step", "output.md").contains("\\x1b[2J"));
    // JSON keeps the exact text.
    let log = out.task_file("step", "response.log");
    assert!(log.contains("\\u001b]0;owned"), "{log}");
}

/// Counts out of bounds are refused with a message; a stdout closed early (`| head`)
/// ends a command quietly, its files written and its exit code kept.
#[test]
fn extreme_counts_and_a_closed_stdout() {
    let p = Project::new();
    p.task("a.json", crate::helpers::shell_plan("r", &["true"]));
    for (args, why) in [
        (
            vec!["--repeat", "4294967295"],
            "--repeat 4294967295 is too large: it may be at most 10000",
        ),
        (
            vec!["--jobs", "18446744073709551615"],
            "--jobs 18446744073709551615 is too large",
        ),
        (vec!["--retries", "1000"], "--retries 1000 is too large"),
    ] {
        let out = p.run(&args);
        out.expect_code(2);
        assert!(out.stderr.contains(why), "{args:?}: {}", out.stderr);
    }
    let out = p.run(&["--repeat", "2"]);
    out.expect_code(0);
    for (args, code) in [
        (vec!["validate", "tasks"], 0),
        (vec!["report", "results/proj"], 0),
        (
            vec!["compare", "results/proj", "results/proj", "--out", "cmp.md"],
            0,
        ),
        (vec!["run", "tasks", "--summary-json", "--name", "again"], 0),
        (vec!["tools"], 0),
    ] {
        let code_seen = run_with_stdout_closed(p.path(), &args);
        assert_eq!(code_seen, code, "{args:?}");
    }
    assert!(
        p.path().join("cmp.md").exists(),
        "compare --out wrote nothing"
    );
}

/// Runs the binary with its stdout a pipe whose reader is already gone; its exit code.
fn run_with_stdout_closed(cwd: &Path, args: &[&str]) -> i32 {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let status = std::process::Command::new(env!("CARGO_BIN_EXE_ufo-batch"))
        .args(args)
        .current_dir(cwd)
        .stdout(writer)
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap();
    use std::os::unix::process::ExitStatusExt;
    status
        .code()
        .unwrap_or_else(|| 128 + status.signal().unwrap_or(0))
}

/// `merge` copies a shard's regular files only: a link planted in a shard (`output.md`
/// pointing at a secret) is left out, and said to be.
#[test]
fn merge_copies_no_link_from_a_shard() {
    let p = Project::new();
    let host = Host::new(&p);
    p.task("a.json", crate::helpers::shell_plan("r", &["true"]));
    p.run(&["--name", "s"]).expect_code(0);
    let output = p.path().join("results/s/a/output.md");
    std::fs::remove_file(&output).unwrap();
    std::os::unix::fs::symlink(host.dir.join("target.txt"), &output).unwrap();
    let out = p.cmd(&["merge", "results/merged", "results/s"]);
    assert!(
        out.stdout.contains("not copied (a symbolic link)"),
        "{}",
        out.stdout
    );
    let merged = p.path().join("results/merged/a/output.md");
    let meta = std::fs::symlink_metadata(&merged);
    assert!(meta.is_err() || !meta.unwrap().file_type().is_symlink());
    let all = results_text(&p.path().join("results/merged"));
    assert!(!all.contains("HOST-SECRET"));
}

/// A runner started as root whose results are below a folder only another user may
/// enter (`sudo ufo-batch run --out ~/results`, a home of mode 700) still reaches its
/// tasks' workspaces: the handle on a workspace is opened with the runner's rights, what
/// is below it with the task's.
#[test]
fn a_workspace_below_a_private_folder_stays_in_reach() {
    let p = Project::new();
    let private = p.path().join("private");
    std::fs::create_dir(&private).unwrap();
    let c = std::ffi::CString::new(private.to_str().unwrap()).unwrap();
    // SAFETY: chown and chmod of a folder this test made.
    unsafe {
        if libc::geteuid() == 0 {
            assert_eq!(libc::chown(c.as_ptr(), 65534, 65534), 0);
        }
        assert_eq!(libc::chmod(c.as_ptr(), 0o700), 0);
    }
    p.task(
        "files.json",
        json!({"request": "use the file tools", "files": {"in/a.txt": "given\n"}, "actions": [
            {"action": "write_file", "parameters": {"path": "out/b.txt", "content": "made\n"}},
            {"action": "read_file", "parameters": {"path": "in/a.txt"}, "expect": {"status": "success"}},
            {"action": "list_dir", "parameters": {"path": "out"}}
        ], "evaluate": [{"type": "file_equals", "path": "out/b.txt", "content": "made"}]}),
    );
    let out = p.run(&["--out", "private/results"]);
    out.expect_code(0);
}
