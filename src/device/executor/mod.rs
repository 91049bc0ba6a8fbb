//! Carrying out a task's commands on a leased device: each command goes as one AIP
//! `command` frame to the agent whose tool set has the tool, with the arguments the
//! runner injects filled in (never shown to a model, never written), and its result
//! comes back as a UFO Result (`send`). A command with no answer within the limit fails
//! (UFO's clients answer nothing for one they cannot route); a device that disconnects
//! makes the attempt an infrastructure error, retried on another device.
//!
//! On a Linux device the task gets a folder of its own, made and removed with the
//! device's `execute_command`, in which its commands run (`workspace`); its `files` are
//! written there and the files its checks read are fetched from there into the local
//! workspace (`fetch`). A Windows device's screen is observed for its agents, and the
//! window and controls they name found in what it showed (`screen`).

mod fetch;
mod screen;
mod send;
mod workspace;

use std::path::PathBuf;

use async_trait::async_trait;
use serde_json::{Map, Value};

use super::SHELL;
use super::error::DeviceError;
use super::fleet::{Lease, Platform};
use super::observe;
use super::protocol;
use super::tools::DeviceTool;
use crate::executor::{Executor, Scope, StepScreens};
use crate::mcp::Injected;
use crate::tool::{Blamed, Failure, ResultStatus, ToolCall, ToolResult, ToolSpec};

#[cfg(test)]
pub(super) use screen::named_target;

/// UFO's HostAgent tool that selects the app window the AppAgent then works in.
const SELECT_WINDOW: &str = "select_application_window";
/// Its own time limit when a call gives none, in seconds.
const UFO_TOOL_TIMEOUT: u64 = 30;

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
    /// The task's folder (where a Windows device's screenshots are saved).
    pub(crate) dir: crate::rundir::layout::TaskDir,
}

/// Runs one task's commands on one device.
pub(crate) struct DeviceExecutor {
    lease: Lease,
    run: DeviceRun,
    /// The task's folder on the device, once made.
    workspace: Option<String>,
    fault: Option<Failure>,
    /// Commands sent (each frame's `response_id` is unique).
    sent: u64,
    /// A Windows device's windows as last listed (to name one by `id` and `name`).
    windows: Vec<crate::desktop::backend::AppWindow>,
    /// A Windows device's controls as last listed (to name one by `id` and `name`).
    controls: Vec<crate::desktop::control::Control>,
    /// A command's answer was waited for when the task ended (it was stopped): the
    /// device is still busy with it.
    pending: bool,
    /// The root name of the app a Windows device's HostAgent selected (`WINWORD.EXE`):
    /// the AppAgent's calls go to that app's tool set.
    root: Option<String>,
    /// The selected window's name, which UFO sends as the AppAgent's `process_name`
    /// (its COM servers find the document by it).
    process: Option<String>,
    /// The tools the selected app adds (its COM tools), and the app they were listed for.
    app_tools: Vec<DeviceTool>,
    app_tools_of: Option<String>,
    /// A command got no answer in time.
    unanswered: bool,
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
            windows: Vec::new(),
            controls: Vec::new(),
            pending: false,
            root: None,
            process: None,
            app_tools: Vec::new(),
            app_tools_of: None,
            unanswered: false,
        }
    }

    /// The device's id.
    pub(crate) fn device(&self) -> &str {
        &self.lease.device.id
    }

    fn tool(&self, name: &str) -> Option<&DeviceTool> {
        self.lease
            .device
            .tools
            .iter()
            .chain(&self.app_tools)
            .find(|t| t.spec.name == name)
    }
}

