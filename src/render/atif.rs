//! A task's trajectory in ATIF, the Agent Trajectory Interchange Format that Harbor and
//! the tools around it read (`trajectory.json`). The shapes follow Harbor's own pydantic
//! models (`harbor/models/trajectories/*.py` in harbor 0.25.0, every class
//! `extra="forbid"`): `Trajectory{schema_version, session_id, agent{name, version,
//! model_name}, steps, final_metrics}`; a `Step{step_id, timestamp, source, message,
//! model_name, reasoning_content, tool_calls, observation, metrics, extra}`, where only
//! `agent` steps carry a model, reasoning, tool calls and metrics; an observation's
//! results answer a tool call of the same step by `source_call_id`; a screenshot is an
//! image content part whose path is relative to the trajectory file (the task folder).
//!
//! The request is the `user` step; each agent step (a LinuxAgent, HostAgent, AppAgent or
//! replayed step) is an `agent` step with its tool calls and their results; the verdict
//! is the last step: the LLM judge's as an `agent` step, the checks' or the recording's
//! as a `system` step. ufo-batch's own keys (agent, round, status, observation, plan,
//! verdicts) go in each step's `extra`.

use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::record::{Evaluation, Evaluator, StepRecord, TaskRecord};
use crate::task::Problem;

/// The ATIF version written. 1.7, not the newest 1.8: ufo-batch uses nothing 1.8 added,
/// and `harbor-atif2otel` (Harbor's OpenTelemetry converter) reads up to 1.7.
const SCHEMA_VERSION: &str = "ATIF-v1.7";
/// Characters of a tool's result kept in an observation.
const RESULT_LIMIT: usize = 64 * 1024;

#[derive(Serialize)]
struct Trajectory {
    schema_version: &'static str,
    session_id: String,
    agent: Agent,
    steps: Vec<Step>,
    final_metrics: FinalMetrics,
}

#[derive(Serialize)]
struct Agent {
    name: &'static str,
    version: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    model_name: Option<String>,
}

#[derive(Serialize)]
struct Step {
    step_id: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    timestamp: Option<String>,
    source: &'static str,
    message: Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    model_name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reasoning_content: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_calls: Option<Vec<ToolCall>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    observation: Option<Observation>,
    #[serde(skip_serializing_if = "Option::is_none")]
    metrics: Option<Metrics>,
    #[serde(skip_serializing_if = "Map::is_empty")]
    extra: Map<String, Value>,
}

#[derive(Serialize)]
struct ToolCall {
    tool_call_id: String,
    function_name: String,
    arguments: Map<String, Value>,
}

#[derive(Serialize)]
struct Observation {
    results: Vec<ObservationResult>,
}

#[derive(Serialize)]
struct ObservationResult {
    source_call_id: String,
    content: String,
}

#[derive(Serialize)]
struct Metrics {
    prompt_tokens: u64,
    completion_tokens: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    cost_usd: Option<f64>,
}

#[derive(Serialize)]
struct FinalMetrics {
    total_prompt_tokens: u64,
    total_completion_tokens: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    total_cost_usd: Option<f64>,
    total_steps: usize,
}

/// True for the name of a task folder's screenshot (`action_step3_annotated.png`,
/// `action_step_final.png`): no folder, no `..`.
pub(crate) fn is_screenshot_name(name: &str) -> bool {
    name.starts_with("action_step")
        && name.ends_with(".png")
        && !name.contains(['/', '\\'])
        && !name.contains("..")
}

/// The model of a record's run (`inputs.settings.model`), when an LLM was configured.
pub(crate) fn model_of(record: &TaskRecord) -> Option<String> {
    record
        .inputs
        .as_ref()
        .and_then(|i| i.settings.get("model").cloned())
        .filter(|m| !m.is_empty())
}

/// `trajectory.json` of a task, as pretty JSON.
pub(crate) fn render(
    record: &TaskRecord,
    steps: &[StepRecord],
    evaluation: Option<&Evaluation>,
    problems: &[Problem],
) -> String {
    let model = model_of(record);
    let mut out = vec![Step {
        step_id: 1,
        timestamp: record.started.map(|t| t.to_string()),
        source: "user",
        message: Value::String(record.request.clone()),
        model_name: None,
        reasoning_content: None,
        tool_calls: None,
        observation: None,
        metrics: None,
        extra: Map::new(),
    }];
    if !problems.is_empty() {
        let text: Vec<String> = problems.iter().map(ToString::to_string).collect();
        out.push(system(
            format!("The task file could not run: {}", text.join("; ")),
            Map::new(),
        ));
    }
    for step in steps {
        out.push(agent_step(step, model.as_deref()));
    }
    if let Some(e) = evaluation {
        out.push(verdict(e, model.as_deref()));
    }
    for (i, step) in out.iter_mut().enumerate() {
        step.step_id = i + 1;
    }
    let trajectory = Trajectory {
        schema_version: SCHEMA_VERSION,
        session_id: record.id.to_string(),
        agent: Agent {
            name: "ufo-batch",
            version: env!("CARGO_PKG_VERSION"),
            model_name: model,
        },
        final_metrics: FinalMetrics {
            total_prompt_tokens: record.usage.prompt_tokens,
            total_completion_tokens: record.usage.completion_tokens,
            total_cost_usd: record.cost_usd,
            total_steps: out.len(),
        },
        steps: out,
    };
    serde_json::to_string_pretty(&trajectory).unwrap_or_default() + "\n"
}

fn system(message: String, extra: Map<String, Value>) -> Step {
    Step {
        step_id: 0,
        timestamp: None,
        source: "system",
        message: Value::String(message),
        model_name: None,
        reasoning_content: None,
        tool_calls: None,
        observation: None,
        metrics: None,
        extra,
    }
}

