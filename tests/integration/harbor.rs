//! ATIF trajectories and Harbor jobs, checked with Harbor's own code (harbor 0.25.0,
//! scripts/setup-harbor.sh): every `trajectory.json` of the sample plans and of an LLM run
//! passes Harbor's trajectory validator; `export --harbor` writes a job whose config and
//! result files validate as Harbor's `JobConfig`, `JobResult`, `TrialConfig` and
//! `TrialResult`; and `harbor view` started on it lists the run with its trials, mean and
//! cost and serves a trial's trajectory (and, for a desktop run, a screenshot).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::helpers::{free_port, read_json, require_stack, run_binary};
use crate::llm::{llm_project, run_with};
use crate::mock_llm::{MockLlm, action, marker, verdict};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Harbor's venv; a test without it fails naming the script (`helpers::require_stack`).
pub(crate) fn harbor_python() -> PathBuf {
    let python = root().join("target/harbor/venv/bin/python");
    require_stack("harbor", python.is_file(), "bash scripts/setup-harbor.sh");
    python
}

/// Runs scripts/harbor-check.py; asserts Harbor found no error and checked something.
pub(crate) fn harbor_check(python: &Path, args: &[&str]) -> Value {
    let out = Command::new(python)
        .arg(root().join("scripts/harbor-check.py"))
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["errors"], json!({}), "Harbor's own checks: {v:#}");
    assert!(v["checked"].as_u64().unwrap() > 0, "{v}");
    v
}

/// Every `trajectory.json` under `dir`.
pub(crate) fn trajectories(dir: &Path) -> Vec<String> {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .flatten()
        .filter(|e| {
            e.file_name() == "trajectory.json"
                && !e.path().components().any(|c| c.as_os_str() == "attempts")
        })
        .map(|e| e.path().display().to_string())
        .collect()
}

/// The sample plans, run into a temporary folder; (the folder, the run dir).
fn sample_run() -> (tempfile::TempDir, PathBuf) {
    let out_dir = tempfile::tempdir().unwrap();
    let plans = root().join("plans").display().to_string();
    let out = run_binary(
        out_dir.path(),
        &[
            "run",
            &plans,
            "--out",
            out_dir.path().to_str().unwrap(),
            "--progress",
            "lines",
        ],
        &[],
    );
    out.expect_code(1);
    let run = out_dir.path().join("plans");
    (out_dir, run)
}

#[test]
#[cfg_attr(skip_harbor, ignore = "UFO_BATCH_SKIP_TESTS: needs harbor")]
fn the_sample_plans_trajectories_are_valid_atif_and_report_rebuilds_them_alike() {
    let python = harbor_python();
    let (_keep, run) = sample_run();
    let files = trajectories(&run);
    assert!(files.len() >= 12, "{files:?}");
    let mut args = vec!["trajectory"];
    args.extend(files.iter().map(String::as_str));
    assert_eq!(harbor_check(&python, &args)["checked"], files.len());
    // A replayed step with its tool calls and results, and the verdict last.
    let t = read_json(&run.join("failing/wrong_total/trajectory.json"));
    assert_eq!(t["schema_version"], "ATIF-v1.7");
    assert_eq!(t["session_id"], "failing/wrong_total");
    assert_eq!(t["agent"]["name"], "ufo-batch");
    let steps = t["steps"].as_array().unwrap();
    assert_eq!(steps[0]["source"], "user");
    let acted = steps.iter().find(|s| s["tool_calls"].is_array()).unwrap();
    assert_eq!(acted["source"], "agent");
    assert_eq!(
        acted["observation"]["results"][0]["source_call_id"],
        acted["tool_calls"][0]["tool_call_id"]
    );
    let last = steps.last().unwrap();
    assert_eq!(
        (last["source"].as_str(), last["extra"]["complete"].as_str()),
        (Some("system"), Some("no"))
    );
    assert_eq!(t["final_metrics"]["total_steps"], steps.len());
    // `report` renders it again from the stored steps, the same bytes.
    let before = std::fs::read(run.join("failing/wrong_total/trajectory.json")).unwrap();
    std::fs::remove_file(run.join("failing/wrong_total/trajectory.json")).unwrap();
    let report = run_binary(
        run.parent().unwrap(),
        &["report", run.to_str().unwrap()],
        &[],
    );
    report.expect_code(0);
    assert_eq!(
        std::fs::read(run.join("failing/wrong_total/trajectory.json")).unwrap(),
        before
    );
}

