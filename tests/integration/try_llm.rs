//! The README's LLM walkthrough with no key, run as written: `bash scripts/try-llm.sh`
//! plays the scripted agent (examples/mock-llm/agent.json) on the shipped mock server
//! and every sample request passes, with the judge, trajectories, tokens and costs. The
//! test gives the script the binaries `cargo test` built (UFO_BATCH, MOCK_LLM), since a
//! cargo build inside a test would wait for the build the test runs in.

use std::path::Path;
use std::process::Command;

use crate::helpers::read_json;

#[test]
fn the_scripted_llm_walkthrough_passes_every_sample_request() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
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
    let desktop = crate::desktop::desktop_stack();
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
    assert_eq!(tasks.len(), if desktop { 6 } else { 4 }, "{summary}");
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
    if desktop {
        let host = std::fs::read_to_string(run.join("tasks/report_heading/response.log")).unwrap();
        for agent in ["HostAgent", "AppAgent"] {
            assert!(
                host.contains(&format!("\"agent_type\":\"{agent}\"")),
                "{host}"
            );
        }
        assert!(host.contains("save_as"), "{host}");
    }
}
