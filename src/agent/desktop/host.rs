//! The HostAgent's side of the conversation (UFO's `host_agent.yaml`, ufo.md §6): its
//! system prompt, the JSON schema of its reply, and the reply parsed leniently (keys in
//! any case, UFO's legacy `CurrentSubtask`, `ControlLabel`, `ControlText`). It sees the
//! desktop's application windows and hands subtasks to an AppAgent: `ASSIGN` with
//! `select_application_window`.

use serde_json::{Map, Value, json};

use crate::agent::json_text::extract_object;
use crate::record::AgentStatus;
use crate::session::Words;

/// The function the HostAgent calls.
pub(super) const SELECT_WINDOW: &str = "select_application_window";

/// The HostAgent's system prompt.
pub(super) fn system_prompt() -> String {
    String::from(
        "You are HostAgent. You complete the user's request on a desktop by splitting it into subtasks and \
         assigning each to an AppAgent that acts inside one application window. You see the desktop's \
         application windows, listed with an id each (and boxed with that id on the annotated screenshot).\n\n\
         ## Your one function\n\
         - `select_application_window`: select the window the next subtask works in.\n\
             - `id` (string): the window's id in the list.\n\
             - `name` (string): the window's title, exactly as listed.\n\n\
         ## Reply format\nReply with exactly one JSON object and nothing else:\n\
         {\n  \"observation\": \"what the desktop shows now, and what the subtasks done so far achieved\",\n  \
         \"thought\": \"why your next move brings the request closer\",\n  \
         \"current_subtask\": \"with ASSIGN: the subtask the AppAgent is to do, complete in itself; else empty\",\n  \
         \"message\": [\"tips for the AppAgent\"],\n  \
         \"status\": \"ASSIGN | CONTINUE | FINISH | FAIL | PENDING\",\n  \
         \"plan\": [\"the subtasks you expect after this one\"],\n  \
         \"function\": \"select_application_window, or \\\"\\\" for none\",\n  \
         \"arguments\": {\"id\": \"the window's id\", \"name\": \"the window's title\"},\n  \
         \"comment\": \"a short note; with FINISH, what was done; with FAIL, why\"\n}\n\n\
         ## Status\n\
         - ASSIGN: select the window (function select_application_window) and hand current_subtask to its AppAgent. \
         You hear back when the AppAgent finishes.\n\
         - CONTINUE: you need another look at the desktop before assigning.\n\
         - FINISH: the whole request is done.\n\
         - FAIL: the request cannot be done; say why in comment.\n\
         - PENDING: you would ask the user a question; nobody will answer in this run.\n\n\
         ## Rules\n\
         - The documents the request is about are open in their applications already.\n\
         - One subtask per ASSIGN, in one window; assign the next one after the AppAgent reports back.\n\
         - No human is watching: never wait for confirmation; decide yourself.\n",
    )
}

/// The JSON schema of a HostAgent reply, for constrained decoding.
pub(super) fn reply_schema() -> Value {
    let text = json!({"type": "string", "maxLength": 600});
    json!({
        "type": "object",
        "properties": {
            "observation": text,
            "thought": text,
            "current_subtask": text,
            "message": {"type": "array", "items": {"type": "string", "maxLength": 300}, "maxItems": 5},
            "status": {"type": "string", "enum": ["ASSIGN", "CONTINUE", "FINISH", "FAIL", "PENDING"]},
            "plan": {"type": "array", "items": {"type": "string", "maxLength": 200}, "maxItems": 5},
            "function": {"type": "string", "enum": [SELECT_WINDOW, ""]},
            "arguments": {
                "type": "object",
                "properties": {"id": {"type": "string"}, "name": {"type": "string"}},
                "additionalProperties": false
            },
            "comment": text
        },
        "required": ["observation", "thought", "current_subtask", "status", "function", "arguments", "comment"]
    })
}

/// The correction after a HostAgent reply that could not be used.
pub(super) fn correction_message(why: &str) -> String {
    format!(
        "Your last reply could not be used: {why}. Reply again with exactly one JSON object with the keys \
         observation, thought, current_subtask, message, status, plan, function, arguments and comment."
    )
}

/// A usable HostAgent reply.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct HostReply {
    /// What it said besides its move.
    pub(super) words: Words,
    /// With ASSIGN: the subtask handed over.
    pub(super) current_subtask: Option<String>,
    /// Tips for the AppAgent.
    pub(super) message: Vec<String>,
    /// ASSIGN, CONTINUE, FINISH, FAIL or PENDING.
    pub(super) status: AgentStatus,
    /// The window to select, when it selects one: its arguments (`id`, `name`).
    pub(super) select: Option<Map<String, Value>>,
    /// Questions it would ask (unanswered in unattended runs).
    pub(super) questions: Vec<String>,
}

