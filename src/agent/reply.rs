//! The UFO agent reply (`{observation, thought, action: {function, arguments, status},
//! plan, comment}`, ufo.md §6), parsed leniently: keys in any case, UFO's legacy
//! top-level `Function`/`Args`/`Status`, an `action` list (action sequences), arguments
//! given as a JSON string. Then checked against the executor's tools, so a bad reply
//! is caught before anything runs and the model is told exactly what was wrong.

use serde_json::{Map, Value};

use super::json_text::extract_object;
use crate::record::AgentStatus;
use crate::session::Words;
use crate::tool::ToolSpec;

/// A usable reply.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Reply {
    /// What the model said besides its actions.
    pub(crate) words: Words,
    /// The tool calls, in order (empty: no action).
    pub(crate) actions: Vec<ReplyAction>,
    /// The step's status.
    pub(crate) status: AgentStatus,
    /// The AppAgent's `save_screenshot` (`{save, reason}`), as given.
    pub(crate) save_screenshot: Option<Value>,
}

/// One tool call of a reply.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ReplyAction {
    /// The tool.
    pub(crate) function: String,
    /// Its arguments.
    pub(crate) arguments: Map<String, Value>,
}

/// Parses and checks a reply; `Err` is the message to send back to the model.
// The error is the data: the correction the model is sent, word for word.
pub(crate) fn parse_reply(text: &str, tools: &[ToolSpec]) -> Result<Reply, String> {
    let value = extract_object(text)?;
    let object = lowercase_keys(value.as_object().cloned().unwrap_or_default());
    let (raw_actions, action_status) = raw_actions(&object)?;
    let mut actions = Vec::new();
    for (i, raw) in raw_actions.into_iter().enumerate() {
        if let Some(action) = check_action(i, raw, tools)? {
            actions.push(action);
        }
    }
    let status_value = action_status.or_else(|| object.get("status").cloned());
    let status = match status_value {
        Some(v) => parse_status(&v)?,
        None => {
            return Err(
                "the reply has no status: set action.status to CONTINUE, FINISH or FAIL"
                    .to_string(),
            );
        }
    };
    Ok(Reply {
        words: words(&object),
        actions,
        status,
        save_screenshot: object
            .get("save_screenshot")
            .filter(|v| !v.is_null())
            .cloned(),
    })
}

/// The words of a reply whose keys are lower case (`comment`, or else `result`).
pub(super) fn words(object: &Map<String, Value>) -> Words {
    let text = |key: &str| match object.get(key) {
        Some(Value::String(s)) if !s.trim().is_empty() => Some(s.clone()),
        Some(Value::String(_) | Value::Null) | None => None,
        Some(other) => Some(other.to_string()),
    };
    Words {
        observation: text("observation"),
        thought: text("thought"),
        plan: object.get("plan").filter(|p| !p.is_null()).cloned(),
        comment: text("comment").or_else(|| text("result")),
    }
}

fn lowercase_keys(object: Map<String, Value>) -> Map<String, Value> {
    object
        .into_iter()
        .map(|(k, v)| (k.to_ascii_lowercase(), v))
        .collect()
}

/// A JSON object with lower-cased keys.
type Object = Map<String, Value>;

