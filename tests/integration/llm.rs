//! LLM-driven sessions against the loopback test server: a request solved through real
//! shell commands and then replayed with no server, step plans, the LLM judge, costs,
//! `--max-cost`, `--request`, and the unattended answers to PENDING and CONFIRM.

use serde_json::json;

use crate::helpers::{Output, Project, read_json};
use crate::mock_llm::{
    COMPLETION_TOKENS, MockLlm, PROMPT_TOKENS, Reply, action, finish, marker, verdict,
};

/// A project whose config talks to `mock` quickly (short timeouts and backoff) and
/// prices `test-model` at $1 per 1k prompt tokens and $2 per 1k completion tokens.
pub(crate) fn llm_project() -> Project {
    let p = Project::new();
    p.file(
        "ufo-batch.toml",
        "[llm]\nmodel = \"test-model\"\ntimeout = \"2s\"\nmax_retries = 3\nretry_base = \"20ms\"\nretry_max = \"2s\"\n\
         [llm.prices.\"test-model\"]\ninput = 1.0\noutput = 2.0\n",
    );
    p
}

pub(crate) fn run_with(p: &Project, mock: &MockLlm, extra: &[&str]) -> Output {
    let url = mock.url();
    let mut args = vec!["--llm-base-url", url.as_str()];
    args.extend_from_slice(extra);
    p.run(&args)
}

/// Cost of `calls` successful calls at the test price.
fn cost(calls: u64) -> f64 {
    calls as f64 * (PROMPT_TOKENS as f64 * 1.0 + COMPLETION_TOKENS as f64 * 2.0) / 1000.0
}

