//! UFO's ExperienceSummarizer (`ufo/experience/summarizer.py`, prompt
//! `ufo/prompts/experience/experience_summary.yaml`): after a session that is to be
//! saved as experience, the run's model condenses each subtask's steps into one JSON
//! document with UFO's ten keys (`Observation`, `Thought`, `ControlLabel`,
//! `ControlText`, `Function`, `Args`, `Status`, `Plan`, `Comment`, `Tips`). The prompt
//! follows UFO's non-visual one (`system_nonvisual`): the same guidelines, the tools the
//! agent had in place of pywinauto's, and the trajectory as UFO's experience prompter
//! lays it out (`[Agent Trajectory]` ... `[Task to be completed]`). A reply that is not
//! such a document is answered with a correction, as an agent's is.

use std::fmt::Write;

use serde_json::{Map, Value, json};

use super::ask::{Ask, Asker, Spent};
use super::conversation::Conversation;
use super::json_text::extract_object;
use crate::event::TaskEvents;
use crate::experience::record::EXAMPLE_KEYS;
use crate::experience::trajectory::{MAX_STEPS, Part, filtered};
use crate::llm::LlmClient;
use crate::tool::ToolSpec;

/// The summarizer's instructions for an agent that had `tools`.
pub(crate) fn system_prompt(tools: &[ToolSpec]) -> String {
    let mut apis = String::new();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    let _ = writeln!(apis, "- The action types are limited to {names:?}.");
    for tool in tools {
        let _ = writeln!(apis, "{}: {}", tool.name, tool.description);
    }
    format!(
        "You are an expert summarizer tasked with condensing a trajectory of actions and responses of an \
         intelligent agent operating within an application window or a shell workspace to fulfill a user \
         request. Your objective is to produce a single JSON document that streamlines all correct steps and \
         provides tips for completing the task. Adhere to the following guidelines:\n\
         - You will be provided with the user request, the action and response sequence of the intelligent \
         agent at each step.\n\
         - The user request defines the task for the intelligent agent.\n\
         - The action and response sequence of [Agent Trajectory] illustrates the agent's interactions to \
         fulfill the user request.\n\
         - The agent's trajectory may contain incorrect or redundant steps. Your task is to summarize the \
         correct steps into a single JSON document, excluding any redundancies.\n\
         - The JSON must include all necessary steps to complete the task and may offer additional tips for \
         guidance, risk avoidance, alternative actions, and required knowledge.\n\n\
         ## Actions the agent had\n{apis}\n\
         ## Output Format\n\
         - You are required to respond in a JSON format, consisting of 10 distinct parts with the following \
         keys and corresponding content:\n\
         {{\"Observation\": <Describe and summarize your observation of the Agent Trajectory.>,\n\
         \"Thought\": <Outline the logic behind the first action required to fulfill the request.>,\n\
         \"ControlLabel\": <The precise label of the control item selected at the first step; an empty string \
         when the action names no control or the task is complete.>,\n\
         \"ControlText\": <The precise name of that control item; an empty string when none.>,\n\
         \"Function\": <The precise function name (without arguments) of the first action. Leave it as an \
         empty string \"\" if no suitable function exists or the task is complete.>,\n\
         \"Args\": <The precise arguments of that function, as a JSON object; {{}} when it takes none.>,\n\
         \"Status\": <The status of the task after the action: \"CONTINUE\" if unfinished, or \"FINISH\" if \
         completed.>,\n\
         \"Plan\": <A detailed plan of the remaining actions to complete the user request, one per line; \
         \"<FINISH>\" if the task is finished.>,\n\
         \"Comment\": <Optionally, additional comments or information about the task or action flow.>,\n\
         \"Tips\": <Guidance, risk avoidance, alternative actions, or required knowledge to complete the task. \
         Add a '-' before each tip, and a line break between tips.>}}\n\n\
         ## Important Notes\n\
         Read the user request and the trajectory carefully and think step by step. Responses must be \
         strictly in JSON format without additional text."
    )
}

/// The trajectory of `part` as the summarizer reads it.
pub(crate) fn user_message(part: &Part<'_>) -> String {
    let skipped = part.steps.len().saturating_sub(MAX_STEPS);
    let steps: Vec<Value> = part.steps[skipped..]
        .iter()
        .map(|s| filtered(s, part.application.as_deref()))
        .collect();
    let mut m = String::from("[Agent Trajectory]:\n");
    if skipped > 0 {
        let _ = writeln!(m, "({skipped} earlier steps are left out)");
    }
    let _ = writeln!(
        m,
        "{}",
        serde_json::to_string_pretty(&steps).unwrap_or_default()
    );
    let _ = write!(m, "[Task to be completed]:\n{}\n", part.subtask.trim());
    m
}

/// The JSON schema of a summary, for servers that constrain output.
fn schema() -> Value {
    let mut properties = Map::new();
    for key in EXAMPLE_KEYS.iter().chain(std::iter::once(&"Tips")) {
        let kind = if *key == "Args" { "object" } else { "string" };
        properties.insert(key.to_string(), json!({"type": kind}));
    }
    json!({"type": "object", "properties": properties, "required": ["Function", "Plan", "Tips"]})
}

/// A summary reply's keys, or why it is not one.
// The error is the data: the correction the model is sent, word for word.
pub(crate) fn parse_summary(text: &str) -> Result<Map<String, Value>, String> {
    let Value::Object(map) = extract_object(text)? else {
        return Err("the reply is not a JSON object".into());
    };
    let known = EXAMPLE_KEYS
        .iter()
        .chain(std::iter::once(&"Tips"))
        .any(|k| map.contains_key(*k));
    if !known {
        return Err(format!(
            "the JSON has none of the keys {}, Tips",
            EXAMPLE_KEYS.join(", ")
        ));
    }
    Ok(map)
}

fn correction(why: &str) -> String {
    format!(
        "Your last reply could not be used: {why}. Reply with exactly one JSON object with the keys {}, Tips.",
        EXAMPLE_KEYS.join(", ")
    )
}

/// Asks `llm` to summarize `part` (`tries` replies at most); what asking cost is added
/// to `spent` whatever the outcome.
// The error is the data: the LLM's error, or the last unusable reply's problem, as the
// task's `experience.not_saved` says it.
pub(crate) async fn summarize(
    llm: &LlmClient,
    tools: &[ToolSpec],
    part: &Part<'_>,
    tries: u32,
    events: &TaskEvents,
    spent: &mut Spent,
) -> Result<Map<String, Value>, String> {
    let system = system_prompt(tools);
    let schema = schema();
    let ask = Ask {
        llm,
        asker: Asker::Summarizer,
        system: &system,
        schema: &schema,
        tries,
        events,
    };
    let mut conversation = Conversation::new(0);
    conversation.start(user_message(part));
    ask.until_parsed(&mut conversation, spent, parse_summary, correction)
        .await
        .map_err(|e| e.into_step_error(tries).0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_summary_needs_one_of_ufos_keys() {
        let ok = parse_summary("```json\n{\"Function\": \"x\", \"Tips\": \"- t\"}\n```").unwrap();
        assert_eq!(ok["Tips"], "- t");
        let e = parse_summary("{\"answer\": 1}").unwrap_err();
        assert!(e.contains("none of the keys Observation"), "{e}");
        assert!(parse_summary("no json").is_err());
    }
}
