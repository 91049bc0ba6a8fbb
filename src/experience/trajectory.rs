//! A finished session's steps as UFO's experience saver reads a log
//! (`ExperienceLogLoader.group_by_subtask` in `ufo/experience/experience_parser.py`):
//! the acting agents' steps (not the HostAgent's) grouped by subtask, each group with
//! the application of its first step, and each step as UFO's experience prompter
//! filters it (`ExperiencePrompter._filter_log`: `Subtask`, `Step`, `Observation`,
//! `Thought`, `ControlLabel`, `ControlText`, `Function`, `Plan`, `Comment`, `Action`,
//! `Application`, `Results`, `error`).

use serde_json::{Map, Value, json};

use crate::record::StepRecord;

/// Characters of one action's output shown to the summarizer.
const MAX_OUTPUT: usize = 1500;
/// Steps of one subtask shown to the summarizer (the last ones).
pub(crate) const MAX_STEPS: usize = 60;

/// The steps of one subtask.
pub(crate) struct Part<'a> {
    /// The subtask (the request, for a session of one round without subtasks).
    pub(crate) subtask: String,
    /// The application its first step acted in, when the agent says.
    pub(crate) application: Option<String>,
    /// Its steps, in order.
    pub(crate) steps: Vec<&'a StepRecord>,
}

/// The acting agents' steps of `trajectory` by subtask, in the order each subtask first
/// appears; `request` stands for a missing subtask.
pub(crate) fn parts<'a>(trajectory: &'a [StepRecord], request: &str) -> Vec<Part<'a>> {
    let mut parts: Vec<Part<'a>> = Vec::new();
    for step in trajectory.iter().filter(|s| s.agent_type != "HostAgent") {
        let subtask = step
            .subtask
            .clone()
            .filter(|s| !s.trim().is_empty())
            .unwrap_or_else(|| request.to_string());
        match parts.iter_mut().find(|p| p.subtask == subtask) {
            Some(part) => part.steps.push(step),
            None => parts.push(Part {
                application: step
                    .extra
                    .get("app_root")
                    .and_then(Value::as_str)
                    .filter(|a| !a.is_empty())
                    .map(str::to_string),
                subtask,
                steps: vec![step],
            }),
        }
    }
    parts
}

/// One step as UFO's experience prompter shows it.
pub(crate) fn filtered(step: &StepRecord, application: Option<&str>) -> Value {
    let first = step.action.first();
    let arg = |k: &str| {
        first
            .and_then(|a| a.arguments.get(k))
            .cloned()
            .unwrap_or(Value::from(""))
    };
    let results: Vec<Value> = step
        .action
        .iter()
        .map(|a| {
            let mut r = Map::new();
            r.insert("status".into(), a.outcome().into());
            if let Some(e) = &a.result.error {
                r.insert("error".into(), crate::text::shorten(e, MAX_OUTPUT).into());
            }
            if !a.result.result.is_null() {
                let out = match &a.result.result {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                r.insert(
                    "output".into(),
                    crate::text::shorten(&out, MAX_OUTPUT).into(),
                );
            }
            Value::Object(r)
        })
        .collect();
    json!({
        "Subtask": step.subtask,
        "Step": step.session_step,
        "Observation": step.observation,
        "Thought": step.thought,
        "ControlLabel": arg("id"),
        "ControlText": arg("name"),
        "Function": first.map(|a| a.function.as_str()).unwrap_or_default(),
        "Plan": step.plan,
        "Comment": step.comment,
        "Action": step.action.iter().map(|a| a.action_string.as_str()).collect::<Vec<_>>(),
        "Application": application,
        "Results": results,
        "error": step.error,
    })
}
