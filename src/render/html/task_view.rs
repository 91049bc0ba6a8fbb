//! What a task's page shows, made from its records: the evaluation, the attempts and
//! each step with its actions' results (output trimmed, screenshots named), before
//! `task_page` writes it.

use serde_json::Value;

use super::name_of;
use crate::record::{Complete, Evaluation, StepRecord};

/// Characters of a command's output shown per stream.
pub(super) const OUTPUT_LIMIT: usize = 4000;

/// UFO's name of the screenshot after the last step.
pub(super) const FINAL_SHOT: &str = "action_step_final.png";

pub(super) struct TaskView {
    pub(super) id: String,
    pub(super) status: String,
    pub(super) reason: Option<String>,
    pub(super) request: String,
    pub(super) session: String,
    pub(super) shape: String,
    pub(super) source: String,
    pub(super) duration: String,
    pub(super) steps: u32,
    pub(super) started: Option<String>,
    pub(super) tokens: u64,
    pub(super) cost: String,
    pub(super) llm: String,
    pub(super) tags: String,
}

pub(super) struct EvaluationView {
    pub(super) complete: String,
    /// The badge's colour: passed, failed or cancelled (unsure).
    pub(super) badge: &'static str,
    pub(super) evaluator: String,
    pub(super) reason: String,
    pub(super) sub_scores: Vec<SubScoreView>,
}

pub(super) struct SubScoreView {
    pub(super) name: String,
    pub(super) evaluation: String,
    pub(super) detail: Option<String>,
}

pub(super) struct AttemptView {
    pub(super) attempt: u32,
    pub(super) status: String,
    pub(super) started: String,
    pub(super) error: Option<String>,
    /// The folder its files were moved to, for an earlier attempt.
    pub(super) files: Option<String>,
}

pub(super) struct ActionView {
    pub(super) call: String,
    pub(super) status: String,
    pub(super) badge: &'static str,
    pub(super) exit_code: Option<i64>,
    pub(super) duration: String,
    pub(super) output: String,
    pub(super) error: Option<String>,
    pub(super) divergence: Option<String>,
    /// A computer-use action's place: the model's point, the desktop's, the window,
    /// the element (label, text).
    pub(super) place: Vec<(&'static str, String)>,
}

pub(super) struct StepView {
    pub(super) n: u32,
    pub(super) agent: String,
    pub(super) status: String,
    pub(super) subtask: Option<String>,
    pub(super) duration: String,
    pub(super) thought: Option<String>,
    pub(super) observation: Option<String>,
    pub(super) comment: Option<String>,
    pub(super) error: Option<String>,
    pub(super) actions: Vec<ActionView>,
    /// (caption, file) of its screenshots.
    pub(super) shots: Vec<(String, String)>,
}

pub(super) fn evaluation_view(ev: &Evaluation) -> EvaluationView {
    EvaluationView {
        complete: name_of(&ev.complete),
        badge: match ev.complete {
            Complete::Yes => "passed",
            Complete::No => "failed",
            Complete::Unsure => "cancelled",
        },
        evaluator: name_of(&ev.evaluator),
        reason: ev.reason.clone(),
        sub_scores: ev
            .sub_scores
            .iter()
            .map(|s| SubScoreView {
                name: s.name.clone(),
                evaluation: name_of(&s.evaluation),
                detail: s.detail.clone(),
            })
            .collect(),
    }
}

pub(super) fn step_view(s: &StepRecord) -> StepView {
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
        error: s.own_error().map(str::to_string),
        actions: s
            .action
            .iter()
            .map(|a| {
                let status = a.outcome();
                ActionView {
                    badge: match status.as_str() {
                        "success" => "passed",
                        "failure" | "diverged" => "failed",
                        _ => "cancelled",
                    },
                    call: a.action_string.clone(),
                    status,
                    exit_code: a.result.result.get("exit_code").and_then(Value::as_i64),
                    duration: format!("{:.2} s", a.duration_s),
                    output: output_text(&a.result.result),
                    error: a.result.error.clone(),
                    divergence: a.divergence.clone(),
                    place: crate::render::computer::details(a),
                }
            })
            .collect(),
        shots,
    }
}

/// A screenshot's file name when it is one of the task folder's (UFO's
/// `action_step*.png`); anything else (a path, a URL) is not linked.
pub(super) fn screenshot_name(path: &str) -> Option<String> {
    let ok = path.starts_with("action_step")
        && path.ends_with(".png")
        && path
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.');
    ok.then(|| path.to_string())
}

/// A tool's result as text: a command's streams, or the value itself.
pub(super) fn output_text(result: &Value) -> String {
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
        // What an MCP tool answered.
        (None, None) if result.get("text").is_some_and(Value::is_string) => {
            stream("text").unwrap_or_default()
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
