use serde_json::json;

use super::*;
use crate::record::{SessionType, ShapeName, StepRecord, TaskRecord, TaskRow, TaskStatus};
use crate::task::TaskId;

fn record(id: &str, status: TaskStatus, error: Option<&str>) -> TaskRecord {
    let mut r = TaskRecord::new(
        TaskId::parse(id).unwrap(),
        format!("tasks/{id}.json"),
        "0123456789abcdef".into(),
        ShapeName::RecordedPlan,
        SessionType::FollowerSession,
        "do <b>it</b> & say \"done\" <script>alert('request')</script>".into(),
    );
    r.status = status;
    r.error = error.map(str::to_string);
    r
}

fn step(output: &str) -> StepRecord {
    serde_json::from_value(json!({
        "agent_type": "ReplayAgent", "agent_name": "ReplayAgent",
        "session_step": 1, "round_step": 1, "round_num": 0, "status": "FINISH",
        "request": "r", "thought": "<img src=x onerror=alert('thought')>",
        "action": [{
            "function": "execute_command", "arguments": {"command": "cat x"},
            "status": "FINISH", "action_string": "execute_command(command=\"cat x\")",
            "result": {"status": "failure", "error": "exit code 1 </pre><script>alert('error')</script>",
                       "result": {"exit_code": 1, "stdout": output, "stderr": ""},
                       "namespace": "shell", "call_id": "1"},
            "divergence": "expected <ok>", "duration_s": 0.01
        }],
        "clean_screenshot_path": "action_step1.png",
        "annotated_screenshot_path": "action_step1_annotated.png",
        "started": "2026-11-23T10:00:00.000Z", "duration_s": 0.02
    }))
    .unwrap()
}

