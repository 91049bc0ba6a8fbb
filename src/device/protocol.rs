//! UFO's AIP messages as its device clients speak them (aip.md): JSON text frames, one
//! object each. The client registers, sends heartbeats and answers each `command` frame
//! with one `command_results` frame whose `prev_response_id` is the command's
//! `response_id`; the server accepts a registration with a `heartbeat`/`ok` frame. What
//! a result says is mapped onto the runner's `ToolResult`.

use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::error::DeviceError;
use crate::tool::{Blame, Blamed, ResultStatus, ToolCall, ToolResult, ToolType};

/// A frame from a device client, as far as the server reads it.
#[derive(Clone, Debug, Deserialize)]
pub(crate) struct ClientFrame {
    /// `register`, `heartbeat`, `command_results`, `error`, ...
    #[serde(rename = "type")]
    pub(crate) kind: String,
    /// Required by AIP: a frame without it is not one.
    #[expect(dead_code, reason = "read only to refuse frames that lack it")]
    pub(crate) status: String,
    /// The device's id (on `register`).
    #[serde(default)]
    pub(crate) client_id: Option<String>,
    /// The command frame this answers.
    #[serde(default)]
    pub(crate) prev_response_id: Option<String>,
    /// One Result per action of the command answered.
    #[serde(default)]
    pub(crate) action_results: Option<Value>,
    /// `platform`, `system_info` (on `register`).
    #[serde(default)]
    pub(crate) metadata: Option<Value>,
    /// What went wrong (on `error`).
    #[serde(default)]
    pub(crate) error: Option<String>,
}

impl ClientFrame {
    /// Reads a frame; `Err` says why it is not an AIP client frame.
    pub(crate) fn parse(text: &str) -> Result<Self, FrameError> {
        serde_json::from_str(text).map_err(|source| FrameError {
            shown: crate::text::shorten(text.trim(), 120),
            source,
        })
    }

    /// The platform a registration names (`linux`, `windows`), lower case.
    pub(crate) fn platform(&self) -> Option<String> {
        let m = self.metadata.as_ref()?;
        let p = m
            .get("platform")
            .or_else(|| m.get("system_info").and_then(|s| s.get("platform")))?;
        p.as_str().map(|s| s.trim().to_ascii_lowercase())
    }
}

/// A text frame that is not an AIP client frame.
#[derive(Debug, thiserror::Error)]
#[error("not an AIP frame ({source}): {shown}")]
pub(crate) struct FrameError {
    /// The frame's start.
    shown: String,
    /// What the JSON reader said.
    #[source]
    source: serde_json::Error,
}

fn now() -> String {
    crate::units::Timestamp::now().to_string()
}

/// The server's answer to a registration and to a heartbeat.
pub(crate) fn heartbeat_ok() -> String {
    json!({"type": "heartbeat", "status": "ok", "timestamp": now()}).to_string()
}

/// A refusal the client is told before the connection closes.
pub(crate) fn error(message: &str) -> String {
    json!({"type": "error", "status": "error", "error": message, "timestamp": now()}).to_string()
}

/// Where a command is routed on the device: its agent, process and root names.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Route {
    /// `LinuxAgent`, `HostAgent`, `AppAgent`.
    pub(crate) agent_name: String,
    /// The app's process, for a Windows AppAgent.
    pub(crate) process_name: String,
    /// The app's root name.
    pub(crate) root_name: String,
}

/// A `command` frame carrying `actions`, identified by `response_id`.
pub(crate) fn command(
    route: &Route,
    actions: &[Value],
    session_id: &str,
    task_name: &str,
    response_id: &str,
) -> String {
    json!({
        "type": "command",
        "status": "continue",
        "agent_name": route.agent_name,
        "process_name": route.process_name,
        "root_name": route.root_name,
        "actions": actions,
        "session_id": session_id,
        "task_name": task_name,
        "response_id": response_id,
        "timestamp": now(),
    })
    .to_string()
}

/// One action of a command frame (UFO's `Command`).
pub(crate) fn action(call: &ToolCall, parameters: &Map<String, Value>) -> Value {
    let tool_type = match call.tool_type {
        ToolType::Action => "action",
        ToolType::DataCollection => "data_collection",
    };
    json!({
        "tool_name": call.tool_name,
        "tool_type": tool_type,
        "parameters": parameters,
        "call_id": call.call_id,
    })
}