#[test]
fn a_request_is_solved_with_real_commands_and_its_plan_replays_without_the_llm() {
    let mock = MockLlm::start();
    mock.script(
        "sum",
        vec![
            action("execute_command", json!({"command": "awk '{s += $1} END {print s}' nums.txt > total.txt"}), "CONTINUE"),
            Reply::Content(format!("Here you go:\n```json\n{}\n```", json!({
                "observation": "total.txt written", "thought": "check it",
                "action": {"function": "read_file", "arguments": {"path": "total.txt"}, "status": "CONTINUE"},
                "plan": [], "comment": ""}))),
            finish("the total is 6"),
        ],
    );
    let p = llm_project();
    // UFO's layout: the object lives in files/ beside tasks/ and is copied in.
    p.file("files/nums.txt", "1\n2\n3\n");
    p.task(
        "sum.json",
        json!({"task": format!("Sum the numbers in nums.txt into total.txt {}", marker("sum")), "object": "nums.txt",
               "evaluate": [{"type": "file_equals", "path": "total.txt", "content": "6\n"}]}),
    );
    let out = run_with(&p, &mock, &[]);
    out.expect_code(0);
    let status = out.status("sum");
    assert_eq!(status["status"], "passed", "{status}");
    assert_eq!(status["session"], "FromFileSession");
    assert_eq!(status["steps"], 3);
    assert_eq!(status["usage"]["prompt_tokens"], 3 * PROMPT_TOKENS);
    assert_eq!(status["usage"]["completion_tokens"], 3 * COMPLETION_TOKENS);
    assert!(
        (status["cost_usd"].as_f64().unwrap() - cost(3)).abs() < 1e-9,
        "{status}"
    );
    assert_eq!(
        status["llm"],
        json!({"calls": 3, "retries": 0, "bad_replies": 0, "rate_limited": 0, "waited_s": 0.0})
    );

    // response.log keeps what UFO drops; output.md shows it.
    let first: serde_json::Value =
        serde_json::from_str(out.task_file("sum", "response.log").lines().next().unwrap()).unwrap();
    assert_eq!(first["agent_type"], "LinuxAgent");
    assert_eq!(first["thought"], "next I call execute_command");
    assert_eq!(first["observation"], "looked at the workspace");
    assert_eq!(first["plan"], json!(["check the result"]));
    assert_eq!(first["prompt_tokens"], PROMPT_TOKENS);
    let md = out.task_file("sum", "output.md");
    assert!(
        md.contains("- **Thought**: next I call execute_command"),
        "{md}"
    );
    assert!(md.contains("- **Comment**: the total is 6"), "{md}");
    assert!(md.contains("- **Cost**: $"), "{md}");

    // The model was told the tools and saw each result.
    let requests = mock.received_for("sum");
    let system = requests[0].body["messages"][0]["content"].as_str().unwrap();
    assert!(system.contains("`execute_command`"), "{system}");
    let second = requests[1].body["messages"].to_string();
    assert!(second.contains("Results of your last action"), "{second}");
    assert!(
        requests[0].body["messages"][1]["content"]
            .as_str()
            .unwrap()
            .contains("nums.txt (6 bytes)")
    );

    // The summary has tokens and cost.
    let csv = std::fs::read_to_string(out.run_dir("proj").join("summary.csv")).unwrap();
    let row = csv.lines().nth(1).unwrap();
    assert!(
        row.starts_with("sum,FromFileSession,passed,yes,1,1,3,"),
        "{row}"
    );
    assert!(
        row.contains(&format!(
            ",{},{},{}",
            3 * PROMPT_TOKENS,
            3 * COMPLETION_TOKENS,
            cost(3)
        )),
        "{row}"
    );
    assert!(
        out.stderr.contains(&format!(
            "; {} tokens, ${:.4}",
            3 * (PROMPT_TOKENS + COMPLETION_TOKENS),
            cost(3)
        )),
        "{}",
        out.stderr
    );

    // plan.json replays with no LLM at all: the server is gone, no --model.
    let plan = read_json(&out.run_dir("proj").join("sum/plan.json"));
    assert_eq!(plan["actions"].as_array().unwrap().len(), 2);
    assert_eq!(plan["actions"][0]["agent"], "LinuxAgent");
    assert_eq!(plan["actions"][0]["comment"], "next I call execute_command");
    drop(mock);
    assert_eq!(plan["object"], "nums.txt");
    let replay = Project::new();
    replay.file(
        "tasks/sum.json",
        &serde_json::to_string_pretty(&plan).unwrap(),
    );
    // The object comes along from the files/ folder kept beside the plan.
    replay.file("files/nums.txt", &out.task_file("sum", "files/nums.txt"));
    let again = replay.run(&[]);
    again.expect_code(0);
    assert_eq!(again.status("sum")["status"], "passed");
    assert_eq!(again.status("sum")["session"], "FollowerSession");
    // And the run folder itself replays.
    let from_run = p.cmd(&["run", "results/proj", "--progress", "lines"]);
    from_run.expect_code(0);
    assert!(
        from_run.stderr.contains("results/proj-replay"),
        "{}",
        from_run.stderr
    );
    let status = read_json(&p.path().join("results/proj-replay/sum/status.json"));
    assert_eq!(status["status"], "passed");
}

#[test]
fn a_step_plan_gets_one_round_per_step() {
    let mock = MockLlm::start();
    mock.script(
        "steps",
        vec![
            action(
                "write_file",
                json!({"path": "title.txt", "content": "Test For Fun\n"}),
                "FINISH",
            ),
            action(
                "execute_command",
                json!({"command": "tr a-z A-Z < title.txt > heading.txt"}),
                "FINISH",
            ),
        ],
    );
    let p = llm_project();
    // A text file: a step plan on an office document is a desktop task.
    p.file("files/draft.txt", "a document");
    p.task(
        "doc.json",
        json!({"task": format!("Write a heading {}", marker("steps")), "object": "draft.txt",
               "steps": ["1. type 'Test For Fun' into title.txt", "2. make it a heading in heading.txt"],
               "evaluate": [{"type": "file_equals", "path": "heading.txt", "content": "TEST FOR FUN\n"}]}),
    );
    let out = run_with(&p, &mock, &[]);
    out.expect_code(0);
    let status = out.status("doc");
    assert_eq!(
        (status["session"].as_str(), status["rounds"].as_u64()),
        (Some("FollowerSession"), Some(2))
    );
    assert_eq!(status["round_steps"], json!([1, 1]));
    let second = mock.received_for("steps")[1].body["messages"][1]["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        second.contains("<Steps already done>\n1. 1. type 'Test For Fun'"),
        "{second}"
    );
    assert!(
        second.contains("<Current step (2 of 2)> 2. make it a heading"),
        "{second}"
    );
    let lines: Vec<serde_json::Value> = out
        .task_file("doc", "response.log")
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines[1]["round_num"], 1);
    assert_eq!(lines[1]["subtask"], "2. make it a heading in heading.txt");
}