#[test]
fn every_page_renders_and_shows_hostile_text_without_running_it() {
    let bad = record(
        "evil/x",
        TaskStatus::Failed,
        Some("<script>alert('reason')</script> \" onmouseover=\"alert(1)"),
    );
    let steps = [step("</pre><script>alert('output')</script>")];
    let page = report_html("run <script>", None, &vec![TaskRow::of(&bad)]).unwrap();
    assert_eq!(
        page.matches("<script").count(),
        2,
        "only the page's own data and script"
    );
    let data = page
        .split(r#"<script type="application/json" id="task-data">"#)
        .nth(1)
        .and_then(|rest| rest.split("</script>").next())
        .unwrap();
    assert!(!data.contains('<'), "{data}");
    let parsed: serde_json::Value = serde_json::from_str(data).unwrap();
    assert_eq!(
        parsed[1][0][8], "<script>alert('reason')</script> \" onmouseover=\"alert(1)",
        "the data reads back as the text"
    );
    assert!(
        page.contains("&lt;script&gt;alert(&#x27;reason&#x27;)"),
        "{page}"
    );
    assert!(
        !page.contains("\" onmouseover=\"alert(1)"),
        "attribute breakout"
    );
    // HTML escaping writes `/` as `&#x2f;` too (valid in text and attributes alike).
    let task = task_html(&bad, &steps, None, &[])
        .unwrap()
        .replace("&#x2f;", "/");
    assert_eq!(
        task.matches("<script").count(),
        1,
        "only the panel's close script"
    );
    assert_eq!(
        task.matches("<img").count(),
        3,
        "the two shots and the final one"
    );
    for shown in [
        "&lt;script&gt;alert(&#x27;output&#x27;)",
        "&lt;script&gt;alert(&#x27;error&#x27;)",
        "&lt;img src=x onerror=alert(&#x27;thought&#x27;)&gt;",
        "do &lt;b&gt;it&lt;/b&gt; &amp; say &quot;done&quot;",
        "expected &lt;ok&gt;",
        r#"<a id="to-run" href="../../report.html" target="_top">"#,
        r#"<img src="action_step1_annotated.png""#,
        r#"<img src="action_step_final.png""#,
    ] {
        assert!(task.contains(shown), "{shown} in\n{task}");
    }
}

#[test]
fn only_the_task_folders_own_screenshots_are_linked() {
    let r = record("desk", TaskStatus::Passed, None);
    let mut s = step("");
    s.clean_screenshot_path = Some("javascript:alert(1)".into());
    s.annotated_screenshot_path = Some("/home/user/secret.png".into());
    let page = task_html(&r, &[s], None, &[]).unwrap();
    assert!(!page.contains("javascript:"), "{page}");
    assert!(!page.contains("secret"), "{page}");
    let mut s = step("");
    s.annotated_screenshot_path = None;
    let mut late = r.clone();
    late.status = TaskStatus::Timeout;
    let page = task_html(&late, &[s], None, &[]).unwrap();
    assert_eq!(
        page.matches("<img").count(),
        1,
        "no final screenshot after a timeout"
    );
}

#[test]
fn the_task_table_puts_what_did_not_pass_first_and_links_each_task_page() {
    let a = record("a", TaskStatus::Passed, None);
    let b = record("b/deep", TaskStatus::Error, Some("LLM unreachable"));
    let c = record("c", TaskStatus::Failed, Some("check failed"));
    let rows = [&a, &b, &c].map(TaskRow::of);
    let page = report_html("run", None, &rows.to_vec())
        .unwrap()
        .replace("&#x2f;", "/");
    let at = |needle: &str| page.find(needle).unwrap_or_else(|| panic!("{needle}"));
    assert!(at(r#"href="c/task.html""#) < at(r#"href="b/deep/task.html""#));
    assert!(at(r#"href="b/deep/task.html""#) < at(r#"href="a/task.html""#));
    assert!(page.contains(r#"<a class="task" href="b/deep/task.html">b/deep</a>"#));
    assert!(page.contains(r#"<option value="b">b</option>"#), "folders");
    assert!(page.contains("<b>1 / 3</b>passed (33.3%)"), "{page}");
}

#[test]
fn a_large_run_has_its_first_rows_as_html_and_every_task_as_data() {
    let records: Vec<TaskRecord> = (0..HTML_ROWS + 20)
        .map(|i| {
            let status = if i % 100 == 7 {
                TaskStatus::Failed
            } else {
                TaskStatus::Passed
            };
            record(&format!("g/t{i:05}"), status, None)
        })
        .collect();
    let rows: Vec<TaskRow> = records.iter().map(TaskRow::of).collect();
    let page = report_html("big", None, &rows)
        .unwrap()
        .replace("&#x2f;", "/");
    assert_eq!(page.matches("<tr><td>").count(), HTML_ROWS, "rows as HTML");
    assert!(page.contains(&format!(
        "The first {HTML_ROWS} of {} tasks",
        HTML_ROWS + 20
    )));
    let at = |needle: &str| page.find(needle).unwrap_or_else(|| panic!("{needle}"));
    assert!(at(">g/t00007<") < at(">g/t00000<"), "a failure first");
    let data = page
        .split(r#"id="task-data">"#)
        .nth(1)
        .and_then(|rest| rest.split("</script>").next())
        .unwrap();
    let parsed: serde_json::Value = serde_json::from_str(data).unwrap();
    assert_eq!(parsed[0], serde_json::json!(["g"]), "the folders");
    let rows = parsed[1].as_array().unwrap();
    assert_eq!(rows.len(), HTML_ROWS + 20);
    assert_eq!(rows[0][0], "g/t00007");
    assert_eq!(rows[0][1], "failed");
    assert_eq!(rows.last().unwrap()[0], format!("g/t{:05}", HTML_ROWS + 19));
}

/// The evaluation, the attempts and a task file's problems: each shown, each text in
/// them escaped, the title too.
#[test]
fn a_task_page_shows_its_evaluation_attempts_and_problems_escaped() {
    use crate::record::{AttemptRecord, AttemptStatus, Complete, Evaluation, SubScore};
    use crate::units::Timestamp;
    let mut r = record("a/t", TaskStatus::Failed, Some("no <good>"));
    let attempt = |n, error: &str| AttemptRecord {
        attempt: n,
        started: Timestamp::now(),
        finished: None,
        status: AttemptStatus::Error,
        error: Some(error.to_string()),
        device: None,
    };
    r.attempts = vec![attempt(1, "<flaky>"), attempt(2, "again")];
    let evaluation: Evaluation = serde_json::from_value(json!({
        "reason": "the file <differs>", "complete": "no", "evaluator": "checks",
        "sub_scores": [{"name": "file_equals <out>", "evaluation": "no", "detail": "line 2 <x>"}]
    }))
    .unwrap();
    assert_eq!(evaluation.sub_scores.len(), 1);
    let _: &SubScore = &evaluation.sub_scores[0];
    assert_eq!(evaluation.complete, Complete::No);
    let problems = [crate::task::Problem::new(
        std::path::Path::new("t.json"),
        "bad <key>",
    )];
    let page = task_html(&r, &[], Some(&evaluation), &problems).unwrap();
    for shown in [
        "<title>a&#x2f;t: failed</title>",
        "<h2>Evaluation</h2>",
        r#"<span class="badge s-failed">no</span> by checks: the file &lt;differs&gt;"#,
        "<td>file_equals &lt;out&gt;</td><td>no</td><td class=\"reason\">line 2 &lt;x&gt;</td>",
        "<h2>Attempts</h2>",
        "<td class=\"reason\">&lt;flaky&gt;</td><td><a href=\"attempts&#x2f;1&#x2f;\">",
        "<td class=\"reason\">again</td><td>this page</td>",
        "<h2>Problems of the task file</h2>",
        "bad &lt;key&gt;",
        "<dt>reason</dt><dd class=\"reason\">no &lt;good&gt;</dd>",
        "<p class=\"muted\">No step was taken.</p>",
        "</body>",
    ] {
        assert!(page.contains(shown), "{shown} in\n{page}");
    }
    assert!(!page.contains("ufo-batch-hole"), "{page}");
}

#[test]
fn control_characters_are_shown_as_escapes_on_every_page() {
    let hostile = "\u{1b}[2J\u{1b}]0;owned\u{7} bell\rover";
    let bad = record("ctl/x", TaskStatus::Failed, Some(hostile));
    let steps = [step(&format!("out {hostile}\r\nnext"))];
    let run = report_html(hostile, None, &vec![TaskRow::of(&bad)]).unwrap();
    let task = task_html(&bad, &steps, None, &[]).unwrap();
    for (name, page) in [("report.html", &run), ("task.html", &task)] {
        for c in ['\u{1b}', '\u{7}'] {
            assert!(!page.contains(c), "{name} keeps {c:?}");
        }
        assert!(!page.contains("\rover"), "{name} keeps a lone CR");
        assert!(page.contains("\\x1b[2J"), "{name}: {page}");
    }
    assert!(task.contains("\\x07 bell\\x0dover"), "{task}");
}