#[test]
#[cfg_attr(skip_harbor, ignore = "UFO_BATCH_SKIP_TESTS: needs harbor")]
fn an_llm_runs_trajectory_has_its_model_tokens_cost_and_judge() {
    let python = harbor_python();
    let mock = MockLlm::start();
    mock.script(
        "poem",
        vec![action(
            "write_file",
            json!({"path": "poem.txt", "content": "roses\n"}),
            "FINISH",
        )],
    )
    .judge("poem", vec![verdict("yes", "poem.txt holds a poem")]);
    let p = llm_project();
    p.task(
        "poem.json",
        json!({"request": format!("Write a poem to poem.txt {}", marker("poem"))}),
    );
    let out = run_with(&p, &mock, &[]);
    out.expect_code(0);
    let file = out.run_dir("proj").join("poem/trajectory.json");
    harbor_check(&python, &["trajectory", file.to_str().unwrap()]);
    let t = read_json(&file);
    assert_eq!(t["agent"]["model_name"], "test-model");
    let steps = t["steps"].as_array().unwrap();
    let agent = &steps[1];
    assert_eq!(
        (agent["source"].as_str(), agent["model_name"].as_str()),
        (Some("agent"), Some("test-model"))
    );
    assert_eq!(agent["tool_calls"][0]["function_name"], "write_file");
    assert_eq!(agent["tool_calls"][0]["arguments"]["path"], "poem.txt");
    assert!(
        agent["metrics"]["prompt_tokens"].as_u64().unwrap() > 0,
        "{agent}"
    );
    let judge = steps.last().unwrap();
    assert_eq!(
        (
            judge["source"].as_str(),
            judge["message"].as_str(),
            judge["extra"]["agent"].as_str()
        ),
        (
            Some("agent"),
            Some("poem.txt holds a poem"),
            Some("EvaluationAgent")
        )
    );
    let status = out.status("poem");
    assert_eq!(
        t["final_metrics"]["total_prompt_tokens"],
        status["usage"]["prompt_tokens"]
    );
    assert_eq!(t["final_metrics"]["total_cost_usd"], status["cost_usd"]);
}

/// `harbor view DIR --jobs` on loopback, killed when dropped.
pub(crate) struct Viewer {
    child: Child,
    port: u16,
}

impl Viewer {
    pub(crate) fn start(python: &Path, dir: &Path) -> Self {
        let port = free_port();
        let harbor = python.with_file_name("harbor");
        let child = Command::new(harbor)
            .args([
                "view",
                dir.to_str().unwrap(),
                "--jobs",
                "--host",
                "127.0.0.1",
                "--port",
            ])
            .arg(port.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let viewer = Self { child, port };
        let started = Instant::now();
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "harbor view did not listen"
            );
            std::thread::sleep(Duration::from_millis(200));
        }
        viewer
    }

    /// GET `path`: (status code, body).
    pub(crate) fn get(&self, path: &str) -> (u16, Vec<u8>) {
        let mut stream = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(30)))
            .unwrap();
        write!(
            stream,
            "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
        )
        .unwrap();
        let mut bytes = Vec::new();
        stream.read_to_end(&mut bytes).unwrap();
        let head_end = bytes.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
        let head = String::from_utf8_lossy(&bytes[..head_end]).to_string();
        let code = head.split(' ').nth(1).unwrap().parse().unwrap();
        let mut body = bytes[head_end + 4..].to_vec();
        if head
            .to_ascii_lowercase()
            .contains("transfer-encoding: chunked")
        {
            body = unchunk(&body);
        }
        (code, body)
    }

    pub(crate) fn json(&self, path: &str) -> Value {
        let (code, body) = self.get(path);
        assert_eq!(code, 200, "{path}: {}", String::from_utf8_lossy(&body));
        serde_json::from_slice(&body).unwrap()
    }
}

impl Drop for Viewer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn unchunk(mut body: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(line_end) = body.windows(2).position(|w| w == b"\r\n") {
        let size = usize::from_str_radix(String::from_utf8_lossy(&body[..line_end]).trim(), 16)
            .unwrap_or(0);
        if size == 0 {
            break;
        }
        out.extend_from_slice(&body[line_end + 2..line_end + 2 + size]);
        body = &body[line_end + 2 + size + 2..];
    }
    out
}

/// Exports `run` as a Harbor job under a new folder, checks it with Harbor's models and
/// opens it in `harbor view`; (the folder, the viewer, the job's name).
pub(crate) fn export_and_view(python: &Path, run: &Path) -> (tempfile::TempDir, Viewer, String) {
    let out = tempfile::tempdir().unwrap();
    let export = run_binary(
        out.path(),
        &[
            "export",
            "--harbor",
            out.path().to_str().unwrap(),
            run.to_str().unwrap(),
        ],
        &[],
    );
    export.expect_code(0);
    assert!(
        export.stdout.contains("as a Harbor job"),
        "{}",
        export.stdout
    );
    let job = std::fs::read_dir(out.path())
        .unwrap()
        .flatten()
        .next()
        .unwrap()
        .path();
    harbor_check(python, &["job", job.to_str().unwrap()]);
    let name = job.file_name().unwrap().to_str().unwrap().to_string();
    let viewer = Viewer::start(python, out.path());
    (out, viewer, name)
}

