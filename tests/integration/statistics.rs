//! Statistics: the reference values checked against SciPy and statsmodels themselves;
//! `compare` on crafted run dirs (a significant regression, noise, too few tasks, runs
//! with `--repeat 5`) with each `--fail-on` and all three outputs; the pass rate's
//! interval in one run; `--eval both` with the scripted judge agreeing and disagreeing.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::helpers::{Project, read_json, require_stack};
use crate::llm::{llm_project, run_with};
use crate::mock_llm::{MockLlm, action, marker, verdict};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

#[test]
#[cfg_attr(skip_stats, ignore = "UFO_BATCH_SKIP_TESTS: needs stats")]
fn the_reference_values_are_what_scipy_and_statsmodels_say() {
    let python = root().join("target/stats/venv/bin/python");
    require_stack("stats", python.is_file(), "bash scripts/setup-stats.sh");
    let fixture = root().join("tests/data/stats-reference.json");
    let copy = tempfile::NamedTempFile::new().unwrap();
    std::fs::copy(&fixture, copy.path()).unwrap();
    let out = std::process::Command::new(&python)
        .arg(root().join("scripts/stats-reference.py"))
        .arg(copy.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let theirs: Value = serde_json::from_slice(&out.stdout).unwrap();
    let ours = read_json(&fixture);
    let mut compared = 0;
    for (kind, cases) in ours.as_object().unwrap() {
        for (i, case) in cases.as_array().unwrap().iter().enumerate() {
            for (key, value) in case["expected"].as_object().unwrap() {
                let computed = theirs[kind][i]["expected"][key].as_f64().unwrap();
                let stored = value.as_f64().unwrap();
                assert!(
                    (computed - stored).abs() < 1e-12,
                    "{kind}[{i}].{key}: the libraries say {computed}, the file {stored}"
                );
                compared += 1;
            }
        }
    }
    assert!(compared >= 40, "{compared} values compared");
}

/// A finished run dir at `dir` whose tasks passed or not as `tasks` says: (id, passed in
/// each repetition; one entry = no repetitions).
fn run_dir(dir: &Path, tasks: &[(String, Vec<bool>)]) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(
        dir.join("run.json"),
        json!({"tool": "ufo-batch", "version": "0.1.0", "name": dir.file_name().unwrap().to_str().unwrap(),
               "state": "finished", "invocation": 1,
               "started": "2026-11-20T10:00:00.000Z", "finished": "2026-11-20T10:05:00.000Z"})
        .to_string(),
    )
    .unwrap();
    for (id, runs) in tasks {
        for (i, passed) in runs.iter().enumerate() {
            let (id, repeat) = if runs.len() == 1 {
                (id.clone(), Value::Null)
            } else {
                (format!("{id}/rep-{}", i + 1), json!(i + 1))
            };
            let (status, error) = if *passed {
                ("passed", Value::Null)
            } else {
                ("failed", json!(format!("check failed: {id}")))
            };
            let record = json!({
                "id": id, "source": format!("tasks/{id}.json"), "source_hash": "0000000000000000",
                "shape": "recorded_plan", "session": "FollowerSession", "request": "r", "tags": [],
                "status": status, "complete": if *passed { "yes" } else { "no" }, "error": error,
                "attempts": [{"attempt": 1, "started": "2026-11-20T10:00:00.000Z",
                              "finished": "2026-11-20T10:00:01.000Z", "status": status, "error": error}],
                "started": "2026-11-20T10:00:00.000Z", "finished": "2026-11-20T10:00:01.000Z",
                "duration_s": 1.0, "rounds": 1, "steps": 1, "round_steps": [1],
                "usage": {"prompt_tokens": 0, "completion_tokens": 0}, "cost_usd": 0.0,
                "llm": {"calls": 0, "retries": 0, "bad_replies": 0}, "repeat": repeat,
            });
            let task = dir.join(&id);
            std::fs::create_dir_all(&task).unwrap();
            std::fs::write(task.join("status.json"), record.to_string()).unwrap();
        }
    }
}

/// `n` single-run tasks `t00`.. passed where `passed(i)`.
fn single(n: usize, passed: impl Fn(usize) -> bool) -> Vec<(String, Vec<bool>)> {
    (0..n)
        .map(|i| (format!("t{i:02}"), vec![passed(i)]))
        .collect()
}

