//! How UFO's own tool servers say a call failed, read the same way on every path (MCP
//! servers configured in `[[mcp.servers]]`, UFO's device clients): not always with MCP's
//! `isError`, but in the result itself. UFO's Linux MCP server
//! (`../ufo/ufo/client/mcp/http_servers/linux_mcp_server.py`) answers
//! - a command that ran: `{"success": rc == 0, "exit_code", "stdout", "stderr"}`;
//! - a refused command, a bad `cwd`, a timeout, a wrong key:
//!   `{"success": False, "error": "..."}` (`"Timeout after {timeout}s."`,
//!   `"Authentication failed. Invalid or missing API key."`);
//! - `get_system_info` with a wrong key: `{"error": "Authentication failed. ..."}`, with no
//!   `success` at all;
//!
//! and none of these is marked `isError`. What is read here is that shape, wherever it
//! sits: the result itself (a device's), its structured content, or its text when that is
//! a JSON object (an MCP server's, which FastMCP sends both ways).

use serde_json::{Map, Value};

use super::{Blame, ResultStatus, ToolResult};

/// Makes a successful result that says, in UFO's shape, that the call failed, a failure
/// whose error is what it said (its `error`, else the first line of its `stderr`, else its
/// exit code).
pub(crate) fn settle(out: &mut ToolResult) {
    if out.status != ResultStatus::Success {
        return;
    }
    let Some(said) = ufo_object(&out.result) else {
        return;
    };
    let code = said.get("exit_code").and_then(Value::as_i64);
    let error = said
        .get("error")
        .and_then(Value::as_str)
        .filter(|e| !e.trim().is_empty());
    let failed = match said.get("success") {
        Some(Value::Bool(ok)) => !ok,
        // `{"error": ...}` and nothing to say it worked.
        None => error.is_some() && code.is_none(),
        Some(_) => false,
    } || code.is_some_and(|c| c != 0);
    if !failed {
        return;
    }
    let stderr = said
        .get("stderr")
        .and_then(Value::as_str)
        .map(|s| crate::text::first_line(s, 200))
        .filter(|s| !s.is_empty());
    out.status = ResultStatus::Failure;
    out.blame = Some(Blame::Agent);
    out.error = Some(match (error, code, stderr) {
        (Some(e), _, _) => e.to_string(),
        (None, Some(c), Some(s)) => format!("exit code {c}: {s}"),
        (None, Some(c), None) => format!("exit code {c}"),
        (None, None, Some(s)) => s,
        (None, None, None) => "the tool said it did not succeed".to_string(),
    });
}

/// The object that holds UFO's shape in `result`: the result itself when it has
/// `success` or `error`, its `structured` content, or its `text` parsed as a JSON object.
fn ufo_object(result: &Value) -> Option<std::borrow::Cow<'_, Map<String, Value>>> {
    let shaped = |m: &Map<String, Value>| m.contains_key("success") || m.contains_key("error");
    if let Value::Object(m) = result {
        if shaped(m) {
            return Some(std::borrow::Cow::Borrowed(m));
        }
        if let Some(Value::Object(s)) = m.get("structured")
            && shaped(s)
        {
            return Some(std::borrow::Cow::Borrowed(s));
        }
        if let Some(Value::String(text)) = m.get("text")
            && text.trim_start().starts_with('{')
            && let Ok(Value::Object(parsed)) = serde_json::from_str::<Value>(text)
            && shaped(&parsed)
        {
            return Some(std::borrow::Cow::Owned(parsed));
        }
    }
    None
}