#[test]
#[cfg_attr(skip_harbor, ignore = "UFO_BATCH_SKIP_TESTS: needs harbor")]
fn harbor_view_lists_an_exported_run_with_its_trials_mean_and_cost() {
    let python = harbor_python();
    let (_keep, run) = sample_run();
    let summary = read_json(&run.join("summary.json"));
    let total = summary["totals"]["total"].as_u64().unwrap();
    let passed = summary["totals"]["passed"].as_u64().unwrap();
    let (_out, viewer, job) = export_and_view(&python, &run);
    let jobs = viewer.json("/api/jobs");
    let listed = jobs["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|j| j["name"] == job.as_str())
        .unwrap_or_else(|| panic!("{job} is not listed: {jobs}"));
    assert_eq!(listed["n_total_trials"], total, "{listed}");
    // The mean the viewer shows is the one the job's result gives: the pass rate.
    let mean = listed["evals"]
        .as_object()
        .and_then(|evals| evals.values().next())
        .map(|e| e["metrics"][0]["mean"].as_f64().unwrap())
        .unwrap_or_else(|| panic!("no mean: {listed}"));
    assert!(
        (mean - passed as f64 / total as f64).abs() < 1e-12,
        "{listed}"
    );
    assert_eq!(
        listed["total_cost_usd"], summary["totals"]["cost_usd"],
        "{listed}"
    );
    let trials = viewer.json(&format!("/api/jobs/{job}/trials"));
    let names: Vec<&str> = trials["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    // A task id with folders is one trial.
    assert!(names.contains(&"failing__wrong_total"), "{names:?}");
    assert_eq!(names.len() as u64, total);
    let trajectory = viewer.json(&format!(
        "/api/jobs/{job}/trials/failing__wrong_total/trajectory"
    ));
    assert_eq!(trajectory["session_id"], "failing/wrong_total");
    let result = viewer.json(&format!("/api/jobs/{job}/trials/failing__wrong_total"));
    assert_eq!(result["verifier_result"]["rewards"]["reward"], 0.0);
}

#[test]
#[cfg_attr(skip_harbor, ignore = "UFO_BATCH_SKIP_TESTS: needs harbor")]
fn export_copies_only_screenshots_named_by_a_tampered_log() {
    let (keep, run) = sample_run();
    let secret = keep.path().join("secret.png");
    std::fs::write(&secret, b"\x89PNG not yours").unwrap();
    // A response.log that names a file outside the task folder as its screenshot.
    let log = run.join("failing/wrong_total/response.log");
    let text = std::fs::read_to_string(&log).unwrap();
    let mut first: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    first["annotated_screenshot_path"] = json!("../../../secret.png");
    first["clean_screenshot_path"] = json!("action_step1.png/../../../../secret.png");
    // A screenshot's own name, but a link to the secret in the task folder.
    let mut second: Value = serde_json::from_str(text.lines().nth(1).unwrap()).unwrap();
    second["annotated_screenshot_path"] = json!("action_step2_annotated.png");
    std::os::unix::fs::symlink(
        &secret,
        run.join("failing/wrong_total/action_step2_annotated.png"),
    )
    .unwrap();
    let rest: Vec<&str> = text.lines().skip(2).collect();
    std::fs::write(&log, format!("{first}\n{second}\n{}", rest.join("\n"))).unwrap();
    let out = tempfile::tempdir().unwrap();
    let export = run_binary(
        out.path(),
        &[
            "export",
            "--harbor",
            out.path().to_str().unwrap(),
            run.to_str().unwrap(),
        ],
        &[],
    );
    export.expect_code(0);
    let agent = out.path().join("plans/failing__wrong_total/agent");
    let names: Vec<String> = std::fs::read_dir(&agent)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names,
        ["trajectory.json"],
        "nothing but the trajectory is copied"
    );
    assert!(
        walkdir::WalkDir::new(out.path())
            .into_iter()
            .flatten()
            .all(|e| e.file_name() != "secret.png"),
        "the file outside the task folder was not copied"
    );
    // The trajectory names no image it does not have, the paths of the log are not passed
    // on, and Harbor's own checks accept the job.
    let t = std::fs::read_to_string(agent.join("trajectory.json")).unwrap();
    assert!(!t.contains("secret") && !t.contains("\"image\""), "{t}");
    run_binary(keep.path(), &["report", run.to_str().unwrap()], &[]);
    let live = std::fs::read_to_string(run.join("failing/wrong_total/trajectory.json")).unwrap();
    assert!(!live.contains("secret"), "{live}");
    let python = harbor_python();
    harbor_check(
        &python,
        &["job", out.path().join("plans").to_str().unwrap()],
    );
}

#[test]
#[cfg_attr(skip_harbor, ignore = "UFO_BATCH_SKIP_TESTS: needs harbor")]
fn a_timeout_is_harbors_exception_not_a_zero_reward() {
    let python = harbor_python();
    let p = crate::helpers::Project::new();
    p.task(
        "slow/hang.json",
        json!({"request": "hang", "timeout": 1,
               "actions": [{"action": "execute_command", "parameters": {"command": "sleep 30", "timeout": 60}}]}),
    )
    .task("quick.json", crate::helpers::shell_plan("quick", &["true"]));
    let out = p.run(&["--jobs", "2"]);
    out.expect_code(1);
    let run = out.run_dir("proj");
    harbor_check(
        &python,
        &[
            "trajectory",
            run.join("slow/hang/trajectory.json").to_str().unwrap(),
        ],
    );
    let (keep, viewer, job) = export_and_view(&python, &run);
    let trial = read_json(&keep.path().join(&job).join("slow__hang/result.json"));
    assert_eq!(
        trial["exception_info"]["exception_type"], "TimeoutError",
        "{trial}"
    );
    assert!(
        trial["exception_info"]["exception_message"]
            .as_str()
            .unwrap()
            .starts_with("timed out after 1s"),
        "{trial}"
    );
    assert_eq!(
        trial["verifier_result"],
        Value::Null,
        "no score for a timeout"
    );
    assert!(
        !keep
            .path()
            .join(&job)
            .join("slow__hang/verifier/reward.json")
            .exists()
    );
    let listed = viewer.json(&format!("/api/jobs/{job}/trials"));
    let hang = listed["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "slow__hang")
        .unwrap();
    assert_eq!(
        (hang["error_type"].as_str(), hang["reward"].as_f64()),
        (Some("TimeoutError"), None)
    );
    let jobs = viewer.json("/api/jobs");
    // One of two trials passed; the timeout counts as no reward: Harbor's mean is 0.5.
    assert_eq!(
        jobs["items"][0]["evals"]["ufo-batch__adhoc"]["metrics"][0]["mean"],
        0.5
    );
    assert_eq!(jobs["items"][0]["n_errored_trials"], 1);
}

#[test]
fn export_replaces_its_own_earlier_job_and_nothing_else() {
    let (keep, run) = sample_run();
    let out = keep.path().join("harbor");
    let export = |code: i32| {
        let o = run_binary(
            keep.path(),
            &[
                "export",
                "--harbor",
                out.to_str().unwrap(),
                run.to_str().unwrap(),
            ],
            &[],
        );
        o.expect_code(code);
        o
    };
    export(0);
    // A trial left from an earlier export of more tasks is not listed again.
    std::fs::create_dir_all(out.join("plans/stale__task")).unwrap();
    export(0);
    assert!(!out.join("plans/stale__task").exists());
    assert!(out.join("plans/failing__wrong_total/result.json").exists());
    // A folder that is not an export is not touched.
    std::fs::remove_dir_all(out.join("plans")).unwrap();
    std::fs::create_dir_all(out.join("plans")).unwrap();
    std::fs::write(out.join("plans/notes.txt"), "mine").unwrap();
    let refused = export(2);
    assert!(
        refused
            .stderr
            .contains("already exists and is not a job ufo-batch exported"),
        "{}",
        refused.stderr
    );
    assert_eq!(
        std::fs::read_to_string(out.join("plans/notes.txt")).unwrap(),
        "mine"
    );
}

#[test]
fn a_fifo_in_place_of_a_log_is_named_and_the_export_goes_on() {
    let (keep, run) = sample_run();
    let log = run.join("failing/wrong_total/response.log");
    std::fs::remove_file(&log).unwrap();
    let made = Command::new("mkfifo").arg(&log).status().unwrap();
    assert!(made.success());
    let out = keep.path().join("harbor");
    let export = run_binary(
        keep.path(),
        &[
            "export",
            "--harbor",
            out.to_str().unwrap(),
            run.to_str().unwrap(),
        ],
        &[],
    );
    export.expect_code(1);
    assert!(
        export
            .stderr
            .contains("failing/wrong_total: its steps are not exported: ")
            && export.stderr.contains("it is a FIFO, not a regular file"),
        "{}",
        export.stderr
    );
    // The other trials are whole.
    assert!(
        out.join("plans/failing__divergent_replay/agent/trajectory.json")
            .exists()
    );
}