/// One agent step: what it said (with the screen it saw, for a desktop step), its tool
/// calls and their results, its tokens and cost.
fn agent_step(step: &StepRecord, model: Option<&str>) -> Step {
    let calls = tool_calls(step);
    let results = call_results(step);
    let llm = step.prompt_tokens + step.completion_tokens > 0 || step.llm_cost.is_some();
    Step {
        step_id: 0,
        timestamp: Some(step.started.to_string()),
        source: "agent",
        message: agent_message(step),
        model_name: model.filter(|_| llm).map(str::to_string),
        reasoning_content: step.thought.clone().filter(|t| !t.trim().is_empty()),
        observation: (!results.is_empty()).then_some(Observation { results }),
        tool_calls: (!calls.is_empty()).then_some(calls),
        metrics: llm.then_some(Metrics {
            prompt_tokens: step.prompt_tokens,
            completion_tokens: step.completion_tokens,
            cost_usd: step.llm_cost,
        }),
        extra: agent_extra(step),
    }
}

/// The agent step's message: what it said, with the screenshot it saw when there is one.
fn agent_message(step: &StepRecord) -> Value {
    let said = [&step.comment, &step.subtask, &step.thought]
        .into_iter()
        .flatten()
        .find(|s| !s.trim().is_empty())
        .cloned()
        .unwrap_or_else(|| {
            let actions: Vec<&str> = step
                .action
                .iter()
                .map(|a| a.action_string.as_str())
                .collect();
            format!(
                "{} step {}: {}",
                step.agent_name,
                step.session_step,
                actions.join("; ")
            )
        });
    // Only a screenshot of the task folder, by its own name: a path from elsewhere in a
    // tampered log is not passed on to whatever reads the trajectory.
    let screen = [&step.annotated_screenshot_path, &step.clean_screenshot_path]
        .into_iter()
        .flatten()
        .find(|p| is_screenshot_name(p));
    match screen {
        Some(path) => json!([
            {"type": "text", "text": said},
            {"type": "image", "source": {"media_type": "image/png", "path": path}},
        ]),
        None => Value::String(said),
    }
}

/// The id of the step's `i`th tool call (from 0), which its result answers.
fn call_id(step: &StepRecord, i: usize) -> String {
    format!("step{}_call{}", step.session_step, i + 1)
}

/// The agent step's tool calls, one per action.
fn tool_calls(step: &StepRecord) -> Vec<ToolCall> {
    step.action
        .iter()
        .enumerate()
        .map(|(i, a)| ToolCall {
            tool_call_id: call_id(step, i),
            function_name: a.function.clone(),
            arguments: a.arguments.clone(),
        })
        .collect()
}

/// The agent step's observation results, one per tool call.
fn call_results(step: &StepRecord) -> Vec<ObservationResult> {
    step.action
        .iter()
        .enumerate()
        .map(|(i, a)| ObservationResult {
            source_call_id: call_id(step, i),
            content: result_text(a),
        })
        .collect()
}

/// The agent step's `extra`: agent, type, round, status, observation, error and plan.
fn agent_extra(step: &StepRecord) -> Map<String, Value> {
    let mut extra = Map::new();
    extra.insert("agent".into(), json!(step.agent_name));
    extra.insert("agent_type".into(), json!(step.agent_type));
    extra.insert("round".into(), json!(step.round_num));
    extra.insert("status".into(), json!(step.status));
    for (key, value) in [
        ("observation", step.observation.as_ref()),
        ("error", step.own_error().map(str::to_string).as_ref()),
    ] {
        if let Some(v) = value.filter(|v| !v.is_empty()) {
            extra.insert(key.into(), json!(v));
        }
    }
    if let Some(plan) = step.plan.as_ref().filter(|p| !p.is_null()) {
        extra.insert("plan".into(), plan.clone());
    }
    extra
}

/// A tool's answer as observation text: its outcome, its error, its output.
fn result_text(a: &crate::record::ActionRecord) -> String {
    let output = match &a.result.result {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    };
    let mut text = a.outcome();
    for part in [a.divergence.as_deref(), a.result.error.as_deref()]
        .into_iter()
        .flatten()
    {
        text.push_str(": ");
        text.push_str(part);
    }
    if !output.is_empty() {
        text.push('\n');
        text.push_str(&output);
    }
    crate::text::shorten(&text, RESULT_LIMIT)
}

/// The verdict as the last step: the LLM judge's is an agent's, the checks' and the
/// recording's are the system's.
fn verdict(e: &Evaluation, model: Option<&str>) -> Step {
    let mut extra = Map::new();
    extra.insert("complete".into(), json!(e.complete));
    extra.insert("evaluator".into(), json!(e.evaluator));
    extra.insert("sub_scores".into(), json!(e.sub_scores));
    if let Some(judge) = &e.judge {
        extra.insert("judge".into(), json!(judge));
    }
    match e.evaluator {
        Evaluator::Llm => {
            extra.insert("agent".into(), json!("EvaluationAgent"));
            Step {
                source: "agent",
                model_name: model.map(str::to_string),
                ..system(e.reason.clone(), extra)
            }
        }
        Evaluator::Checks | Evaluator::Recording | Evaluator::OsWorld => {
            let by = match e.evaluator {
                Evaluator::Checks => "the checks",
                Evaluator::OsWorld => "OSWorld's evaluator",
                _ => "the recorded verdict",
            };
            system(
                format!(
                    "Evaluation by {by}: complete = {}: {}",
                    e.complete, e.reason
                ),
                extra,
            )
        }
    }
}
