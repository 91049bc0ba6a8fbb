//! `plan.json`: the actions an attempt actually took, written as a recorded-plan task
//! file that replays with no LLM. Each action carries its result as `expect`; the task's
//! object (by its name: a copy is kept in `files/` beside the plan), files, setup and checks come along so the replay starts
//! and is judged the same way; and the verdict the attempt got is recorded, so that a
//! replay with no checks of its own cannot turn a failure into a pass.

use std::collections::BTreeMap;

use serde::Serialize;

use super::outcome::AttemptOutcome;
use crate::record::{ActionRecord, StepRecord};
use crate::task::{Action, App, Check, Expect, ExpectControl, RecordedVerdict, Task};
use crate::tool::ResultStatus;

/// The call an action replays as: a desktop action names the control (or window) it
/// resolved to by `name` and `control_type` as well as by the label it was given, since
/// a label is only good for the screen it was read from; a computer-use action names
/// the element it hit and the place on it. UFO's documented
/// `click_element`, which names a control by a label alone, replays as the `click_input`
/// of the control it clicked.
fn replayable(action: &ActionRecord) -> (String, serde_json::Map<String, serde_json::Value>) {
    use serde_json::Value;
    let mut function = action.function.clone();
    let mut parameters = action.arguments.clone();
    if action.result.status != ResultStatus::Success {
        return (function, parameters);
    }
    let result = &action.result.result;
    if crate::desktop::computer::is_computer_tool(&action.function) {
        // The element the action hit, and where on it: a replay acts there, wherever
        // it is then.
        if let Some(element) = result.get("element").and_then(Value::as_object) {
            let mut element = element.clone();
            element.remove("path_text");
            parameters.insert("element".into(), Value::Object(element));
        }
        // Where an action at the pointer's place acted: a replay acts there, not
        // wherever its pointer happens to be.
        if !parameters.contains_key("x")
            && let Some([x, y]) = result
                .get("at")
                .and_then(Value::as_array)
                .map(Vec::as_slice)
                .and_then(|a| <&[Value; 2]>::try_from(a).ok())
        {
            parameters.insert("x".into(), x.clone());
            parameters.insert("y".into(), y.clone());
        }
        // What the recording saw there, for a replay that finds it no more.
        if let Some(shot) = result.get("step_screenshot").filter(|v| v.is_string()) {
            parameters.insert("recorded_screenshot".into(), shot.clone());
        }
        return (function, parameters);
    }
    if action.function == "select_application_window" {
        if let Some(window) = result.get("window").and_then(Value::as_str) {
            parameters.insert("name".into(), Value::String(window.to_string()));
        }
        return (function, parameters);
    }
    let Some(control) = result.get("control").and_then(Value::as_object) else {
        return (function, parameters);
    };
    if function == "click_element" {
        function = "click_input".to_string();
        parameters.remove("label");
        if let Some(id) = control.get("id").filter(|v| v.is_string()) {
            parameters.insert("id".to_string(), id.clone());
        }
    }
    for key in ["name", "control_type"] {
        if let Some(v) = control.get(key).filter(|v| v.is_string()) {
            parameters.insert(key.to_string(), v.clone());
        }
    }
    (function, parameters)
}

/// Whether `tool` (a device's or an MCP server's, `SERVER.TOOL`) collects data rather
/// than acts, by UFO's naming: `get_*` and `capture_*` (its data collection tools,
/// `ui_mcp_server.py`; `get_system_info` of its Linux server).
fn is_data_tool(tool: &str) -> bool {
    let name = tool.rsplit('.').next().unwrap_or(tool);
    name.starts_with("get_") || name.starts_with("capture_")
}

/// Recorded stdout longer than this is left out of `expect` (it rarely replays exactly).
const MAX_RECORDED_STDOUT: usize = 2000;

