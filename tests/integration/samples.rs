//! The sample plans shipped in `plans/` do what the README says: all pass but the two
//! meant to fail, which fail for the reason their request describes.

use crate::helpers::{read_json, run_binary};

#[test]
fn sample_plans_pass_except_the_failing_demos() {
    let plans = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("plans");
    let out_dir = tempfile::tempdir().unwrap();
    let plans_arg = plans.display().to_string();
    let out_arg = out_dir.path().display().to_string();
    let out = run_binary(
        out_dir.path(),
        &["run", &plans_arg, "--out", &out_arg, "--progress", "lines"],
        &[],
    );
    out.expect_code(1);
    let summary = read_json(&out_dir.path().join("plans/summary.json"));
    let rows = summary["tasks"].as_array().unwrap();
    assert!(rows.len() >= 12, "at least 12 sample plans");
    for row in rows {
        let id = row["id"].as_str().unwrap();
        let expected = if id.starts_with("failing/") {
            "failed"
        } else {
            "passed"
        };
        assert_eq!(row["status"], expected, "{id}: {}", row["error"]);
    }
    let wrong = read_json(&out_dir.path().join("plans/failing/wrong_total/status.json"));
    assert!(
        wrong["error"]
            .as_str()
            .unwrap()
            .contains("expected \"668.85\""),
        "{wrong}"
    );
    let diverge = read_json(
        &out_dir
            .path()
            .join("plans/failing/divergent_replay/status.json"),
    );
    assert!(
        diverge["error"]
            .as_str()
            .unwrap()
            .contains("diverged from the recording"),
        "{diverge}"
    );
}