/// Parses a HostAgent reply; `Err` is the message to send back.
// The error is the data: the correction the model is sent, word for word.
pub(super) fn parse(text: &str) -> Result<HostReply, String> {
    let value = extract_object(text)?;
    let object: Map<String, Value> = value
        .as_object()
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .map(|(k, v)| (k.to_ascii_lowercase().replace('_', ""), v))
        .collect();
    let field = |key: &str| match object.get(key) {
        Some(Value::String(s)) if !s.trim().is_empty() => Some(s.trim().to_string()),
        Some(Value::String(_) | Value::Null) | None => None,
        Some(other) => Some(other.to_string()),
    };
    let list = |key: &str| match object.get(key) {
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(|i| match i {
                Value::String(s) if !s.trim().is_empty() => Some(s.clone()),
                Value::String(_) | Value::Null => None,
                other => Some(other.to_string()),
            })
            .collect(),
        Some(Value::String(s)) if !s.trim().is_empty() => vec![s.clone()],
        _ => Vec::new(),
    };
    let status = match field("status").map(|s| s.to_ascii_uppercase()).as_deref() {
        Some("ASSIGN") => AgentStatus::Assign,
        Some("CONTINUE") => AgentStatus::Continue,
        Some("FINISH") => AgentStatus::Finish,
        Some("FAIL") => AgentStatus::Fail,
        Some("PENDING") => AgentStatus::Pending,
        Some(other) => {
            return Err(format!(
                "status {other:?} is not one of ASSIGN, CONTINUE, FINISH, FAIL, PENDING"
            ));
        }
        None => {
            return Err(
                "the reply has no status: set status to ASSIGN, CONTINUE, FINISH, FAIL or PENDING"
                    .to_string(),
            );
        }
    };
    let select = select_arguments(&object, &field)?;
    let current_subtask = field("currentsubtask");
    if status == AgentStatus::Assign && current_subtask.is_none() {
        return Err("status ASSIGN needs current_subtask: the subtask to hand over".to_string());
    }
    Ok(HostReply {
        words: crate::agent::reply::words(&object),
        current_subtask,
        message: list("message"),
        status,
        select,
        questions: list("questions"),
    })
}

/// The arguments of the window selection the reply asks for, if it asks for one.
fn select_arguments(
    object: &Map<String, Value>,
    field: &dyn Fn(&str) -> Option<String>,
) -> Result<Option<Map<String, Value>>, String> {
    let function = field("function").unwrap_or_default();
    let mut arguments = match object.get("arguments").or_else(|| object.get("args")) {
        Some(Value::Object(a)) => a.clone(),
        Some(Value::String(s)) => match serde_json::from_str::<Value>(s) {
            Ok(Value::Object(a)) => a,
            _ => {
                return Err(
                    "`arguments` must be an object such as {\"id\": \"1\", \"name\": \"...\"}"
                        .to_string(),
                );
            }
        },
        Some(Value::Null) | None => Map::new(),
        Some(_) => return Err("`arguments` must be an object".to_string()),
    };
    // UFO's legacy keys.
    for (legacy, key) in [("controllabel", "id"), ("controltext", "name")] {
        if let Some(v) = field(legacy) {
            arguments.entry(key.to_string()).or_insert(Value::String(v));
        }
    }
    match function.as_str() {
        // Legacy replies name the window with ControlLabel/ControlText and no function.
        "" if !object.contains_key("function") && !arguments.is_empty() => Ok(Some(arguments)),
        "" => Ok(None),
        SELECT_WINDOW => {
            let id = arguments
                .get("id")
                .is_some_and(|v| !v.is_null() && v.as_str() != Some(""));
            let name = arguments
                .get("name")
                .and_then(Value::as_str)
                .is_some_and(|n| !n.trim().is_empty());
            if !id && !name {
                return Err(
                    "select_application_window needs the window's `id` or `name` in arguments"
                        .to_string(),
                );
            }
            Ok(Some(arguments))
        }
        other => Err(format!(
            "the HostAgent's only function is select_application_window, not `{other}`: assign the subtask to an AppAgent (status ASSIGN) to act in a window"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ufos_host_reply() {
        let r = parse(r#"{"observation": "Writer is open", "thought": "hand it over", "current_subtask": "Type the heading",
            "message": ["use Ctrl+1"], "status": "ASSIGN", "plan": ["save"], "function": "select_application_window",
            "arguments": {"id": "1", "name": "report.docx - LibreOffice Writer"}, "comment": ""}"#).unwrap();
        assert_eq!(r.status, AgentStatus::Assign);
        assert_eq!(r.current_subtask.as_deref(), Some("Type the heading"));
        assert_eq!(r.message, ["use Ctrl+1"]);
        assert_eq!(r.select.unwrap()["id"], "1");
        let r =
            parse(r#"{"status": "FINISH", "function": "", "arguments": {}, "comment": "done"}"#)
                .unwrap();
        assert_eq!(
            (r.status, r.select, r.words.comment.as_deref()),
            (AgentStatus::Finish, None, Some("done"))
        );
    }

    #[test]
    fn legacy_keys_are_read() {
        let r = parse(r#"{"Observation": "o", "Thought": "t", "CurrentSubtask": "Sum it", "Message": [], "ControlLabel": "2",
            "ControlText": "budget.xlsx - LibreOffice Calc", "Status": "ASSIGN", "Plan": [], "Comment": ""}"#).unwrap();
        assert_eq!(r.status, AgentStatus::Assign);
        let select = r.select.unwrap();
        assert_eq!(
            (select["id"].as_str(), select["name"].as_str()),
            (Some("2"), Some("budget.xlsx - LibreOffice Calc"))
        );
    }

    #[test]
    fn bad_replies_say_what_is_wrong() {
        let e = parse(r#"{"status": "ASSIGN", "function": "select_application_window", "arguments": {"id": "1"}}"#).unwrap_err();
        assert!(e.contains("needs current_subtask"), "{e}");
        let e =
            parse(r#"{"status": "CONTINUE", "function": "click_input", "arguments": {"id": "1"}}"#)
                .unwrap_err();
        assert!(
            e.contains("only function is select_application_window"),
            "{e}"
        );
        let e = parse(r#"{"status": "DONE"}"#).unwrap_err();
        assert!(e.contains("not one of ASSIGN"), "{e}");
        let e = parse(r#"{"status": "ASSIGN", "current_subtask": "x", "function": "select_application_window", "arguments": {}}"#).unwrap_err();
        assert!(e.contains("needs the window's `id` or `name`"), "{e}");
    }
}