#[derive(Serialize)]
struct PlanFile<'a> {
    id: &'a str,
    request: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    object: Option<String>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    close: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    app: Option<&'a App>,
    #[serde(skip_serializing_if = "Option::is_none")]
    mode: Option<crate::task::SessionMode>,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    tags: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    timeout: Option<f64>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    files: &'a BTreeMap<String, String>,
    #[serde(skip_serializing_if = "<[Action]>::is_empty")]
    setup: &'a [Action],
    actions: Vec<Action>,
    #[serde(skip_serializing_if = "<[Check]>::is_empty")]
    evaluate: &'a [Check],
    /// The OSWorld task, so that the replay is set up and scored the same.
    #[serde(skip_serializing_if = "Option::is_none")]
    osworld: Option<&'a serde_json::Value>,
    /// `FAIL` when the agent's last word was that the task cannot be done.
    #[serde(skip_serializing_if = "Option::is_none")]
    last_action: Option<&'static str>,
    recorded: RecordedVerdict,
}

/// The recorded plan of `trajectory` for `task`, which ended as `outcome` says.
pub(super) fn recorded_plan(
    task: &Task,
    trajectory: &[StepRecord],
    outcome: &AttemptOutcome,
) -> serde_json::Value {
    let actions = trajectory
        .iter()
        .flat_map(|step| {
            step.action
                .iter()
                .filter(|a| a.result.status != ResultStatus::Skipped)
                .map(move |a| recorded_action(step, a))
        })
        .collect();
    // The object by its name alone: the run keeps a copy in `files/` beside this plan.
    let object = match &task.object_file {
        Some(file) => Some(file.name().to_string_lossy().into_owned()),
        None => task.object.clone(),
    };
    let recorded = RecordedVerdict {
        status: outcome.status.to_string(),
        evaluator: outcome
            .evaluation
            .as_ref()
            .map(|e| format!("{:?}", e.evaluator).to_lowercase()),
        reason: outcome
            .evaluation
            .as_ref()
            .map(|e| e.reason.clone())
            .or_else(|| outcome.reason.clone()),
    };
    let plan = PlanFile {
        id: task.id.as_str(),
        request: &task.request,
        object,
        close: task.close,
        app: task.app.as_ref(),
        mode: task.mode,
        tags: &task.tags,
        timeout: task.timeout.map(|d| d.as_secs_f64()),
        files: &task.files,
        setup: &task.setup,
        actions,
        evaluate: &task.checks,
        osworld: task.osworld.as_ref().map(|o| o.json.as_ref()),
        last_action: trajectory
            .last()
            .filter(|s| s.status == crate::record::AgentStatus::Fail && s.error.is_none())
            .map(|_| "FAIL"),
        recorded,
    };
    serde_json::to_value(plan).unwrap_or_default()
}

fn recorded_action(step: &StepRecord, action: &ActionRecord) -> Action {
    let result = &action.result;
    let stdout = result.stdout().filter(|s| {
        let omitted = result
            .result
            .get("stdout_omitted_bytes")
            .and_then(|v| v.as_u64())
            .unwrap_or(0);
        s.len() <= MAX_RECORDED_STDOUT && omitted == 0
    });
    let agent = (step.agent_name != step.agent_type || step.agent_type != "ReplayAgent")
        .then(|| step.agent_name.clone());
    let (function, parameters) = replayable(action);
    // What a data tool returns (UFO's `get_system_info` holds the uptime, a screenshot
    // the time) changes from run to run: only whether it worked is compared.
    let data = is_data_tool(&function);
    Action {
        agent,
        action: function,
        parameters,
        expect: Some(Expect {
            status: Some(result.status),
            exit_code: result.exit_code(),
            stdout: stdout.filter(|_| !data).map(str::to_string),
            control: ExpectControl::of(result),
            text: result
                .result
                .get("text")
                .and_then(serde_json::Value::as_str)
                .filter(|t| t.len() <= MAX_RECORDED_STDOUT && !data)
                .map(str::to_string),
        }),
        comment: step.thought.clone().or_else(|| step.comment.clone()),
    }
}