/// The action objects of a reply, and the status they carry (the last one's).
// The error is the data: the correction the model is sent, word for word.
fn raw_actions(object: &Map<String, Value>) -> Result<(Vec<Object>, Option<Value>), String> {
    let list = match object.get("action") {
        Some(Value::Object(a)) => vec![lowercase_keys(a.clone())],
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| match item {
                Value::Object(a) => Ok(lowercase_keys(a.clone())),
                other => Err(format!(
                    "each action must be an object, not {}",
                    crate::text::json_type(other)
                )),
            })
            .collect::<Result<_, _>>()?,
        Some(Value::Null) | None => {
            // UFO's legacy non-visual format: Function / Args / Status at the top level,
            // the AppAgent's control as ControlLabel / ControlText.
            let mut legacy = Map::new();
            for (from, to) in [
                ("function", "function"),
                ("args", "arguments"),
                ("arguments", "arguments"),
            ] {
                if let Some(v) = object.get(from) {
                    legacy.insert(to.to_string(), v.clone());
                }
            }
            let control: Vec<(&str, Value)> = [("controllabel", "id"), ("controltext", "name")]
                .into_iter()
                .filter_map(|(from, to)| {
                    let v = object.get(from)?;
                    let empty = v.is_null() || v.as_str().is_some_and(|s| s.trim().is_empty());
                    (!empty).then(|| (to, v.clone()))
                })
                .collect();
            if !control.is_empty() && legacy.contains_key("function") {
                let mut args = match legacy.remove("arguments") {
                    Some(Value::Object(a)) => a,
                    Some(Value::String(s)) => match serde_json::from_str::<Value>(&s) {
                        Ok(Value::Object(a)) => a,
                        _ => Map::new(),
                    },
                    _ => Map::new(),
                };
                for (key, v) in control {
                    args.entry(key.to_string()).or_insert(v);
                }
                legacy.insert("arguments".to_string(), Value::Object(args));
            }
            if legacy.is_empty() {
                Vec::new()
            } else {
                vec![legacy]
            }
        }
        Some(other) => {
            return Err(format!(
                "`action` must be an object, not {}",
                crate::text::json_type(other)
            ));
        }
    };
    let status = list.iter().rev().find_map(|a| a.get("status").cloned());
    Ok((list, status))
}

/// One action checked against the tools; `None` for an empty function (no action).
// The error is the data: the correction the model is sent, word for word.
fn check_action(
    i: usize,
    raw: Map<String, Value>,
    tools: &[ToolSpec],
) -> Result<Option<ReplyAction>, String> {
    let function = match raw.get("function") {
        Some(Value::String(f)) => f.trim().to_string(),
        Some(Value::Null) | None => String::new(),
        Some(other) => {
            return Err(format!(
                "action {}: `function` must be a string, not {}",
                i + 1,
                crate::text::json_type(other)
            ));
        }
    };
    if function.is_empty() {
        return Ok(None);
    }
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    let Some(spec) = tools.iter().find(|t| t.name == function) else {
        return Err(format!(
            "unknown function `{function}`; the functions are: {}",
            names.join(", ")
        ));
    };
    let arguments = match raw.get("arguments").or_else(|| raw.get("args")) {
        Some(Value::Object(a)) => a.clone(),
        Some(Value::Null) | None => Map::new(),
        Some(Value::String(s)) => match serde_json::from_str::<Value>(s) {
            Ok(Value::Object(a)) => a,
            _ => {
                return Err(format!(
                    "action {}: `arguments` must be an object such as {{\"command\": \"ls\"}}",
                    i + 1
                ));
            }
        },
        Some(other) => {
            return Err(format!(
                "action {}: `arguments` must be an object, not {}",
                i + 1,
                crate::text::json_type(other)
            ));
        }
    };
    // A call beyond a bound is carried out, and fails there as an action the agent
    // sees; only a malformed one is asked again.
    match spec.check_arguments(&arguments) {
        Err(e) if !e.is_bound() => return Err(e.to_string()),
        _ => {}
    }
    Ok(Some(ReplyAction {
        function,
        arguments,
    }))
}