/// Runs `compare A B` with `extra`; (exit code, stdout).
fn compare(p: &Project, extra: &[&str]) -> (i32, String) {
    let mut args = vec!["compare", "a", "b"];
    args.extend_from_slice(extra);
    let out = p.cmd(&args);
    (out.code, out.stdout.clone())
}

fn json_of(p: &Project, extra: &[&str]) -> Value {
    let mut args = vec!["--json"];
    args.extend_from_slice(extra);
    serde_json::from_str(&compare(p, &args).1).unwrap()
}

/// The exit codes under each `--fail-on`.
fn exit_codes(p: &Project) -> [i32; 3] {
    ["any", "significant", "never"].map(|on| compare(p, &["--fail-on", on]).0)
}

#[test]
fn a_significant_regression_is_told_from_noise_in_every_output() {
    let p = Project::new();
    // 40 tasks, 30 passed in A; in B 10 of those fail and one more passes.
    run_dir(&p.path().join("a"), &single(40, |i| i < 30));
    run_dir(&p.path().join("b"), &single(40, |i| i < 20 || i == 30));
    let (code, md) = compare(&p, &[]);
    assert_eq!(code, 1);
    let first = md.lines().nth(2).unwrap();
    assert_eq!(
        first,
        "**Pass rate 75.0% → 52.5% (−22.5 points, 95% CI −36.7 to −6.7), 10 tasks regressed, 1 fixed; \
         McNemar p = 0.01: a significant regression at α = 0.05.**"
    );
    assert!(md.contains("| **passed in A** | 20 | 10 |"), "{md}");
    assert!(md.contains("| **not passed in A** | 1 | 9 |"), "{md}");
    let v = json_of(&p, &[]);
    assert_eq!(v.as_object().unwrap().keys().next().unwrap(), "verdict");
    let st = &v["statistics"];
    assert_eq!(st["verdict"], "significant_regression");
    assert_eq!(st["test"], "mcnemar_exact");
    // Exactly 2 × P(X ≤ 1) for X ~ Binomial(11, 1/2) = 2 × 12 / 2048.
    assert!((st["p_value"].as_f64().unwrap() - 24.0 / 2048.0).abs() < 1e-12);
    assert_eq!(
        st["table"],
        json!({"both": 20, "only_a": 10, "only_b": 1, "neither": 9})
    );
    let page = p.path().join("cmp.html");
    compare(&p, &["--html", page.to_str().unwrap()]);
    let html = std::fs::read_to_string(&page).unwrap();
    let h1 = html.find("<h1>").unwrap();
    let verdict = html.find("a significant regression at α = 0.05").unwrap();
    let totals = html.find("<table>").unwrap();
    assert!(h1 < verdict && verdict < totals, "the verdict comes first");
    assert_eq!(exit_codes(&p), [1, 1, 0]);
    // A stricter level: no longer significant.
    let v = json_of(&p, &["--alpha", "0.01"]);
    assert_eq!(v["statistics"]["verdict"], "no_significant_change");
    assert_eq!(
        compare(&p, &["--alpha", "0.01", "--fail-on", "significant"]).0,
        0
    );
}