#[test]
fn the_llm_judges_tasks_without_checks() {
    let mock = MockLlm::start();
    mock.script(
        "good",
        vec![action(
            "write_file",
            json!({"path": "poem.txt", "content": "roses\n"}),
            "FINISH",
        )],
    )
    .judge(
        "good",
        vec![
            Reply::Content("not json".into()),
            verdict("yes", "poem.txt holds a poem"),
        ],
    )
    .script("bad", vec![finish("I did nothing")])
    .judge("bad", vec![verdict("no", "no file was written")]);
    let p = llm_project();
    p.task(
        "good.json",
        json!({"request": format!("Write a poem to poem.txt {}", marker("good"))}),
    )
    .task(
        "bad.json",
        json!({"request": format!("Write a poem to poem.txt {}", marker("bad"))}),
    );
    let out = run_with(&p, &mock, &[]);
    out.expect_code(1);
    let good = out.status("good");
    assert_eq!(
        (good["status"].as_str(), good["complete"].as_str()),
        (Some("passed"), Some("yes"))
    );
    assert_eq!(
        good["llm"],
        json!({"calls": 3, "retries": 0, "bad_replies": 1, "rate_limited": 0, "waited_s": 0.0}),
        "the judge's calls count"
    );
    // The judge's calls go through the run's one limiter of LLM calls.
    let summary = out.summary();
    let per_task: u64 = summary["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            out.status(t["id"].as_str().unwrap())["llm"]["calls"]
                .as_u64()
                .unwrap()
        })
        .sum();
    let run = crate::helpers::read_json(&out.run_dir("proj").join("run.json"));
    assert_eq!(
        run["llm"]["calls"].as_u64(),
        Some(per_task),
        "{}",
        run["llm"]
    );
    let eval: serde_json::Value =
        serde_json::from_str(out.task_file("good", "evaluation.log").trim()).unwrap();
    assert_eq!(eval["evaluator"], "llm");
    assert_eq!(eval["type"], "evaluation_result");
    assert_eq!(eval["reason"], "poem.txt holds a poem");
    let bad = out.status("bad");
    assert_eq!(
        (bad["status"].as_str(), bad["error"].as_str()),
        (Some("failed"), Some("no file was written"))
    );
    // The judge saw the trajectory and the final workspace.
    let judged = mock
        .received()
        .into_iter()
        .find(|r| r.judge && r.marker.as_deref() == Some("[script:good]"))
        .unwrap();
    let brief = judged.body["messages"][1]["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(brief.contains("write_file(path=\"poem.txt\""), "{brief}");
    assert!(brief.contains("<File poem.txt>\nroses"), "{brief}");
}

#[test]
fn eval_flag_overrides_checks() {
    let mock = MockLlm::start();
    mock.script("o", vec![finish("done"), finish("done")])
        .judge("o", vec![verdict("yes", "fine")]);
    let p = llm_project();
    p.task("t.json", json!({"request": format!("x {}", marker("o")), "evaluate": [{"type": "file_exists", "path": "nope"}]}));
    let out = run_with(&p, &mock, &["--eval", "llm"]);
    out.expect_code(0);
    assert_eq!(out.status("t")["complete"], "yes");
    let out = run_with(&p, &mock, &["--eval", "checks", "--fresh"]);
    out.expect_code(1);
    assert!(
        out.status("t")["error"]
            .as_str()
            .unwrap()
            .contains("`nope` does not exist")
    );
}

