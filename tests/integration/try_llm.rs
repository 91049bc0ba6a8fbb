//! The README's LLM walkthrough with no key, run as written: `bash scripts/try-llm.sh`
//! plays the scripted agent (scripts/mock-agent.json) on the shipped mock server
//! and every sample request passes, with the judge, trajectories, tokens and costs. The
//! test gives the script the binaries `cargo test` built (UFO_BATCH, MOCK_LLM), since a
//! cargo build inside a test would wait for the build the test runs in.

use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::helpers::read_json;

/// The shipped mock server, as `cargo test` built it.
fn mock_binary() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    // target/<profile>/deps/integration-… → target/<profile>/examples/mock_llm
    let mock = exe
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .join("examples/mock_llm");
    assert!(
        mock.is_file(),
        "cargo test builds the examples: {}",
        mock.display()
    );
    mock
}

#[test]
#[cfg_attr(skip_desktop, ignore = "UFO_BATCH_SKIP_TESTS: needs desktop")]
fn the_scripted_llm_walkthrough_passes_every_sample_request() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mock = mock_binary();
    crate::desktop::desktop_stack();
    let out = tempfile::tempdir().unwrap();
    let ran = Command::new("bash")
        .arg(root.join("scripts/try-llm.sh"))
        .env("UFO_BATCH", env!("CARGO_BIN_EXE_ufo-batch"))
        .env("MOCK_LLM", &mock)
        .env("TRY_LLM_OUT", out.path())
        .output()
        .unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&ran.stdout),
        String::from_utf8_lossy(&ran.stderr)
    );
    assert!(ran.status.success(), "{said}");
    assert!(said.contains("(a script, not a model)"), "{said}");

    let run = out.path().join("try-llm");
    let summary = read_json(&run.join("summary.json"));
    let tasks = summary["tasks"].as_array().unwrap();
    assert_eq!(tasks.len(), 8, "{summary}");
    for t in tasks {
        assert_eq!(t["status"], "passed", "{t}");
        assert!(t["cost_usd"].as_f64().unwrap() > 0.0, "{t}");
    }
    // The task without checks was judged by the (scripted) LLM judge.
    let judged = std::fs::read_to_string(run.join("seed/judge_only/evaluation.log")).unwrap();
    assert!(judged.contains("\"evaluator\":\"llm\""), "{judged}");
    // A step plan ran one round per step, each a LinuxAgent conversation.
    let md = std::fs::read_to_string(run.join("ufo/count_lines_steps/output.md")).unwrap();
    assert!(md.contains("FollowerSession"), "{md}");
    assert!(
        md.contains("wc -l &lt; notes.txt") || md.contains("wc -l < notes.txt"),
        "{md}"
    );
    let host = std::fs::read_to_string(run.join("tasks/report_heading/response.log")).unwrap();
    for agent in ["HostAgent", "AppAgent"] {
        assert!(
            host.contains(&format!("\"agent_type\":\"{agent}\"")),
            "{host}"
        );
    }
    assert!(host.contains("save_as"), "{host}");
    // The operator, alone on the note and under the HostAgent in Writer.
    for (task, agents) in [
        ("tasks/note", &["\"agent_name\":\"OperatorAgent\""][..]),
        (
            "tasks/report_line",
            &[
                "\"agent_type\":\"HostAgent\"",
                "\"agent_name\":\"OperatorAgent/soffice\"",
            ][..],
        ),
    ] {
        let log = std::fs::read_to_string(run.join(task).join("response.log")).unwrap();
        for agent in agents {
            assert!(log.contains(agent), "{task}: {agent} not in {log}");
        }
    }
}

/// The shipped mock, playing `scripts/mock-agent.json`; killed when dropped.
struct Played(std::process::Child, String);

impl Played {
    fn start() -> Self {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut child = Command::new(mock_binary())
            .arg("--play")
            .arg(root.join("scripts/mock-agent.json"))
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut url = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut url)
            .unwrap();
        Self(child, url.trim().to_string())
    }
}

impl Drop for Played {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn the_scripted_agent_saves_experience_and_a_second_run_is_given_it() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mock = Played::start();
    let out = tempfile::tempdir().unwrap();
    let run = |name: &str, extra: &[&str]| {
        let ran = Command::new(env!("CARGO_BIN_EXE_ufo-batch"))
            .current_dir(root)
            .args([
                "run",
                "examples/requests/",
                "--config",
                "examples/mock-llm/ufo-batch.toml",
            ])
            .args([
                "--llm-base-url",
                &mock.1,
                "--progress",
                "lines",
                "--fresh",
                "--name",
                name,
            ])
            .arg("--out")
            .arg(out.path())
            .args(extra)
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&ran.stderr).into_owned();
        assert!(ran.status.success(), "{said}");
        assert!(!said.contains("could not be saved"), "{said}");
        read_json(&out.path().join(name).join("summary.json"))
    };
    let first = run("saving", &["--save-experience", "passed"]);
    let tasks = first["tasks"].as_array().unwrap();
    assert_eq!(tasks.len(), 4, "{first}");
    // Every task saved what it did, summarized by the scripted summarizer: the first
    // action with the arguments it ran with.
    for t in [
        "ufo/hello_file",
        "ufo/count_lines_steps",
        "seed/judge_only",
        "seed/list_csv_columns",
    ] {
        let s = read_json(&out.path().join("saving").join(t).join("status.json"));
        let saved = s["experience"]["saved"].as_array().map_or(0, Vec::len);
        assert!(saved >= 1, "{t}: {s}");
    }
    let yaml = std::fs::read_to_string(out.path().join("experience/experience.yaml")).unwrap();
    for wanted in [
        "write_file",
        "hello.txt",
        "execute_command",
        "wc -l",
        "mkdir -p archive",
        "head -n 1 people.csv",
    ] {
        assert!(yaml.contains(wanted), "{wanted}:\n{yaml}");
    }

    let dir = out.path().join("experience");
    let second = run("given", &["--experience", dir.to_str().unwrap()]);
    assert_eq!(
        second["experience"]["tasks_given"].as_u64().map(|n| n > 0),
        Some(true),
        "{second}"
    );
}