#[test]
fn noise_and_small_samples_are_not_called_regressions() {
    let p = Project::new();
    // 4 regressed, 3 fixed of 40: noise.
    run_dir(&p.path().join("a"), &single(40, |i| i < 30));
    run_dir(
        &p.path().join("b"),
        &single(40, |i| (i < 26) || (30..33).contains(&i)),
    );
    let (_, md) = compare(&p, &[]);
    assert!(
        md.contains("4 tasks regressed, 3 fixed; McNemar p = 1: no significant change at α = 0.05"),
        "{md}"
    );
    assert_eq!(exit_codes(&p), [1, 0, 0], "any still fails on a drop");

    // 3 of 4 tasks regressed: no outcome of 3 changes could reach 0.05.
    let small = Project::new();
    run_dir(&small.path().join("a"), &single(4, |_| true));
    run_dir(&small.path().join("b"), &single(4, |i| i == 0));
    let v = json_of(&small, &[]);
    assert_eq!(v["statistics"]["verdict"], "too_few_to_tell");
    assert!(
        v["verdict"].as_str().unwrap().ends_with(
            "too few tasks changed to tell a change from noise at α = 0.05 (at least 6 must change)."
        ),
        "{}",
        v["verdict"]
    );
    assert_eq!(exit_codes(&small), [1, 0, 0]);

    // At α = 0.0625 five changes all one way give p = 0.0625, which is not below it.
    let edge = Project::new();
    run_dir(&edge.path().join("a"), &single(5, |_| true));
    run_dir(&edge.path().join("b"), &single(5, |_| false));
    let v = json_of(&edge, &["--alpha", "0.0625"]);
    assert_eq!(v["statistics"]["verdict"], "too_few_to_tell", "{v}");
    assert!(
        v["verdict"]
            .as_str()
            .unwrap()
            .contains("(at least 6 must change)")
    );
    let bad = edge.cmd(&["compare", "a", "b", "--alpha", "0"]);
    bad.expect_code(2);
    assert!(
        bad.stderr.contains("is not a significance level"),
        "{}",
        bad.stderr
    );

    // Tasks that errored or were cancelled say nothing of the agent: left out.
    let infra = Project::new();
    run_dir(&infra.path().join("a"), &single(20, |_| true));
    run_dir(&infra.path().join("b"), &single(20, |i| i >= 10));
    for i in 0..10 {
        let path = infra.path().join(format!("b/t{i:02}/status.json"));
        let text = std::fs::read_to_string(&path)
            .unwrap()
            .replace("\"failed\"", "\"error\"");
        std::fs::write(&path, text).unwrap();
    }
    let v = json_of(&infra, &[]);
    assert_eq!(
        (
            v["statistics"]["left_out"].as_u64(),
            v["statistics"]["verdict"].as_str()
        ),
        (Some(10), Some("no_change"))
    );
    assert!(
        v["verdict"].as_str().unwrap().starts_with(
            "On the 10 tasks both runs have and judged (10 tasks left out: an infrastructure error, cancelled or unfinished in a run): "
        ),
        "{}",
        v["verdict"]
    );
    assert_eq!(exit_codes(&infra), [1, 0, 0]);

    // Nothing changed.
    let same = Project::new();
    run_dir(&same.path().join("a"), &single(5, |i| i < 3));
    run_dir(&same.path().join("b"), &single(5, |i| i < 3));
    let v = json_of(&same, &[]);
    assert_eq!(v["statistics"]["verdict"], "no_change");
    assert_eq!(exit_codes(&same), [0, 0, 0]);
}

#[test]
fn repetitions_are_tested_per_task_with_flaky_tasks_apart() {
    let p = Project::new();
    let reps = |k: usize| -> Vec<bool> { (0..10).map(|i| i < k).collect() };
    // (passes of 10 in A, in B) of each task.
    let plan: [(usize, usize); 12] = [
        (10, 10),
        (10, 10),
        (10, 10),
        (10, 10),
        (10, 0),
        (10, 2),
        (10, 0),
        (10, 4),
        (10, 0),
        (10, 0),
        (6, 4),
        (4, 6),
    ];
    let tasks = |pick: fn(&(usize, usize)) -> usize| -> Vec<(String, Vec<bool>)> {
        plan.iter()
            .enumerate()
            .map(|(i, x)| (format!("t{i:02}"), reps(pick(x))))
            .collect()
    };
    run_dir(&p.path().join("a"), &tasks(|x| x.0));
    run_dir(&p.path().join("b"), &tasks(|x| x.1));
    let v = json_of(&p, &[]);
    let st = &v["statistics"];
    assert_eq!(st["test"], "sign_flip_permutation");
    assert_eq!(st["verdict"], "significant_regression");
    // 8 tasks changed; 6 of the 256 sign patterns are as extreme.
    assert!((st["p_value"].as_f64().unwrap() - 6.0 / 256.0).abs() < 1e-12);
    let ids = |key: &str| -> Vec<String> {
        st[key]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t.get("id").unwrap_or(t).as_str().unwrap().to_string())
            .collect()
    };
    // Fisher's test on each changed task, Holm-adjusted over the 8: 10/10 → 4/10 (p =
    // 0.0108, × 3 = 0.0325) still counts; 6/10 → 4/10 does not.
    assert_eq!(
        ids("beyond_noise"),
        ["t04", "t05", "t06", "t07", "t08", "t09"],
        "{st}"
    );
    let t07 = &st["beyond_noise"][3];
    assert!(
        (t07["p_value"].as_f64().unwrap() - 3.0 * 0.010_835_913_312_693_5).abs() < 1e-9,
        "{t07}"
    );
    // Flaky tasks beyond their own noise are listed there, not as flaky.
    assert_eq!(ids("flaky"), ["t10", "t11"]);
    assert!(st.get("table").is_none());
    let (_, md) = compare(&p, &[]);
    assert!(
        md.contains("Mean per-task pass rate 91.7% → 46.7% (−45.0 points, 95% CI"),
        "{md}"
    );
    assert!(
        md.contains("| t04 | 10/10 (100%) | 0/10 (0%) | 0.0001 |"),
        "{md}"
    );
    assert!(md.contains("Flaky (passed in some repetitions"), "{md}");

    // One flaky task going from 3/5 to 2/5 is not a regression beyond noise.
    let reps = |k: usize| -> Vec<bool> { (0..5).map(|i| i < k).collect() };
    let flaky = Project::new();
    run_dir(
        &flaky.path().join("a"),
        &[("f".to_string(), reps(3)), ("s".to_string(), reps(5))],
    );
    run_dir(
        &flaky.path().join("b"),
        &[("f".to_string(), reps(2)), ("s".to_string(), reps(5))],
    );
    let v = json_of(&flaky, &[]);
    assert_eq!(v["statistics"]["verdict"], "too_few_to_tell");
    assert_eq!(v["statistics"]["beyond_noise"], json!([]));
    assert_eq!(exit_codes(&flaky), [1, 0, 0]);
}