#[test]
fn max_cost_stops_scheduling_and_says_so() {
    let mock = MockLlm::start();
    for i in 0..4 {
        mock.script(&format!("c{i}"), vec![finish("done")]);
    }
    let p = llm_project();
    for i in 0..4 {
        p.task(
            &format!("t{i}.json"),
            json!({"request": format!("task {}", marker(&format!("c{i}")))}),
        );
    }
    // Each task costs 0.14 USD; the budget is spent after the first.
    let out = run_with(
        &p,
        &mock,
        &["--jobs", "1", "--max-cost", "0.1", "--eval", "none"],
    );
    out.expect_code(1);
    assert!(
        out.stderr
            .contains("stopping: the cost budget of $0.10 is reached ($0.1400 spent; --max-cost)"),
        "{}",
        out.stderr
    );
    assert_eq!(out.status_of("t0"), "passed");
    for i in 1..4 {
        let s = out.row(&format!("t{i}"));
        assert_eq!(s["status"], "cancelled");
        assert!(
            s["error"]
                .as_str()
                .unwrap()
                .starts_with("not started: the cost budget"),
            "{s}"
        );
    }
    assert_eq!(out.summary()["totals"]["cancelled"], 3);
}

#[test]
fn max_cost_needs_a_price() {
    let p = Project::new();
    p.task("t.json", json!({"request": "x"}));
    let out = p.run(&[
        "--model",
        "m",
        "--llm-base-url",
        "http://127.0.0.1:9/v1",
        "--max-cost",
        "1",
    ]);
    out.expect_code(2);
    assert!(
        out.stderr.contains("--max-cost needs the price of \"m\""),
        "{}",
        out.stderr
    );
}

#[test]
fn an_unpriced_model_has_unknown_cost_not_zero() {
    let mock = MockLlm::start();
    mock.serve_all(finish("done"), std::time::Duration::from_millis(50));
    let p = Project::new();
    p.task("t.json", json!({"request": format!("x {}", marker("u"))}));
    let url = mock.url();
    let out = p.run(&[
        "--model",
        "unpriced",
        "--llm-base-url",
        &url,
        "--eval",
        "none",
    ]);
    out.expect_code(0);
    assert_eq!(out.status("t")["cost_usd"], serde_json::Value::Null);
    let csv = std::fs::read_to_string(out.run_dir("proj").join("summary.csv")).unwrap();
    assert!(
        csv.lines()
            .nth(1)
            .unwrap()
            .starts_with("t,FromFileSession,passed,,1,1,1,"),
        "{csv}"
    );
    assert!(
        out.stderr.contains("tokens, cost unknown"),
        "{}",
        out.stderr
    );
    assert_eq!(out.summary()["totals"]["cost_usd"], serde_json::Value::Null);
}

#[test]
fn a_request_runs_without_a_file() {
    let mock = MockLlm::start();
    mock.script(
        "cli",
        vec![action(
            "write_file",
            json!({"path": "hi.txt", "content": "hi"}),
            "FINISH",
        )],
    );
    let p = llm_project();
    let url = mock.url();
    let request = format!("Say hi in hi.txt {}", marker("cli"));
    let out = p.cmd(&[
        "run",
        "--request",
        &request,
        "--llm-base-url",
        &url,
        "--name",
        "one",
        "--eval",
        "none",
        "--progress",
        "lines",
    ]);
    out.expect_code(0);
    let status = read_json(&out.run_dir("one").join("request/status.json"));
    assert_eq!(
        (status["status"].as_str(), status["source"].as_str()),
        (Some("passed"), Some("--request"))
    );
    assert_eq!(
        std::fs::read_to_string(out.run_dir("one").join("request/workspace/hi.txt")).unwrap(),
        "hi"
    );
}

