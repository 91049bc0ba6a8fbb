//! Records made without a model, from actions that did a task: a replayed plan's
//! (`--save-experience` on a recorded plan) and a demonstration's (`--demonstrations`).
//! The first action is UFO's example step (`Function`, `Args`, and the control it
//! named as `ControlLabel` / `ControlText`); the rest, in order, are its `Plan`.

use serde_json::{Map, Value};

use super::index::SHELL_APP;
use super::record::{ExperienceRecord, Origin};
use crate::record::ExampleSource;
use crate::task::{Task, TaskShape};

/// One action that did the task: its tool, arguments and the reason given for it.
pub(crate) struct Done<'a> {
    pub(crate) function: &'a str,
    pub(crate) arguments: &'a Map<String, Value>,
    pub(crate) thought: Option<&'a str>,
}

/// The record of `actions` taken for `subtask` in `apps`; `verdict` is how the task
/// ended (`None`: it did the task, as a demonstration does).
pub(crate) fn record_of(
    subtask: &str,
    apps: Vec<String>,
    actions: &[Done<'_>],
    comment: String,
    origin: Option<Origin>,
    verdict: Option<String>,
) -> ExperienceRecord {
    let mut fields = Map::new();
    if let Some(first) = actions.first() {
        let arg = |k: &str| first.arguments.get(k).cloned().unwrap_or(Value::from(""));
        fields.insert("Thought".into(), first.thought.unwrap_or_default().into());
        fields.insert("ControlLabel".into(), arg("id"));
        fields.insert("ControlText".into(), arg("name"));
        fields.insert("Function".into(), first.function.into());
        fields.insert("Args".into(), Value::Object(first.arguments.clone()));
    }
    let status = if actions.len() > 1 {
        "CONTINUE"
    } else {
        "FINISH"
    };
    fields.insert("Status".into(), status.into());
    let rest: Vec<String> = actions
        .iter()
        .skip(1)
        .map(|a| crate::tool::ToolCall::action(a.function, a.arguments.clone()).action_string())
        .collect();
    let plan = if rest.is_empty() {
        "<FINISH>".to_string()
    } else {
        rest.join("\n")
    };
    fields.insert("Plan".into(), plan.into());
    fields.insert("Comment".into(), comment.into());
    ExperienceRecord {
        example: ExperienceRecord::example_from(&fields),
        tips: tips(actions.len(), verdict.as_deref()),
        request: subtask.to_string(),
        subtask: subtask.to_string(),
        app_list: apps,
        origin,
        verdict,
    }
}

/// What a record of `n` actions says of them, for a task that ended `verdict`.
fn tips(n: usize, verdict: Option<&str>) -> String {
    let these = if n == 1 {
        "This action".to_string()
    } else {
        format!("These {n} actions, in this order,")
    };
    let layout = if n == 1 {
        "it is the Function and Args"
    } else {
        "the first as Function and Args, the rest in Plan"
    };
    match verdict {
        None | Some("passed") => format!("- {these} did the task: {layout}."),
        Some(v) => format!(
            "- {these} did NOT do the task (its verdict: {v}): {layout}; learn what to avoid."
        ),
    }
}

/// The apps a task's records say it was done in: `shell`, or its desktop app's kind and
/// the names it was given as.
pub(crate) fn task_apps(task: &Task, window_app: Option<&str>) -> Vec<String> {
    if !task.is_desktop() {
        return vec![SHELL_APP.to_string()];
    }
    let mut apps = Vec::new();
    let named = match &task.app {
        Some(crate::task::App::Named(name)) => Some(name.clone()),
        _ => None,
    };
    let known = named
        .as_deref()
        .and_then(crate::desktop::app::Known::from_name)
        .or_else(|| task.desktop_object())
        .or_else(|| {
            task.object_file
                .as_ref()
                .and_then(|f| crate::desktop::app::Known::for_document(&f.name().to_string_lossy()))
        });
    if let Some(known) = known {
        apps.push(super::index::known_key(known).to_string());
    }
    for name in named.into_iter().chain(window_app.map(str::to_string)) {
        if !name.trim().is_empty() && !apps.iter().any(|a| a.eq_ignore_ascii_case(&name)) {
            apps.push(name);
        }
    }
    apps
}

/// A recorded plan as a demonstration, keyed by its file; `None` for a task that is not
/// a recorded plan, or whose recording did not pass (a failure is no example).
pub(crate) fn demonstration(task: &Task, key: String) -> Option<(String, ExperienceRecord)> {
    let TaskShape::RecordedPlan { actions } = &task.shape else {
        return None;
    };
    if task.recorded.as_ref().is_some_and(|r| r.status != "passed") || actions.is_empty() {
        return None;
    }
    let done: Vec<Done<'_>> = actions
        .iter()
        .map(|a| Done {
            function: &a.action,
            arguments: &a.parameters,
            thought: a.comment.as_deref(),
        })
        .collect();
    let comment = format!(
        "A recorded {}: {}",
        ExampleSource::Demonstration.as_str(),
        key
    );
    let record = record_of(
        &task.request,
        task_apps(task, None),
        &done,
        comment,
        None,
        None,
    );
    Some((key, record))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_first_action_is_the_step_and_the_rest_the_plan() {
        let a = json!({"command": "sort -o b a"});
        let b = json!({"path": "b"});
        let actions = [
            Done {
                function: "execute_command",
                arguments: a.as_object().unwrap(),
                thought: Some("sort first"),
            },
            Done {
                function: "read_file",
                arguments: b.as_object().unwrap(),
                thought: None,
            },
        ];
        let r = record_of(
            "Sort a",
            vec!["shell".into()],
            &actions,
            "c".into(),
            None,
            None,
        );
        assert_eq!(
            r.tips,
            "- These 2 actions, in this order, did the task: the first as Function and Args, the rest in Plan."
        );
        assert_eq!(
            tips(1, Some("failed")),
            "- This action did NOT do the task (its verdict: failed): it is the Function and Args; learn what to avoid."
        );
        assert_eq!(r.example["Function"], "execute_command");
        assert_eq!(r.example["Args"], a);
        assert_eq!(r.example["Thought"], "sort first");
        assert_eq!(r.example["Status"], "CONTINUE");
        assert_eq!(r.example["Plan"], "read_file(path=\"b\")");
        assert_eq!(r.example["ControlLabel"], "");
        let keys: Vec<&String> = r.example.keys().collect();
        assert_eq!(keys, super::super::record::EXAMPLE_KEYS);
    }
}