#[test]
fn a_run_gives_its_pass_rate_with_wilsons_interval() {
    let p = Project::new();
    let dir: PathBuf = p.path().join("a");
    run_dir(&dir, &single(10, |i| i < 3));
    p.cmd(&["report", "a"]).expect_code(0);
    let summary = read_json(&dir.join("summary.json"));
    // statsmodels' proportion_confint(3, 10, method="wilson"): 0.1078 to 0.6032.
    assert_eq!(
        summary["totals"]["pass_rate_ci"],
        json!({"low": 0.1078, "high": 0.6032})
    );
    let md = std::fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(
        md.contains("**3 of 10 passed (30.0%; 95% CI 10.8% to 60.3%)**"),
        "{md}"
    );
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(html.contains("95% CI 10.8% to 60.3%"));

    let reps = Project::new();
    let dir = reps.path().join("a");
    let runs = |k: usize| -> Vec<bool> { (0..5).map(|i| i < k).collect() };
    run_dir(
        &dir,
        &[
            ("x".into(), runs(5)),
            ("y".into(), runs(2)),
            ("z".into(), runs(0)),
        ],
    );
    reps.cmd(&["report", "a"]).expect_code(0);
    let repeats = &read_json(&dir.join("summary.json"))["repeats"]["totals"];
    // y: 2 of 5, sample variance 2·3/(5·4) = 0.3; x and z never vary.
    assert_eq!(repeats["mean_task_variance"], json!(0.1));
    // Over the 3 tasks by their rates (1, 0.4, 0): statsmodels'
    // proportion_confint(1.4, 3, method="wilson") = 0.1111 to 0.8597.
    assert_eq!(
        repeats["pass_at_1_ci"],
        json!({"low": 0.1111, "high": 0.8597})
    );
    // Repetitions are not independent tasks: no interval over them as if they were.
    assert!(
        read_json(&dir.join("summary.json"))["totals"]
            .get("pass_rate_ci")
            .is_none()
    );
    let md = std::fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(md.contains("mean per-task variance 0.100"), "{md}");
}