// The error is the data: the correction the model is sent, word for word.
fn parse_status(value: &Value) -> Result<AgentStatus, String> {
    let text = value
        .as_str()
        .unwrap_or_default()
        .trim()
        .to_ascii_uppercase();
    match text.as_str() {
        "CONTINUE" => Ok(AgentStatus::Continue),
        "FINISH" => Ok(AgentStatus::Finish),
        "FAIL" => Ok(AgentStatus::Fail),
        "PENDING" => Ok(AgentStatus::Pending),
        "CONFIRM" => Ok(AgentStatus::Confirm),
        _ => Err(format!(
            "status {value} is not one of CONTINUE, FINISH, FAIL"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::executor::shell_tools;

    fn parse(text: &str) -> Result<Reply, String> {
        parse_reply(text, shell_tools())
    }

    #[test]
    fn the_ufo_schema() {
        let r = parse(r#"{"observation": "empty dir", "thought": "list it", "action": {"function": "execute_command",
            "arguments": {"command": "ls"}, "status": "CONTINUE"}, "plan": ["look", "write"], "comment": ""}"#)
        .unwrap();
        assert_eq!(r.status, AgentStatus::Continue);
        assert_eq!(r.actions[0].function, "execute_command");
        assert_eq!(r.words.thought.as_deref(), Some("list it"));
        assert_eq!(r.words.comment, None);
        assert_eq!(r.words.plan, Some(serde_json::json!(["look", "write"])));
    }

    #[test]
    fn lenient_forms() {
        // Code fence, capitalised keys, lowercase status, no action.
        let r = parse("```json\n{\"Thought\": \"done\", \"Action\": {\"Function\": \"\", \"Status\": \"finish\"}, \"Comment\": \"all good\"}\n```").unwrap();
        assert_eq!(
            (r.status, r.actions.len(), r.words.comment.as_deref()),
            (AgentStatus::Finish, 0, Some("all good"))
        );
        // Legacy top-level keys, arguments as a JSON string.
        let r = parse(
            r#"{"Function": "read_file", "Args": "{\"path\": \"a.txt\"}", "Status": "CONTINUE"}"#,
        )
        .unwrap();
        assert_eq!(r.actions[0].arguments["path"], "a.txt");
        // An action sequence; the last status counts.
        let r = parse(r#"{"action": [{"function": "write_file", "arguments": {"path": "a", "content": "x"}, "status": "CONTINUE"},
                                      {"function": "read_file", "arguments": {"path": "a"}, "status": "FINISH"}]}"#).unwrap();
        assert_eq!((r.actions.len(), r.status), (2, AgentStatus::Finish));
    }

    #[test]
    fn the_app_agents_legacy_keys_name_the_control() {
        let tools = crate::desktop::tools::desktop_tools();
        let r = parse_reply(
            r#"{"Observation": "a document", "Thought": "type", "ControlLabel": "12", "ControlText": "Doc", "Function": "set_edit_text", "Args": {"text": "hi"}, "Status": "CONTINUE", "Plan": [], "Comment": ""}"#,
            tools,
        )
        .unwrap();
        assert_eq!(r.actions[0].function, "set_edit_text");
        assert_eq!(
            r.actions[0].arguments,
            serde_json::json!({"text": "hi", "id": "12", "name": "Doc"})
                .as_object()
                .unwrap()
                .clone()
        );
        let r = parse_reply(
            r#"{"action": {"function": "click_input", "arguments": {"id": "3", "name": "OK"}, "status": "CONFIRM"}, "save_screenshot": {"save": true, "reason": "before"}}"#,
            tools,
        )
        .unwrap();
        assert_eq!(r.status, AgentStatus::Confirm);
        assert_eq!(r.save_screenshot.unwrap()["save"], true);
    }

    #[test]
    fn bad_replies_say_what_is_wrong() {
        let e = parse(
            r#"{"action": {"function": "run_shell", "arguments": {}, "status": "CONTINUE"}}"#,
        )
        .unwrap_err();
        assert_eq!(
            e,
            "unknown function `run_shell`; the functions are: execute_command, write_file, read_file, list_dir"
        );
        let e = parse(r#"{"action": {"function": "execute_command", "arguments": {"cmd": "ls"}, "status": "CONTINUE"}}"#).unwrap_err();
        assert!(e.contains("needs the parameter `command`"), "{e}");
        let e = parse(r#"{"action": {"function": "execute_command", "arguments": {"command": "ls"}, "status": "MAYBE"}}"#).unwrap_err();
        assert_eq!(e, "status \"MAYBE\" is not one of CONTINUE, FINISH, FAIL");
        let e = parse(r#"{"thought": "hmm"}"#).unwrap_err();
        assert!(e.starts_with("the reply has no status"), "{e}");
        let e = parse("I will now list the files.").unwrap_err();
        assert!(e.starts_with("the reply has no JSON object"), "{e}");
        let e = parse(r#"{"action": "ls"}"#).unwrap_err();
        assert_eq!(e, "`action` must be an object, not a string");
    }
}
