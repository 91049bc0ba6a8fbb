//! A task's `task.html`: the request and what became of it (status, reason, the
//! evaluation and its sub-scores), the attempts, then every step: agent, thought,
//! actions with their result (exit code, trimmed output, error, divergence) and, for
//! desktop tasks, the screenshots. Links go to the raw files beside it.

use serde::Serialize;
use serde_json::Value;

use super::{cost_text, name_of, render};
use crate::record::{Complete, Evaluation, StepRecord, TaskRecord, TaskStatus};
use crate::rundir::layout::{
    ATTEMPTS, EVALUATION_LOG, OUTPUT_MD, PLAN_JSON, RESPONSE_LOG, STATUS_JSON, TASK_LOG,
};
use crate::task::Problem;

/// Characters of a command's output shown per stream.
const OUTPUT_LIMIT: usize = 4000;

/// UFO's name of the screenshot after the last step.
const FINAL_SHOT: &str = "action_step_final.png";

#[derive(Serialize)]
struct TaskView {
    id: String,
    status: String,
    reason: Option<String>,
    request: String,
    session: String,
    shape: String,
    source: String,
    duration: String,
    steps: u32,
    started: Option<String>,
    tokens: u64,
    cost: String,
    llm: String,
    tags: String,
}

#[derive(Serialize)]
struct EvaluationView {
    complete: String,
    /// The badge's colour: passed, failed or cancelled (unsure).
    badge: &'static str,
    evaluator: String,
    reason: String,
    sub_scores: Vec<Value>,
}

#[derive(Serialize)]
struct AttemptView {
    attempt: u32,
    status: String,
    started: String,
    error: Option<String>,
    /// The folder its files were moved to, for an earlier attempt.
    files: Option<String>,
}

#[derive(Serialize)]
struct ActionView {
    call: String,
    status: String,
    badge: &'static str,
    exit_code: Option<i64>,
    duration: String,
    output: String,
    error: Option<String>,
    divergence: Option<String>,
}

#[derive(Serialize)]
struct StepView {
    n: u32,
    agent: String,
    status: String,
    subtask: Option<String>,
    duration: String,
    thought: Option<String>,
    observation: Option<String>,
    comment: Option<String>,
    error: Option<String>,
    actions: Vec<ActionView>,
    /// (caption, file) of its screenshots.
    shots: Vec<(String, String)>,
}

#[derive(Serialize)]
struct Page {
    task: TaskView,
    /// From the task's folder up to the run's.
    up: String,
    files: Vec<&'static str>,
    problems: Vec<String>,
    evaluation: Option<EvaluationView>,
    attempts: Vec<AttemptView>,
    steps: Vec<StepView>,
    final_shot: Option<&'static str>,
}

/// The page of one task, from what its folder holds.
pub(crate) fn task_html(
    record: &TaskRecord,
    trajectory: &[StepRecord],
    evaluation: Option<&Evaluation>,
    problems: &[Problem],
) -> Result<String, String> {
    let depth = record.id.as_str().matches('/').count() + 1;
    // The final screenshot is taken when a desktop session ends (not on a timeout or a
    // cancellation).
    let final_shot = trajectory.iter().any(|s| s.clean_screenshot_path.is_some())
        && !matches!(record.status, TaskStatus::Timeout | TaskStatus::Cancelled);
    let page = Page {
        task: TaskView {
            id: record.id.to_string(),
            status: name_of(&record.status),
            reason: record.error.clone(),
            request: record.request.clone(),
            session: name_of(&record.session),
            shape: name_of(&record.shape),
            source: record.source.clone(),
            duration: format!("{:.2} s", record.duration_s),
            steps: record.steps,
            started: record.started.map(|t| t.to_string()),
            tokens: record.usage.prompt_tokens + record.usage.completion_tokens,
            cost: cost_text(record.cost_usd),
            llm: format!(
                "{} calls, {} retries, {} unusable replies, {} rate-limit answers, {:.1} s waiting",
                record.llm.calls,
                record.llm.retries,
                record.llm.bad_replies,
                record.llm.rate_limited,
                record.llm.waited_s
            ),
            tags: record.tags.join(", "),
        },
        up: "../".repeat(depth),
        files: [
            (STATUS_JSON, true),
            (OUTPUT_MD, true),
            (TASK_LOG, true),
            (PLAN_JSON, !trajectory.is_empty()),
            (RESPONSE_LOG, !trajectory.is_empty()),
            (EVALUATION_LOG, evaluation.is_some()),
        ]
        .into_iter()
        .filter_map(|(file, there)| there.then_some(file))
        .collect(),
        problems: problems.iter().map(ToString::to_string).collect(),
        evaluation: evaluation.map(evaluation_view),
        attempts: record
            .attempts
            .iter()
            .enumerate()
            .map(|(i, a)| AttemptView {
                attempt: a.attempt,
                status: name_of(&a.status),
                started: a.started.to_string(),
                error: a.error.clone(),
                files: (i + 1 < record.attempts.len())
                    .then(|| format!("{ATTEMPTS}/{}/", a.attempt)),
            })
            .collect(),
        steps: trajectory.iter().map(step_view).collect(),
        final_shot: final_shot.then_some(FINAL_SHOT),
    };
    render("task.html", &page)
}

