//! What the LinuxAgent tells the model: the system prompt (role, tools, reply format,
//! rules), the first message of a round, the results of each step, and the correction
//! after a bad reply. Also the JSON schema of a reply, for servers that constrain output.

use std::fmt::Write;
use std::path::Path;

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use crate::tool::{ParamKind, ToolSpec};
use crate::tool::{ResultStatus, ToolResult};

/// The system prompt and the reply schema for `tools`, made once per tool set for the
/// process: every task of a run has the same tools, and building them is a measurable
/// share of a short task's own CPU.
pub(super) fn prompt_for(tools: &[ToolSpec]) -> (Arc<str>, Arc<Value>) {
    /// Tool sets remembered (a run has one, or one per kind of device).
    const KEPT: usize = 8;
    type Made = (Vec<ToolSpec>, Arc<str>, Arc<Value>);
    static MADE: Mutex<Vec<Made>> = Mutex::new(Vec::new());
    let mut made = MADE.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, system, schema)) = made.iter().find(|(t, _, _)| t.as_slice() == tools) {
        return (Arc::clone(system), Arc::clone(schema));
    }
    let system: Arc<str> = system_prompt(tools).into();
    let schema = Arc::new(reply_schema(tools));
    if made.len() >= KEPT {
        made.remove(0);
    }
    made.push((tools.to_vec(), Arc::clone(&system), Arc::clone(&schema)));
    (system, schema)
}

/// The system prompt for an agent with `tools`.
pub(super) fn system_prompt(tools: &[ToolSpec]) -> String {
    let mut p = String::from(
        "You are LinuxAgent. You complete the user's request by calling tools in a Linux workspace \
         folder, one action per reply, until the request is done.\n\n## Tools\n",
    );
    for tool in tools {
        let _ = writeln!(p, "- `{}`: {}", tool.name, tool.description);
        for param in &tool.params {
            let kind = json_type(&param.kind);
            let need = if param.required {
                "required"
            } else {
                "optional"
            };
            let _ = writeln!(
                p,
                "    - `{}` ({kind}, {need}): {}",
                param.name, param.description
            );
        }
    }
    p.push_str(
        "\n## Reply format\nReply with exactly one JSON object and nothing else:\n\
         {\n  \"observation\": \"what you see now: the result of your last action, the files, any error\",\n  \
         \"thought\": \"why your next action moves the request forward\",\n  \
         \"action\": {\"function\": \"a tool name, or \\\"\\\" for no action\", \"arguments\": {\"parameter\": \"value\"}, \"status\": \"CONTINUE | FINISH | FAIL\"},\n  \
         \"plan\": [\"the steps you expect after this one\"],\n  \
         \"comment\": \"a short note; with FINISH, the answer or what was done; with FAIL, why\"\n}\n\n\
         ## Status\n\
         - CONTINUE: more actions are needed after this one.\n\
         - FINISH: the request is done once this reply's action (if any) has run.\n\
         - FAIL: the request cannot be done; say why in comment.\n\n\
         ## Rules\n\
         - The workspace is your current directory. Use relative paths and stay inside it.\n\
         - You see the result of each action in the next message. If it failed, read the error and \
         try something different; never repeat a command that failed the same way.\n\
         - No human is watching: do not ask questions or wait for confirmation; decide yourself.\n\
         - Prefer small, safe commands. Never touch anything outside the workspace.\n",
    );
    p
}

/// The first message of a round.
pub(super) struct RoundBrief<'a> {
    /// The task's request.
    pub(super) request: &'a str,
    /// UFO's `object` (file or application), if any.
    pub(super) object: Option<&'a str>,
    /// For a step plan: this step, its number and the step count.
    pub(super) step: Option<(&'a str, usize, usize)>,
    /// Steps of the plan already done, in order.
    pub(super) done: &'a [String],
    /// The workspace, to list what is in it.
    pub(super) workspace: &'a Path,
}

/// The first user message of a round.
pub(super) fn round_message(brief: &RoundBrief<'_>) -> String {
    let mut m = String::new();
    match brief.step {
        None => {
            let _ = writeln!(m, "<Request> {}", brief.request.trim());
        }
        Some((step, n, total)) => {
            let _ = writeln!(m, "<Overall task> {}", brief.request.trim());
            if !brief.done.is_empty() {
                m.push_str("<Steps already done>\n");
                for (i, s) in brief.done.iter().enumerate() {
                    let _ = writeln!(m, "{}. {}", i + 1, s.trim());
                }
            }
            let _ = writeln!(
                m,
                "<Current step ({n} of {total})> {}\nDo only this step; set status FINISH as soon as it is done.",
                step.trim()
            );
        }
    }
    if let Some(object) = brief.object {
        let _ = writeln!(m, "<File or application> {object}");
    }
    let _ = writeln!(
        m,
        "<Workspace files>\n{}",
        workspace_listing(brief.workspace, 50)
    );
    m.push_str("Reply with your first action as one JSON object.");
    m
}

