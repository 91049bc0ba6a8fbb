//! Sending one command to the device: the AIP `command` frame to the agent whose tool
//! set has the tool, with the arguments the runner fills in and the limits it puts on a
//! tool's own time; its answer as a Result, or the device's fault (no answer in time,
//! disconnected, the runner's argument refused). A shell command and a data collection
//! call are sent the same way.

use serde_json::{Map, Value};

use super::{DeviceExecutor, SHELL, UFO_TOOL_TIMEOUT};
use crate::device::error::DeviceError;
use crate::device::link::CallError;
use crate::device::protocol;
use crate::device::tools::DeviceTool;
use crate::tool::{Blamed, ResultStatus, ToolCall, ToolResult, ToolType};

impl DeviceExecutor {
    /// Sends `call` of `tool` with `parameters` as they are, and waits for its result.
    pub(super) async fn send(
        &mut self,
        call: &ToolCall,
        tool: DeviceTool,
        parameters: Map<String, Value>,
    ) -> ToolResult {
        if let Some(fault) = &self.fault {
            return ToolResult::failure(call, protocol::NAMESPACE, fault.clone(), Value::Null);
        }
        self.sent += 1;
        let response_id = format!("{}-{}", self.run.session_id, self.sent);
        let mut call = call.clone();
        call.tool_type = tool.tool_type;
        let action = protocol::action(&call, &parameters);
        let mut route = tool.route.clone();
        if route.agent_name == "AppAgent"
            && let Some(root) = &self.root
        {
            route.root_name = root.clone();
            route.process_name = self.process.clone().unwrap_or_default();
        }
        let frame = protocol::command(
            &route,
            &[action],
            &self.run.session_id,
            &self.run.task_name,
            &response_id,
        );
        let limit = self.run.command_timeout;
        self.pending = true;
        let answer = self.lease.device.link.call(frame, response_id, limit).await;
        self.pending = false;
        let fault = match answer {
            Ok(results) => {
                // Cut first: a device's answer is held, logged and shown to a model
                // only within the bounds of a local command's output.
                let result = protocol::result_of(&call, &results);
                let result = match call.tool_type {
                    ToolType::Action => result.kept(),
                    // The runner's own observations (screenshots, control trees) are
                    // bounded where they are decoded.
                    ToolType::DataCollection => result,
                }
                .scrubbed();
                let Some(argument) = crate::tool::refused_injection(&result, &tool.injected) else {
                    return result;
                };
                // The runner's own argument refused: no verdict on the agent, and every
                // call would be refused the same way.
                DeviceError::InjectionRefused {
                    device: self.device().to_string(),
                    argument: argument.to_string(),
                    error: result.error.unwrap_or_default(),
                }
            }
            Err(CallError::Timeout(waited)) => {
                // Only tools the device listed are sent, with the type it listed: a
                // command with no answer is one the device is stuck on, or one that
                // outlasts the runner's wait. No verdict on the task, which another
                // device (or another try) may run.
                self.unanswered = true;
                DeviceError::Unanswered {
                    device: self.device().to_string(),
                    waited,
                }
            }
            Err(CallError::Gone(why)) => DeviceError::Disconnected {
                device: self.device().to_string(),
                why,
            },
        };
        let fault = fault.failure();
        self.fault = Some(fault.clone());
        ToolResult::failure(&call, protocol::NAMESPACE, fault, Value::Null)
    }

    /// Runs a shell command on the device in the task's folder (when it has one).
    pub(super) async fn shell(&mut self, command: &str) -> Result<ToolResult, DeviceError> {
        let tool = self
            .tool(SHELL)
            .cloned()
            .ok_or_else(|| DeviceError::NoShell(self.device().to_string()))?;
        let mut parameters = Map::new();
        parameters.insert("command".into(), Value::String(command.to_string()));
        let call = ToolCall::action(SHELL, parameters.clone());
        let parameters = self.arguments(&tool, parameters);
        Ok(self.send(&call, tool, parameters).await)
    }

    /// Calls a data collection tool by name; `None` when the device lacks it, `Err` when
    /// it failed.
    pub(super) async fn collect(
        &mut self,
        name: &str,
        arguments: Map<String, Value>,
    ) -> Option<Result<Value, DeviceError>> {
        let tool = self.tool(name)?.clone();
        let mut call = ToolCall::action(name, arguments.clone());
        call.tool_type = ToolType::DataCollection;
        let arguments = self.arguments(&tool, arguments);
        let r = self.send(&call, tool, arguments).await;
        Some(match r.status {
            ResultStatus::Success => Ok(r.result),
            _ => Err(DeviceError::Collect {
                tool: name.to_string(),
                error: r.error.unwrap_or_default(),
            }),
        })
    }

    /// `given` with the injected arguments `tool` takes, and the task's folder as the
    /// shell's working folder unless the call names one.
    pub(super) fn arguments(
        &self,
        tool: &DeviceTool,
        mut given: Map<String, Value>,
    ) -> Map<String, Value> {
        for argument in &tool.injected {
            if let Some(i) = self.run.inject.iter().find(|i| &i.argument == argument) {
                given.insert(argument.clone(), Value::String(i.value.clone()));
            }
        }
        if let Some(ws) = &self.workspace
            && tool.spec.name == SHELL
            && !given.contains_key("cwd")
        {
            given.insert("cwd".into(), Value::String(ws.clone()));
        }
        // A tool's own time limit ends its work before the runner gives up waiting for
        // its answer: a device runs one command at a time, and one still running would
        // hold up the next.
        let cap = self.run.command_timeout.as_secs().saturating_sub(2).max(1);
        if tool.spec.params.iter().any(|p| p.name == "timeout") {
            let asked = given.get("timeout").and_then(Value::as_u64);
            if asked.is_some_and(|t| t > cap) || (asked.is_none() && cap < UFO_TOOL_TIMEOUT) {
                given.insert("timeout".into(), Value::from(cap));
            }
        }
        // UFO's `wait(seconds)` holds the device as long as it says.
        if tool.spec.name == "wait"
            && given
                .get("seconds")
                .and_then(Value::as_f64)
                .is_some_and(|s| s > cap as f64)
        {
            given.insert("seconds".into(), Value::from(cap));
        }
        given
    }
}
