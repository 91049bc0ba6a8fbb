//! Carrying out a task's commands on a leased device: each command goes as one AIP
//! `command` frame to the agent whose tool set has the tool, with the arguments the
//! runner injects filled in (never shown to a model, never written), and its result
//! comes back as a UFO Result. A command with no answer within the limit fails (UFO's
//! clients answer nothing for one they cannot route); a device that disconnects makes
//! the attempt an infrastructure error, retried on another device.
//!
//! On a Linux device the task gets a folder of its own, made and removed with the
//! device's `execute_command`, in which its commands run; its `files` are written there
//! and the files its checks read are fetched from there into the local workspace.

use std::path::{Path, PathBuf};

use async_trait::async_trait;
use serde_json::{Map, Value};

use super::fleet::{Lease, Platform};
use super::link::CallError;
use super::protocol;
use super::tools::DeviceTool;
use crate::executor::Executor;
use crate::mcp::Injected;
use crate::tool::{ResultStatus, ToolCall, ToolResult, ToolSpec};

/// The tool that runs shell commands on a Linux device (UFO's Linux MCP server's).
const SHELL: &str = "execute_command";

/// What a device executor needs besides its device.
#[derive(Clone, Debug)]
pub(crate) struct DeviceRun {
    /// One command's limit.
    pub(crate) command_timeout: std::time::Duration,
    /// Arguments filled in.
    pub(crate) inject: Vec<Injected>,
    /// The session id sent with the task's commands (run and task).
    pub(crate) session_id: String,
    /// The task's name, as UFO's frames carry it.
    pub(crate) task_name: String,
    /// The task's local workspace (where checked files are fetched to).
    pub(crate) local_workspace: PathBuf,
}

/// Runs one task's commands on one device.
pub(crate) struct DeviceExecutor {
    lease: Lease,
    run: DeviceRun,
    /// The task's folder on the device, once made.
    workspace: Option<String>,
    fault: Option<String>,
    /// Commands sent (each frame's `response_id` is unique).
    sent: u64,
}