#[test]
fn pending_goes_on_and_confirm_is_denied_unattended() {
    let mock = MockLlm::start();
    mock.script(
        "ask",
        vec![
            action(
                "execute_command",
                json!({"command": "echo which?"}),
                "PENDING",
            ),
            action(
                "write_file",
                json!({"path": "a.txt", "content": "a"}),
                "FINISH",
            ),
        ],
    )
    .script(
        "sure",
        vec![action(
            "execute_command",
            json!({"command": "rm -rf data"}),
            "CONFIRM",
        )],
    );
    let p = llm_project();
    p.task(
        "ask.json",
        json!({"request": format!("ask {}", marker("ask"))}),
    )
    .task(
        "sure.json",
        json!({"request": format!("delete {}", marker("sure")), "files": {"data/x": "1"}}),
    );
    let out = run_with(&p, &mock, &["--eval", "none"]);
    out.expect_code(1);
    assert_eq!(out.status_of("ask"), "passed");
    let told = mock.received_for("ask")[1].body["messages"].to_string();
    assert!(told.contains("no human is available"), "{told}");
    let sure = out.status("sure");
    assert_eq!(sure["status"], "failed");
    assert!(
        sure["error"]
            .as_str()
            .unwrap()
            .contains("unattended runs deny it"),
        "{sure}"
    );
    assert!(
        p.path().join("results/proj/sure/workspace/data/x").exists(),
        "the denied command must not run"
    );
}

#[test]
fn llm_tasks_without_a_model_are_refused_before_anything_runs() {
    let p = Project::new();
    p.task("t.json", json!({"task": "do it", "object": "notepad"}));
    p.task("replay.json", crate::helpers::shell_plan("r", &["true"]));
    let out = p.run(&[]);
    out.expect_code(2);
    assert!(
        out.stderr
            .contains("t needs an LLM agent and none is configured: run with --model MODEL"),
        "{}",
        out.stderr
    );
    assert!(!out.run_dir("proj").join("replay").exists(), "nothing ran");
}

#[test]
fn azure_gets_its_url_and_api_key_header() {
    let mock = MockLlm::start();
    mock.script("az", vec![finish("done")]);
    let p = Project::new();
    let root = mock.url().trim_end_matches("/v1").to_string();
    p.file(
        "ufo-batch.toml",
        &format!(
            "[llm]\nbase_url = \"{root}\"\nmodel = \"my-deployment\"\napi_type = \"azure\"\napi_version = \"2025-01-01\"\napi_key_env = \"AZURE_OPENAI_KEY\"\n"
        ),
    );
    p.task("t.json", json!({"request": format!("x {}", marker("az"))}));
    let out = p.cmd_env(
        &["run", "tasks", "--eval", "none", "--progress", "lines"],
        &[("AZURE_OPENAI_KEY", "azure-key-123456789")],
    );
    out.expect_code(0);
    let request = &mock.received()[0];
    assert_eq!(
        request.path,
        "/openai/deployments/my-deployment/chat/completions?api-version=2025-01-01"
    );
    assert_eq!(request.headers["api-key"], "azure-key-123456789");
    assert!(!request.headers.contains_key("authorization"));
    // Without the key, Azure is refused before anything runs.
    let out = p.run(&["--eval", "none", "--fresh"]);
    out.expect_code(2);
    assert!(
        out.stderr.contains("set $AZURE_OPENAI_KEY"),
        "{}",
        out.stderr
    );
}

#[test]
fn max_tokens_field_and_json_mode_reach_the_server() {
    let mock = MockLlm::start();
    mock.script("f", vec![finish("done")]);
    let p = Project::new();
    p.file("ufo-batch.toml", "[llm]\nmodel = \"m\"\nmax_tokens = 77\nmax_tokens_field = \"max_completion_tokens\"\nresponse_format = \"json_object\"\ntemperature = 0.5\n");
    p.task("t.json", json!({"request": format!("x {}", marker("f"))}));
    run_with(&p, &mock, &["--eval", "none"]).expect_code(0);
    let body = &mock.received()[0].body;
    assert_eq!(body["max_completion_tokens"], 77);
    assert!(body.get("max_tokens").is_none());
    assert_eq!(body["temperature"], 0.5);
    assert_eq!(body["model"], "m");
    assert_eq!(body["response_format"]["type"], "json_object");
    assert_eq!(
        body["response_format"]["schema"]["properties"]["action"]["anyOf"][0]["properties"]["function"]
            ["const"],
        "execute_command"
    );
}