/// When `result` (a failed call's) says that an argument the runner fills in was refused
/// (missing, of the wrong type, or not the key the server expects), which: that failure
/// is the runner's configuration's, never the agent's. Only what the tool itself said
/// counts, in the words UFO's stack says it: FastMCP's schema check (`Input validation
/// error: 'api_key' is a required property`, `... is not of type 'string'`) and UFO's
/// Linux server (`Authentication failed. Invalid or missing API key.`,
/// linux_mcp_server.py); never a command that ran (it has an exit code, and its stderr
/// may say anything).
pub(crate) fn refused_injection<'a>(
    result: &ToolResult,
    injected: &'a [String],
) -> Option<&'a str> {
    if result.status != ResultStatus::Failure || result.exit_code().is_some() {
        return None;
    }
    let error = result.error.as_deref()?.trim_start();
    let validation = error.starts_with("Input validation error:");
    let key_refused = error.starts_with("Authentication failed.");
    injected.iter().map(String::as_str).find(|name| {
        (validation && error.contains(&format!("'{name}'"))) || (key_refused && is_credential(name))
    })
}

/// Whether an argument named `name` is a credential, which a dispatcher fills in (UFO's
/// servers check an `api_key` on every tool, and nothing in UFO fills it in: mcp.md) and
/// which no model or plan is to invent.
pub(crate) fn is_credential(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    matches!(
        name.as_str(),
        "api_key" | "apikey" | "token" | "access_token" | "password" | "secret"
    ) || ["_api_key", "_apikey", "_token", "_secret", "_password"]
        .iter()
        .any(|end| name.ends_with(end))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tool::ToolCall;
    use serde_json::json;

    fn settled(result: Value) -> ToolResult {
        let call = ToolCall::action("execute_command", Map::new());
        let mut out = ToolResult::success(&call, "BashExecutor", result);
        settle(&mut out);
        out
    }

    /// Each shape UFO's Linux server answers with (linux_mcp_server.py), as it sits in a
    /// device's result, in an MCP result's structured content and in its JSON text.
    #[test]
    fn ufos_failures_in_the_result_are_failures() {
        let cases = [
            (
                json!({"success": true, "exit_code": 0, "stdout": "a\n", "stderr": ""}),
                None,
            ),
            (
                json!({"success": false, "exit_code": 2, "stdout": "", "stderr": "ls: nope\n"}),
                Some("exit code 2: ls: nope"),
            ),
            (
                json!({"success": false, "error": "Command blocked by security policy. Only allow-listed commands may be executed."}),
                Some(
                    "Command blocked by security policy. Only allow-listed commands may be executed.",
                ),
            ),
            (
                json!({"success": false, "error": "Timeout after 1s."}),
                Some("Timeout after 1s."),
            ),
            (
                json!({"error": "Authentication failed. Invalid or missing API key."}),
                Some("Authentication failed. Invalid or missing API key."),
            ),
            (json!({"uname": "Linux", "uptime": "up 1 day"}), None),
        ];
        for (said, want) in cases {
            for result in [
                said.clone(),
                json!({"text": said.to_string(), "structured": said.clone()}),
                json!({"text": said.to_string()}),
            ] {
                let out = settled(result.clone());
                assert_eq!(out.error.as_deref(), want, "{result}");
                let failed = out.status == ResultStatus::Failure;
                assert_eq!(failed, want.is_some(), "{result}");
            }
        }
    }

    #[test]
    fn refusals_of_an_injected_argument_are_the_runners() {
        let injected = ["api_key".to_string()];
        let failed = |error: &str| {
            let call = ToolCall::action("execute_command", Map::new());
            ToolResult::failure(
                &call,
                "BashExecutor",
                super::super::Failure::agent(error),
                Value::Null,
            )
        };
        for error in [
            "Input validation error: 'api_key' is a required property",
            "Input validation error: 5 is not of type 'string' for 'api_key'",
            "Authentication failed. Invalid or missing API key.",
        ] {
            assert_eq!(
                refused_injection(&failed(error), &injected),
                Some("api_key"),
                "{error}"
            );
        }
        assert_eq!(
            refused_injection(
                &failed("Input validation error: 'command' is a required property"),
                &injected
            ),
            None
        );
        // A command that ran and failed is the task's, whatever its stderr says.
        let ran = settled(json!({"success": false, "exit_code": 1, "stdout": "",
            "stderr": "Authentication failed. bad api key in config"}));
        assert_eq!(refused_injection(&ran, &injected), None);
    }
}