/// The result of `call` in a `command_results` frame's `action_results` (a list in the
/// order of the actions, or a map by call id as older clients send it).
pub(crate) fn result_of(call: &ToolCall, action_results: &Value) -> ToolResult {
    let found = match action_results {
        Value::Array(items) => items
            .iter()
            .find(|r| r.get("call_id").and_then(Value::as_str) == Some(call.call_id.as_str()))
            .or_else(|| items.first()),
        Value::Object(map) => map.get(&call.call_id).or_else(|| map.values().next()),
        _ => None,
    };
    let Some(r) = found else {
        return ToolResult::failure(
            call,
            NAMESPACE,
            DeviceError::NoResult.failure(),
            Value::Null,
        );
    };
    let namespace = r
        .get("namespace")
        .and_then(Value::as_str)
        .unwrap_or(NAMESPACE)
        .to_string();
    let result = r.get("result").cloned().unwrap_or(Value::Null);
    let error = r
        .get("error")
        .and_then(|e| match e {
            Value::String(s) => Some(s.clone()),
            Value::Null => None,
            other => Some(other.to_string()),
        })
        .filter(|e| !e.trim().is_empty());
    let status = match r.get("status").and_then(Value::as_str) {
        Some("success") => ResultStatus::Success,
        Some("skipped") => ResultStatus::Skipped,
        Some("none") => ResultStatus::None,
        _ => ResultStatus::Failure,
    };
    // A tool that ran on the device and failed: what the agent asked did not work
    // (the executor says when it is the runner's argument that was refused).
    let blame = (status == ResultStatus::Failure).then_some(Blame::Agent);
    let mut out = ToolResult {
        status,
        error,
        result,
        namespace: Some(namespace),
        call_id: call.call_id.clone(),
        blame,
        picture: None,
    };
    // UFO's Linux tool answers `success` with `{success: false, ...}` for a command that
    // failed or that it refused (tool::ufo_shape): read on the answer as it came, so that
    // a plain text answer is never taken for that shape.
    crate::tool::settle_ufo_shape(&mut out);
    // A plain text answer (UFO's `texts`, a screenshot's base64) is the result's text.
    if let Value::String(text) = &out.result {
        out.result = json!({ "text": text });
    }
    out
}

/// The namespace of results that do not say theirs.
pub(crate) const NAMESPACE: &str = "device";

#[cfg(test)]
mod tests {
    use super::*;

    fn call() -> ToolCall {
        ToolCall::action("execute_command", Map::new())
    }

    #[test]
    fn a_registration_names_its_platform() {
        let f = ClientFrame::parse(
            r#"{"type": "register", "status": "ok", "client_id": "win-01",
            "metadata": {"platform": "Windows", "system_info": {"cpu_count": 4}}}"#,
        )
        .unwrap();
        assert_eq!(
            (f.kind.as_str(), f.platform().as_deref()),
            ("register", Some("windows"))
        );
        assert!(
            ClientFrame::parse(r#"{"type": "heartbeat"}"#).is_err(),
            "no status"
        );
        assert!(
            ClientFrame::parse("hello")
                .unwrap_err()
                .to_string()
                .starts_with("not an AIP frame (")
        );
    }

    #[test]
    fn results_map_onto_the_runners_own() {
        let c = call();
        let ok = json!([{"status": "success", "result": {"success": true, "exit_code": 0, "stdout": "hi\n", "stderr": ""},
                         "namespace": "BashExecutor", "call_id": c.call_id}]);
        let r = result_of(&c, &ok);
        assert_eq!(
            (r.status, r.stdout()),
            (ResultStatus::Success, Some("hi\n"))
        );
        assert_eq!(r.namespace.as_deref(), Some("BashExecutor"));
        let failed = json!([{"status": "success", "result": {"success": false, "exit_code": 3, "stdout": "", "stderr": "no"}}]);
        let r = result_of(&c, &failed);
        assert_eq!(
            (r.status, r.error.as_deref()),
            (ResultStatus::Failure, Some("exit code 3: no"))
        );
        let refused = json!([{"status": "success", "result": {"success": false, "error": "Command blocked by security policy. Only allow-listed commands may be executed."}}]);
        assert_eq!(
            result_of(&c, &refused).error.as_deref(),
            Some("Command blocked by security policy. Only allow-listed commands may be executed.")
        );
        let by_id = json!({c.call_id.clone(): {"status": "failure", "error": "boom"}});
        assert_eq!(result_of(&c, &by_id).error.as_deref(), Some("boom"));
        // An answer without a result: the device's doing, never the agent's.
        let none = result_of(&c, &json!([]));
        assert_eq!(
            (none.status, none.blame, none.error.as_deref()),
            (
                ResultStatus::Failure,
                Some(Blame::Environment),
                Some("the device's answer holds no result for this command")
            )
        );
        // A tool that ran and failed: the agent's.
        assert_eq!(result_of(&c, &by_id).blame, Some(Blame::Agent));
    }

    #[test]
    fn a_command_frame_is_ufos() {
        let route = Route {
            agent_name: "LinuxAgent".into(),
            ..Route::default()
        };
        let c = call();
        let frame: Value = serde_json::from_str(&command(
            &route,
            &[action(&c, &Map::new())],
            "s1",
            "t1",
            "r1",
        ))
        .unwrap();
        assert_eq!(frame["type"], "command");
        assert_eq!(frame["status"], "continue");
        assert_eq!(frame["agent_name"], "LinuxAgent");
        assert_eq!(frame["response_id"], "r1");
        assert_eq!(frame["actions"][0]["tool_type"], "action");
        assert_eq!(frame["actions"][0]["call_id"], c.call_id.as_str());
    }
}