#[test]
fn long_sessions_fold_old_steps_into_a_summary() {
    let mock = MockLlm::start();
    mock.script(
        "long",
        vec![
            action(
                "execute_command",
                json!({"command": "echo one"}),
                "CONTINUE",
            ),
            action(
                "execute_command",
                json!({"command": "echo two"}),
                "CONTINUE",
            ),
            action(
                "execute_command",
                json!({"command": "echo three"}),
                "CONTINUE",
            ),
            finish("done"),
        ],
    );
    let p = llm_project();
    let config = std::fs::read_to_string(p.path().join("ufo-batch.toml")).unwrap();
    p.file(
        "ufo-batch.toml",
        &format!("{config}[agent]\nhistory_steps = 2\n"),
    );
    p.task(
        "t.json",
        json!({"request": format!("count {}", marker("long"))}),
    );
    run_with(&p, &mock, &["--eval", "none"]).expect_code(0);
    let requests = mock.received_for("long");
    let last = &requests[3].body["messages"];
    let brief = last[1]["content"].as_str().unwrap();
    assert!(
        brief.contains("<Earlier steps, summarized (1 of them)>\n1. execute_command(command=\"echo one\") -> success, exit code 0"),
        "{brief}"
    );
    // system + brief + two full steps (reply and results each)
    assert_eq!(last.as_array().unwrap().len(), 6, "{last}");
}

/// A model's call with a 3 MB argument (a reply within the 8 MiB a reply may have):
/// carried out as a call that asks too much (the agent's failed action, told to it),
/// and its argument is recorded shortened in every file of the task, not 3 MB in each.
#[test]
fn a_huge_argument_is_refused_as_the_agents_action_and_recorded_shortened() {
    let mock = MockLlm::start();
    let huge = "y".repeat(3 << 20);
    mock.script(
        "huge",
        vec![
            action(
                "write_file",
                json!({"path": "big.txt", "content": huge}),
                "CONTINUE",
            ),
            finish("tried"),
        ],
    );
    let p = llm_project();
    p.task(
        "huge.json",
        json!({"request": format!("Write a big file {}", marker("huge"))}),
    );
    let out = run_with(&p, &mock, &["--eval", "none"]);
    let status = out.status("huge");
    assert_eq!(
        status["llm"]["bad_replies"], 0,
        "refused as an action, not asked again: {status}"
    );
    let log = out.task_file("huge", "response.log");
    let first: serde_json::Value = serde_json::from_str(log.lines().next().unwrap()).unwrap();
    let result = &first["action"][0]["result"];
    assert_eq!(
        result["status"],
        "failure",
        "{status}\n{}",
        &log[..log.len().min(3000)]
    );
    assert!(
        result["error"]
            .as_str()
            .unwrap()
            .contains("the arguments of `write_file` are 3145"),
        "{result}"
    );
    assert!(
        !p.path()
            .join("results/proj/huge/workspace/big.txt")
            .exists()
    );
    // The model was told of its failed action in its next request.
    let second = mock.received_for("huge")[1].body["messages"].to_string();
    assert!(
        second.contains("a call's may be at most"),
        "{}",
        &second[..second.len().min(3000)]
    );
    for file in [
        "response.log",
        "output.md",
        "plan.json",
        "task.html",
        "trajectory.json",
        "status.json",
    ] {
        let len = std::fs::metadata(p.path().join("results/proj/huge").join(file))
            .map(|m| m.len())
            .unwrap_or(0);
        assert!(len < 256 * 1024, "{file} is {len} bytes");
    }
}