/// `text` quoted for a POSIX shell.
fn quoted(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

impl DeviceExecutor {
    /// An executor on `lease`'s device.
    pub(crate) fn new(lease: Lease, run: DeviceRun) -> Self {
        Self {
            lease,
            run,
            workspace: None,
            fault: None,
            sent: 0,
        }
    }

    /// The device's id.
    pub(crate) fn device(&self) -> &str {
        &self.lease.device.id
    }

    fn tool(&self, name: &str) -> Option<&DeviceTool> {
        self.lease.device.tools.iter().find(|t| t.spec.name == name)
    }

    /// Sends `call` of `tool` with `parameters` as they are, and waits for its result.
    async fn send(
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
        let frame = protocol::command(
            &tool.route,
            &[action],
            &self.run.session_id,
            &self.run.task_name,
            &response_id,
        );
        let limit = self.run.command_timeout;
        match self.lease.device.link.call(frame, response_id, limit).await {
            Ok(results) => protocol::result_of(&call, &results),
            Err(CallError::Timeout(d)) => ToolResult::failure(
                &call,
                protocol::NAMESPACE,
                format!(
                    "device {} sent no result within {}s (UFO's clients answer nothing for a command they cannot route: an unknown tool or agent)",
                    self.device(),
                    d.as_secs()
                ),
                Value::Null,
            ),
            Err(CallError::Gone(why)) => {
                let fault = format!("device {} disconnected: {why}", self.device());
                self.fault = Some(fault.clone());
                ToolResult::failure(&call, protocol::NAMESPACE, fault, Value::Null)
            }
        }
    }

    /// Runs a shell command on the device in the task's folder (when it has one).
    async fn shell(&mut self, command: &str) -> Result<ToolResult, String> {
        let tool = self
            .tool(SHELL)
            .cloned()
            .ok_or_else(|| format!("device {} has no `{SHELL}` tool", self.device()))?;
        let mut parameters = Map::new();
        parameters.insert("command".into(), Value::String(command.to_string()));
        let call = ToolCall::action(SHELL, parameters.clone());
        let parameters = self.arguments(&tool, parameters);
        Ok(self.send(&call, tool, parameters).await)
    }

    /// `given` with the injected arguments `tool` takes, and the task's folder as the
    /// shell's working folder unless the call names one.
    fn arguments(&self, tool: &DeviceTool, mut given: Map<String, Value>) -> Map<String, Value> {
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
        given
    }

    /// Makes the task's folder on a Linux device and writes `files` into it; says where.
    pub(crate) async fn make_workspace(
        &mut self,
        files: &std::collections::BTreeMap<String, String>,
    ) -> Result<Option<String>, String> {
        if self.lease.device.platform != Platform::Linux || self.tool(SHELL).is_none() {
            if !files.is_empty() {
                return Err(format!(
                    "the task has files to write, and device {} has no `{SHELL}` to write them with",
                    self.device()
                ));
            }
            return Ok(None);
        }
        let dir = format!("/tmp/ufo-batch/{}", self.run.session_id);
        let made = self
            .shell(&format!(
                "rm -rf -- {d} && mkdir -p -- {d}",
                d = quoted(&dir)
            ))
            .await?;
        if made.status != ResultStatus::Success {
            return Err(format!(
                "cannot make the task's folder {dir} on device {}: {}",
                self.device(),
                made.error.unwrap_or_default()
            ));
        }
        self.workspace = Some(dir.clone());
        for (path, content) in files {
            use base64::Engine;
            let encoded = base64::engine::general_purpose::STANDARD.encode(content);
            let parent = Path::new(path)
                .parent()
                .map(|p| p.display().to_string())
                .unwrap_or_default();
            let mkdir = if parent.is_empty() {
                String::new()
            } else {
                format!("mkdir -p -- {} && ", quoted(&parent))
            };
            let written = self
                .shell(&format!(
                    "{mkdir}printf %s {} | base64 -d > {}",
                    quoted(&encoded),
                    quoted(path)
                ))
                .await?;
            if written.status != ResultStatus::Success {
                return Err(format!(
                    "cannot write {path} on device {}: {}",
                    self.device(),
                    written.error.unwrap_or_default()
                ));
            }
        }
        Ok(Some(dir))
    }
}

#[async_trait]
impl Executor for DeviceExecutor {
    async fn execute(&mut self, command: &ToolCall) -> ToolResult {
        let Some(tool) = self.tool(&command.tool_name).cloned() else {
            let names: Vec<&str> = self
                .lease
                .device
                .tools
                .iter()
                .map(|t| t.spec.name.as_ref())
                .collect();
            return ToolResult::failure(
                command,
                protocol::NAMESPACE,
                format!(
                    "device {} offers no tool `{}` (it has: {})",
                    self.device(),
                    command.tool_name,
                    names.join(", ")
                ),
                Value::Null,
            );
        };
        if let Some(given) = tool
            .injected
            .iter()
            .find(|a| command.parameters.contains_key(*a))
        {
            return ToolResult::failure(
                command,
                protocol::NAMESPACE,
                format!("`{given}` is filled in by the runner ([devices] inject); leave it out"),
                Value::Null,
            );
        }
        let parameters = self.arguments(&tool, command.parameters.clone());
        self.send(command, tool, parameters).await
    }

    fn fault(&self) -> Option<String> {
        self.fault.clone()
    }

    fn tools(&self) -> Option<Vec<ToolSpec>> {
        Some(
            self.lease
                .device
                .tools
                .iter()
                .map(|t| t.spec.clone())
                .collect(),
        )
    }

    async fn fetch(&mut self, paths: &[String]) -> Result<(), String> {
        if self.workspace.is_none() {
            return Ok(());
        }
        for path in paths {
            let got = self
                .shell(&format!("base64 -w0 -- {}", quoted(path)))
                .await?;
            let local = self.run.local_workspace.join(path);
            if got.status != ResultStatus::Success {
                // Not there on the device: not there for the check either.
                let _ = std::fs::remove_file(&local);
                continue;
            }
            use base64::Engine;
            let text = got.stdout().unwrap_or_default().trim();
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(text)
                .map_err(|e| format!("cannot read {path} from device {}: {e}", self.device()))?;
            if let Some(parent) = local.parent() {
                std::fs::create_dir_all(parent)
                    .map_err(|e| format!("cannot write {}: {e}", local.display()))?;
            }
            std::fs::write(&local, bytes)
                .map_err(|e| format!("cannot write {}: {e}", local.display()))?;
        }
        Ok(())
    }

    async fn shutdown(&mut self) -> Option<String> {
        let dir = self.workspace.take()?;
        if self.fault.is_some() {
            return Some(format!(
                "device {}'s folder {dir} was left (the device is gone)",
                self.device()
            ));
        }
        match self.shell(&format!("rm -rf -- {}", quoted(&dir))).await {
            Ok(r) if r.status == ResultStatus::Success => None,
            Ok(r) => Some(format!(
                "cannot remove {dir} on device {}: {}",
                self.device(),
                r.error.unwrap_or_default()
            )),
            Err(e) => Some(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_quoting_keeps_any_text_one_word() {
        assert_eq!(quoted("a b"), "'a b'");
        assert_eq!(quoted("it's"), r"'it'\''s'");
    }
}