fn evaluation_view(e: &Evaluation) -> EvaluationView {
    EvaluationView {
        complete: name_of(&e.complete),
        badge: match e.complete {
            Complete::Yes => "passed",
            Complete::No => "failed",
            Complete::Unsure => "cancelled",
        },
        evaluator: name_of(&e.evaluator),
        reason: e.reason.clone(),
        sub_scores: e
            .sub_scores
            .iter()
            .filter_map(|s| serde_json::to_value(s).ok())
            .collect(),
    }
}

fn step_view(s: &StepRecord) -> StepView {
    let shots = [
        ("before", &s.clean_screenshot_path),
        ("controls labelled", &s.annotated_screenshot_path),
    ]
    .into_iter()
    .filter_map(|(caption, path)| Some((caption.to_string(), screenshot_name(path.as_deref()?)?)))
    .collect();
    StepView {
        n: s.session_step,
        agent: s.agent_name.clone(),
        status: name_of(&s.status),
        subtask: s.subtask.clone(),
        duration: format!("{:.2} s", s.duration_s),
        thought: s.thought.clone(),
        observation: s.observation.clone(),
        comment: s.comment.clone(),
        error: s.error.clone(),
        actions: s
            .action
            .iter()
            .map(|a| {
                let status = name_of(&a.result.status);
                ActionView {
                    badge: match status.as_str() {
                        "success" => "passed",
                        "failure" => "failed",
                        _ => "cancelled",
                    },
                    call: a.action_string.clone(),
                    status,
                    exit_code: a.result.result.get("exit_code").and_then(Value::as_i64),
                    duration: format!("{:.2} s", a.duration_s),
                    output: output_text(&a.result.result),
                    error: a.result.error.clone(),
                    divergence: a.divergence.clone(),
                }
            })
            .collect(),
        shots,
    }
}

/// A screenshot's file name when it is one of the task folder's (UFO's
/// `action_step*.png`); anything else (a path, a URL) is not linked.
fn screenshot_name(path: &str) -> Option<String> {
    let ok = path.starts_with("action_step")
        && path.ends_with(".png")
        && path
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.');
    ok.then(|| path.to_string())
}

/// A tool's result as text: a command's streams, or the value itself.
fn output_text(result: &Value) -> String {
    let stream = |name: &str| {
        result
            .get(name)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(|s| crate::text::shorten(s, OUTPUT_LIMIT))
    };
    match (stream("stdout"), stream("stderr")) {
        (None, None) if result.get("stdout").is_some() => String::new(),
        (None, None) if result.get("content").is_some_and(Value::is_string) => {
            stream("content").unwrap_or_default()
        }
        (None, None) => match result {
            Value::Null => String::new(),
            Value::String(s) => crate::text::shorten(s, OUTPUT_LIMIT),
            other => crate::text::shorten(
                &serde_json::to_string_pretty(other).unwrap_or_default(),
                OUTPUT_LIMIT,
            ),
        },
        (Some(out), None) => out,
        (None, Some(err)) => format!("stderr:\n{err}"),
        (Some(out), Some(err)) => format!("{out}\nstderr:\n{err}"),
    }
}