#[async_trait]
impl Executor for DeviceExecutor {
    async fn execute(&mut self, command: &ToolCall) -> ToolResult {
        let Some(tool) = self.tool(&command.tool_name).cloned() else {
            // An agent is given the device's own tools, so only a recorded plan calls one
            // the device lacks: the device cannot run this task (another may), which is
            // no verdict on the task.
            let failure = DeviceError::NoSuchTool {
                device: self.device().to_string(),
                tool: command.tool_name.clone(),
                has: self
                    .lease
                    .device
                    .tools
                    .iter()
                    .map(|t| t.spec.name.to_string())
                    .collect(),
            }
            .failure();
            self.fault.get_or_insert_with(|| failure.clone());
            return ToolResult::failure(command, protocol::NAMESPACE, failure, Value::Null);
        };
        if let Some(given) = tool
            .injected
            .iter()
            .find(|a| command.parameters.contains_key(*a))
        {
            return ToolResult::failure(
                command,
                protocol::NAMESPACE,
                DeviceError::InjectedGiven(given.clone()).failure(),
                Value::Null,
            );
        }
        if tool.spec.name == SELECT_WINDOW {
            // UFO's window selection picks from the last desktop listing: take one now.
            let mut refresh = Map::new();
            refresh.insert("refresh_app_windows".into(), Value::Bool(true));
            if let Some(Ok(listed)) = self.collect("get_desktop_app_info", refresh).await {
                self.windows = observe::windows(&listed);
            }
        }
        let parameters = self.labelled(&tool, command.parameters.clone());
        let parameters = match self.task_paths(&tool, parameters) {
            Ok(parameters) => self.arguments(&tool, parameters),
            Err(why) => {
                return ToolResult::failure(
                    command,
                    protocol::NAMESPACE,
                    Failure::agent(why),
                    Value::Null,
                );
            }
        };
        let capped = parameters
            .get("timeout")
            .filter(|t| command.parameters.get("timeout") != Some(*t))
            .and_then(Value::as_u64);
        let select = tool.spec.name == SELECT_WINDOW;
        let mut result = self.send(command, tool, parameters).await;
        if select && result.status == ResultStatus::Success {
            self.selected(&mut result);
            self.list_app_tools().await;
        }
        if let Some(cap) = capped
            && result.status == ResultStatus::Failure
            && let Some(error) = &mut result.error
            && (error.contains("imeout") || error.contains("timed out"))
        {
            // A device's own words ("Timeout after 1s.") do not say why so short.
            error.push_str(&format!(
                " (the runner gave the command {cap}s on the device: [devices] command_timeout less 2 s, so that it ends before the runner stops waiting)"
            ));
        }
        result
    }

    async fn begin_step(&mut self, step: u32, scope: Scope) -> Option<StepScreens> {
        if self.lease.device.platform != Platform::Windows || self.fault.is_some() {
            return None;
        }
        match self.observe(Some(step), scope).await {
            Ok((note, view)) => StepScreens::saved(&self.run.dir, step, note, view),
            Err(_) => None,
        }
    }

    async fn end_session(&mut self) -> Option<String> {
        if self.lease.device.platform != Platform::Windows || self.fault.is_some() {
            return None;
        }
        Some(match self.observe(None, Scope::App).await {
            Ok((note, _)) => format!("final screen {note}"),
            Err(e) => format!("cannot take the final screenshot: {e}"),
        })
    }

    fn fault(&self) -> Option<Failure> {
        self.fault.clone()
    }

    fn tools(&self) -> Option<Vec<ToolSpec>> {
        Some(
            self.lease
                .device
                .tools
                .iter()
                .chain(&self.app_tools)
                .map(|t| t.spec.clone())
                .collect(),
        )
    }

    async fn fetch(&mut self, wanted: &[crate::executor::Fetch]) -> Result<(), Failure> {
        if wanted.is_empty() {
            return Ok(());
        }
        match self.fetch_all(wanted).await {
            Ok(()) => Ok(()),
            Err(why) => {
                // The checks cannot see what the task did here: no verdict.
                let failure = DeviceError::ChecksCannotBeMade {
                    device: self.device().to_string(),
                    source: Box::new(why),
                }
                .failure();
                self.fault.get_or_insert_with(|| failure.clone());
                Err(failure)
            }
        }
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
            Err(e) => Some(e.to_string()),
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