/// The message after a step: what each action returned, trimmed to `limit` characters,
/// and the request for the next action.
pub(super) fn results_message(
    actions: &[(String, ToolResult)],
    note: Option<&str>,
    limit: usize,
) -> String {
    let mut m = results_text(actions, note, limit);
    m.push_str("Reply with your next action as one JSON object.");
    m
}

/// Result keys shown on their own, or not worth showing.
const SHOWN_KEYS: [&str; 11] = [
    "exit_code",
    "stdout",
    "stderr",
    "content",
    "text",
    "structured",
    "entries",
    "path",
    "bytes",
    "truncated",
    "append",
];

/// What each action returned (the output of a command, the text of a control or of an
/// MCP tool, what a desktop action acted on), trimmed to `limit` characters and masked
/// of secrets.
pub(super) fn results_text(
    actions: &[(String, ToolResult)],
    note: Option<&str>,
    limit: usize,
) -> String {
    let mut m = String::from("Results of your last action:\n");
    if actions.is_empty() {
        m.push_str("(no action was taken)\n");
    }
    for (i, (call, result)) in actions.iter().enumerate() {
        let _ = write!(m, "{}. {call} → {}", i + 1, result.status);
        if let Some(code) = result.exit_code() {
            let _ = write!(m, ", exit code {code}");
        }
        m.push('\n');
        if let Some(e) = &result.error
            && result.status != ResultStatus::Success
        {
            let _ = writeln!(m, "error: {e}");
        }
        let r = &result.result;
        for key in ["stdout", "stderr", "content", "text"] {
            if let Some(text) = r.get(key).and_then(Value::as_str).filter(|t| !t.is_empty()) {
                let _ = writeln!(m, "{key}:\n{}", text.trim_end());
            }
        }
        if let Some(structured) = r.get("structured").filter(|v| !v.is_null()) {
            let _ = writeln!(m, "structured: {structured}");
        }
        if let Some(object) = r.as_object() {
            let details: serde_json::Map<String, Value> = object
                .iter()
                .filter(|(k, v)| {
                    !SHOWN_KEYS.contains(&k.as_str())
                        && !k.ends_with("_omitted_bytes")
                        && !v.is_null()
                })
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            if !details.is_empty() {
                let _ = writeln!(m, "details: {}", Value::Object(details));
            }
        }
        if let Some(entries) = result.entries() {
            let names: Vec<String> = entries
                .iter()
                .map(|(name, size)| {
                    if name.ends_with('/') {
                        name.clone()
                    } else {
                        format!("{name} ({size} bytes)")
                    }
                })
                .collect();
            let _ = writeln!(
                m,
                "entries: {}",
                if names.is_empty() {
                    "(empty)".to_string()
                } else {
                    names.join(", ")
                }
            );
        }
    }
    if let Some(note) = note {
        let _ = writeln!(m, "Note: {note}");
    }
    // What a tool returned goes to the model: a secret in it (a server that echoed an
    // injected key) is masked here too, not only in the files.
    let m = crate::secrets::scrub(&m).into_owned();
    shorten_middle(&m, limit)
}

/// The correction after a reply that could not be used.
pub(super) fn correction_message(why: &str) -> String {
    format!(
        "Your last reply could not be used: {why}. Reply again with exactly one JSON object with the keys \
         observation, thought, action (function, arguments, status), plan and comment."
    )
}

/// The JSON schema of a reply, for constrained decoding. Each tool is its own
/// alternative with its own parameters, so a grammar-constrained model can only
/// produce a call the executor accepts; texts and lists are bounded so a small model
/// cannot ramble until its token limit.
pub(super) fn reply_schema(tools: &[ToolSpec]) -> Value {
    let status = json!({"type": "string", "enum": ["CONTINUE", "FINISH", "FAIL"]});
    let mut actions: Vec<Value> = tools
        .iter()
        .map(|tool| {
            let properties: serde_json::Map<String, Value> =
                tool.params.iter().map(|p| (p.name.to_string(), p.kind.schema())).collect();
            let required: Vec<&str> = tool.params.iter().filter(|p| p.required).map(|p| p.name.as_ref()).collect();
            json!({
                "type": "object",
                "properties": {
                    "function": {"const": tool.name},
                    "arguments": {"type": "object", "properties": properties, "required": required, "additionalProperties": false},
                    "status": status
                },
                "required": ["function", "arguments", "status"]
            })
        })
        .collect();
    actions.push(json!({
        "type": "object",
        "properties": {
            "function": {"const": ""},
            "arguments": {"type": "object", "properties": {}, "additionalProperties": false},
            "status": status
        },
        "required": ["function", "arguments", "status"]
    }));
    let text = json!({"type": "string", "maxLength": 600});
    json!({
        "type": "object",
        "properties": {
            "observation": text,
            "thought": text,
            "action": {"anyOf": actions},
            "plan": {"type": "array", "items": {"type": "string", "maxLength": 200}, "maxItems": 5},
            "comment": text
        },
        "required": ["observation", "thought", "action", "plan", "comment"]
    })
}