#[test]
fn eval_both_measures_the_judge_against_the_checks() {
    let mock = MockLlm::start();
    let p = llm_project();
    // (task, writes the right file, the judge's verdict).
    let cases = [
        ("agree-pass", true, "yes"),
        ("agree-fail", false, "no"),
        ("judge-too-kind", false, "yes"),
        ("judge-too-strict", true, "no"),
        ("agree-pass-2", true, "yes"),
    ];
    for (name, right, says) in cases {
        let content = if right { "42\n" } else { "41\n" };
        mock.script(
            name,
            vec![action(
                "write_file",
                json!({"path": "answer.txt", "content": content}),
                "FINISH",
            )],
        )
        .judge(
            name,
            vec![verdict(says, &format!("the judge says {says} to {name}"))],
        );
        p.task(
            &format!("{name}.json"),
            json!({"request": format!("Write 42 to answer.txt {}", marker(name)),
                   "evaluate": [{"type": "file_equals", "path": "answer.txt", "content": "42\n"}]}),
        );
    }
    let out = run_with(&p, &mock, &["--eval", "both"]);
    out.expect_code(1);
    // The checks decided.
    assert_eq!(out.status("judge-too-kind")["status"], "failed");
    assert_eq!(out.status("judge-too-strict")["status"], "passed");
    assert_eq!(
        out.status("judge-too-strict")["judge"],
        json!({"complete": "no", "reason": "the judge says no to judge-too-strict"})
    );
    let eval: Value =
        serde_json::from_str(out.task_file("judge-too-kind", "evaluation.log").trim()).unwrap();
    assert_eq!(
        (
            eval["evaluator"].as_str(),
            eval["judge"]["complete"].as_str()
        ),
        (Some("checks"), Some("yes"))
    );
    // The judge's calls count toward the task.
    assert_eq!(out.status("agree-pass")["llm"]["calls"], 2);
    let a = &out.summary()["judge_agreement"];
    assert_eq!(
        a["confusion"],
        json!({"checks_passed_judge_yes": 2, "checks_passed_judge_no": 1, "checks_passed_judge_unsure": 0,
               "checks_failed_judge_yes": 1, "checks_failed_judge_no": 1, "checks_failed_judge_unsure": 0})
    );
    // By hand: observed 3/5 = 0.6; the checks pass 3/5, the judge says yes 3/5, so chance
    // gives 0.6·0.6 + 0.4·0.4 = 0.52; κ = (0.6 − 0.52) / (1 − 0.52) = 1/6.
    assert!(
        (a["kappa"].as_f64().unwrap() - 1.0 / 6.0).abs() < 1e-12,
        "{a}"
    );
    assert_eq!(a["disagreeing"], 2);
    assert_eq!(a["disagreements"][0]["id"], "judge-too-kind");
    assert_eq!(
        a["disagreements"][0]["checks_reason"].as_str().unwrap(),
        out.status("judge-too-kind")["error"].as_str().unwrap()
    );
    assert_eq!(
        a["disagreements"][1]["judge_reason"],
        "the judge says no to judge-too-strict"
    );
    let run = out.run_dir("proj");
    let md = std::fs::read_to_string(run.join("report.md")).unwrap();
    assert!(
        md.contains("The judge agreed with the checks on 3 of 5 tasks (60.0%), Cohen's κ = 0.17"),
        "{md}"
    );
    assert!(md.contains("| passed | 2 | 1 | 0 |"), "{md}");
    let html = std::fs::read_to_string(run.join("report.html")).unwrap();
    assert!(
        html.contains("The judge against the checks")
            && html.contains("the judge says yes to judge-too-kind")
    );
    // compare shows each run's agreement.
    let cmp = p.cmd(&["compare", "results/proj", "results/proj"]);
    assert!(
        cmp.stdout
            .contains("Run A: The judge agreed with the checks on 3 of 5 tasks"),
        "{}",
        cmp.stdout
    );
    // A judge that gives no verdict beside the checks' leaves the task as the checks
    // left it, with a warning.
    let mock = MockLlm::start();
    let p = llm_project();
    mock.script(
        "mute",
        vec![action(
            "write_file",
            json!({"path": "answer.txt", "content": "42\n"}),
            "FINISH",
        )],
    )
    .judge(
        "mute",
        vec![
            crate::mock_llm::Reply::Content("not json".into()),
            crate::mock_llm::Reply::Content("not json".into()),
            crate::mock_llm::Reply::Content("not json".into()),
            crate::mock_llm::Reply::Content("not json".into()),
            crate::mock_llm::Reply::Content("not json".into()),
        ],
    );
    p.task(
        "mute.json",
        json!({"request": format!("Write 42 to answer.txt {}", marker("mute")),
               "evaluate": [{"type": "file_equals", "path": "answer.txt", "content": "42\n"}]}),
    );
    let out = run_with(&p, &mock, &["--eval", "both"]);
    out.expect_code(0);
    let mute = out.status("mute");
    assert_eq!(mute["status"], "passed", "{mute}");
    assert!(mute.get("judge").is_none(), "{mute}");
    assert!(
        out.task_file("mute", "task.log")
            .contains("the LLM judge gave no verdict beside the checks'"),
        "{}",
        out.task_file("mute", "task.log")
    );
    assert!(out.summary().get("judge_agreement").is_none());

    // --eval both needs a model.
    let bare = Project::new();
    bare.task("t.json", json!({"request": "x"}));
    let out = bare.run(&["--eval", "both"]);
    out.expect_code(2);
    assert!(
        out.stderr
            .contains("--eval both needs an LLM: give --model"),
        "{}",
        out.stderr
    );
}

