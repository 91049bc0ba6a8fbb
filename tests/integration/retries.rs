//! `--retries N` retries an attempt that ended in an infrastructure error (here: the
//! LLM unreachable after its own HTTP retries), never one that failed; every attempt
//! and its error stay in status.json.

use serde_json::json;

use crate::llm::{llm_project, run_with};
use crate::mock_llm::{MockLlm, Reply, action, finish, marker};

fn down() -> Reply {
    Reply::Status {
        code: 502,
        retry_after: None,
        body: "{\"error\": {\"message\": \"bad gateway\"}}".into(),
    }
}

#[test]
fn an_unreachable_llm_is_retried_and_a_failure_is_not() {
    let mock = MockLlm::start();
    // max_retries = 3 in llm_project: 4 refused requests exhaust the first attempt.
    mock.script(
        "flaky",
        vec![
            down(),
            down(),
            down(),
            down(),
            action("write_file", json!({"path": "a", "content": "a"}), "FINISH"),
        ],
    )
    .script("fails", vec![finish("gave up"), finish("gave up")]);
    let p = llm_project();
    p.task("flaky.json", json!({"request": format!("x {}", marker("flaky")), "evaluate": [{"type": "file_exists", "path": "a"}]}))
        .task("fails.json", json!({"request": format!("y {}", marker("fails")), "evaluate": [{"type": "file_exists", "path": "nope"}]}));
    let out = run_with(&p, &mock, &["--retries", "2"]);
    out.expect_code(1);
    let flaky = out.status("flaky");
    assert_eq!(flaky["status"], "passed", "{flaky}");
    let attempts = flaky["attempts"].as_array().unwrap();
    assert_eq!(attempts.len(), 2);
    assert_eq!(attempts[0]["status"], "error");
    assert!(
        attempts[0]["error"]
            .as_str()
            .unwrap()
            .starts_with("the LLM was unreachable after 4 attempts"),
        "{flaky}"
    );
    assert_eq!(attempts[1]["status"], "passed");
    assert!(
        out.stderr
            .contains("RETRY   flaky (attempt 1 ended in error: the LLM was unreachable"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("PASS    flaky") && out.stderr.contains("[attempt 2]"),
        "{}",
        out.stderr
    );
    // The first attempt's files are kept.
    assert!(
        p.path()
            .join("results/proj/flaky/attempts/1/task.log")
            .exists()
    );
    // The task's page links them.
    let page = out.task_file("flaky", "task.html").replace("&#x2f;", "/");
    assert!(
        page.contains(r#"<a href="attempts/1/">attempts/1/</a>"#),
        "{page}"
    );
    let fails = out.status("fails");
    assert_eq!(
        (
            fails["status"].as_str(),
            fails["attempts"].as_array().unwrap().len()
        ),
        (Some("failed"), 1)
    );
    let csv = std::fs::read_to_string(out.run_dir("proj").join("summary.csv")).unwrap();
    assert!(
        csv.lines()
            .any(|l| l.starts_with("flaky,FromFileSession,passed,yes,2,")),
        "{csv}"
    );
}