/// A parameter's type for the tool list: its JSON type, or its schema.
pub(super) fn json_type(kind: &ParamKind) -> String {
    match kind {
        ParamKind::String => "string".into(),
        ParamKind::Integer => "integer".into(),
        ParamKind::Count => "integer (0 or more)".into(),
        ParamKind::Boolean => "boolean".into(),
        ParamKind::Number => "number".into(),
        ParamKind::Schema(schema) => crate::text::shorten(&schema.to_string(), 400),
    }
}

/// How many entries of a workspace a listing looks at, at most (a task can make millions).
pub(super) const WORKSPACE_SEEN: u64 = 10_000;

/// Files under `root` (relative paths and sizes), at most `max` lines, as the task's
/// rights see them (`confined`: links are shown, not followed).
pub(super) fn workspace_listing(root: &Path, max: usize) -> String {
    let walk = match crate::confined::Confined::open(root) {
        Ok(ws) => ws.walk(max, WORKSPACE_SEEN),
        Err(e) => return format!("(cannot be read: {e})"),
    };
    let mut lines: Vec<String> = walk
        .entries
        .iter()
        .map(|entry| match entry.kind {
            crate::confined::Kind::Dir => format!("{}/", entry.path),
            crate::confined::Kind::File => format!("{} ({} bytes)", entry.path, entry.size),
            kind => format!("{} ({})", entry.path, kind.name()),
        })
        .collect();
    if lines.is_empty() && walk.complete {
        return "(empty)".to_string();
    }
    let rest = walk.seen - lines.len() as u64;
    match (rest, walk.complete) {
        (0, true) => {}
        (n, true) => lines.push(format!("… and {n} more")),
        (n, false) => lines.push(format!("… and more than {n} more")),
    }
    lines.join("\n")
}

/// `text` cut to about `limit` characters, keeping the start and the end.
fn shorten_middle(text: &str, limit: usize) -> String {
    let count = text.chars().count();
    if count <= limit {
        return text.to_string();
    }
    let head: String = text.chars().take(limit * 2 / 3).collect();
    let tail: String = text.chars().skip(count - limit / 3).collect();
    format!(
        "{head}\n…[{} characters omitted]…\n{tail}",
        count - head.chars().count() - tail.chars().count()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::executor::shell_tools;
    use crate::tool::ToolCall;

    #[test]
    fn system_prompt_lists_every_tool_and_parameter() {
        let p = system_prompt(shell_tools());
        for needle in [
            "`execute_command`",
            "`command` (string, required)",
            "`append` (boolean, optional)",
            "CONTINUE | FINISH | FAIL",
        ] {
            assert!(p.contains(needle), "{needle}");
        }
    }

    #[test]
    fn the_schema_gives_each_tool_its_parameters() {
        let schema = reply_schema(shell_tools());
        let actions = schema["properties"]["action"]["anyOf"].as_array().unwrap();
        assert_eq!(actions.len(), shell_tools().len() + 1);
        let exec = &actions[0]["properties"];
        assert_eq!(exec["function"]["const"], "execute_command");
        assert_eq!(exec["arguments"]["required"], json!(["command"]));
        assert_eq!(
            exec["arguments"]["properties"]["timeout"]["type"],
            "integer"
        );
        assert_eq!(
            actions.last().unwrap()["properties"]["function"]["const"],
            ""
        );
    }

    #[test]
    fn results_are_trimmed_but_keep_both_ends() {
        let cmd = ToolCall::action("execute_command", Default::default());
        let long: String = (0..2000).map(|i| format!("line {i}\n")).collect();
        let result = ToolResult::success(&cmd, "shell", json!({"exit_code": 0, "stdout": long}));
        let m = results_message(
            &[("execute_command(command=\"seq\")".into(), result)],
            None,
            1000,
        );
        assert!(m.contains("line 0\n"));
        assert!(m.contains("line 1999"));
        assert!(m.contains("characters omitted"));
        assert!(m.len() < 1300, "{}", m.len());
    }

    #[test]
    fn step_briefs_show_progress() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "hi").unwrap();
        let done = vec!["type the title".to_string()];
        let m = round_message(&RoundBrief {
            request: "make a doc",
            object: Some("draft.docx"),
            step: Some(("make it bold", 2, 3)),
            done: &done,
            workspace: dir.path(),
        });
        assert!(m.contains("<Overall task> make a doc"));
        assert!(m.contains("1. type the title"));
        assert!(m.contains("<Current step (2 of 3)> make it bold"));
        assert!(m.contains("a.txt (2 bytes)"));
    }
}