#[test]
fn compare_replaces_only_a_regular_file() {
    let p = Project::new();
    run_dir(&p.path().join("a"), &single(3, |_| true));
    run_dir(&p.path().join("b"), &single(3, |_| true));
    let target = p.path().join("precious.txt");
    std::fs::write(&target, "keep").unwrap();
    let link = p.path().join("link.md");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    for option in ["--out", "--html"] {
        let out = p.cmd(&["compare", "a", "b", option, "link.md"]);
        out.expect_code(2);
        assert!(
            out.stderr.contains("is not a regular file"),
            "{}",
            out.stderr
        );
    }
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep");
    // A regular file is replaced.
    std::fs::write(p.path().join("old.md"), "old").unwrap();
    p.cmd(&["compare", "a", "b", "--out", "old.md"])
        .expect_code(0);
    assert!(
        std::fs::read_to_string(p.path().join("old.md"))
            .unwrap()
            .starts_with("# ufo-batch compare")
    );
}

#[test]
fn a_repetition_in_error_leaves_the_tasks_other_repetitions_in() {
    let p = Project::new();
    let reps = |k: usize| -> Vec<bool> { (0..5).map(|i| i < k).collect() };
    run_dir(&p.path().join("a"), &[("t".to_string(), reps(5))]);
    run_dir(&p.path().join("b"), &[("t".to_string(), reps(4))]);
    // B's fifth repetition ended in an infrastructure error, not a failure.
    let path = p.path().join("b/t/rep-5/status.json");
    let text = std::fs::read_to_string(&path)
        .unwrap()
        .replace("\"failed\"", "\"error\"");
    std::fs::write(&path, text).unwrap();
    let v = json_of(&p, &[]);
    let st = &v["statistics"];
    assert_eq!(
        (st["tasks"].as_u64(), st["left_out"].as_u64()),
        (Some(1), Some(0)),
        "{st}"
    );
    assert_eq!(
        st["verdict"], "no_change",
        "4 of 4 judged repetitions passed: {st}"
    );
}

#[test]
fn tasks_missing_from_b_fail_the_gate_unless_allowed_and_are_said_first() {
    let p = Project::new();
    // A full baseline against one shard of it: the half B has is unchanged.
    run_dir(&p.path().join("a"), &single(20, |i| i % 4 != 0));
    let shard: Vec<_> = single(20, |i| i % 4 != 0).into_iter().take(8).collect();
    run_dir(&p.path().join("b"), &shard);
    let (code, md) = compare(&p, &[]);
    assert_eq!(code, 1, "{md}");
    assert_eq!(
        md.lines().nth(2).unwrap(),
        "**12 tasks of A missing from B (9 passed in A): the gate fails on them \
         (--allow-missing accepts a partial B).**"
    );
    assert_eq!(exit_codes(&p), [1, 1, 0]);
    let (code, md) = compare(&p, &["--allow-missing"]);
    assert_eq!(code, 0, "{md}");
    assert!(md.contains("accepted with --allow-missing"), "{md}");
    assert_eq!(
        compare(&p, &["--allow-missing", "--fail-on", "significant"]).0,
        0
    );
    let page = p.path().join("cmp.html");
    compare(&p, &["--html", page.to_str().unwrap()]);
    let html = std::fs::read_to_string(&page).unwrap();
    let line = html.find("12 tasks of A missing from B").unwrap();
    assert!(
        line < html.find("<table>").unwrap(),
        "said before the totals"
    );
    // A B with no tasks at all fails the gate too.
    std::fs::remove_dir_all(p.path().join("b")).unwrap();
    run_dir(&p.path().join("b"), &[]);
    assert_eq!(exit_codes(&p), [1, 1, 0]);
}
