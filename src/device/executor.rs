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
use super::observe;
use super::protocol;
use super::tools::DeviceTool;
use crate::executor::{Executor, Listed, Scope, ScreenView, StepScreens};
use crate::mcp::Injected;
use crate::tool::{Blame, Failure, ResultStatus, ToolCall, ToolResult, ToolSpec, ToolType};

/// The tool that runs shell commands on a Linux device (UFO's Linux MCP server's).
const SHELL: &str = "execute_command";
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

    /// The tools the selected app adds on a Windows device (its COM tools, which UFO's
    /// client offers the AppAgent by the app's `root_name`, config/ufo/mcp.yaml), listed
    /// once per app selected.
    async fn list_app_tools(&mut self) {
        let Some(root) = self.root.clone() else {
            return;
        };
        if self.app_tools_of.as_deref() == Some(root.as_str()) {
            return;
        }
        self.app_tools_of = Some(root.clone());
        let Some(listing) = self.tool("list_tools").cloned().or_else(|| {
            // The meta tool is not among the listed ones: asked of the AppAgent.
            let route = self
                .lease
                .device
                .tools
                .iter()
                .find(|t| t.route.agent_name == "AppAgent")?
                .route
                .clone();
            Some(DeviceTool {
                spec: ToolSpec {
                    name: "list_tools".into(),
                    description: "".into(),
                    params: Vec::new(),
                },
                tool_type: ToolType::Action,
                route,
                injected: Vec::new(),
                unfilled: Vec::new(),
            })
        }) else {
            return;
        };
        let call = ToolCall::action("list_tools", Map::new());
        let listed = self.send(&call, listing.clone(), Map::new()).await;
        if listed.status != ResultStatus::Success {
            return;
        }
        let injected: Vec<String> = self.run.inject.iter().map(|i| i.argument.clone()).collect();
        let is_injected = |name: &str| injected.iter().any(|i| i == name);
        let added: Vec<DeviceTool> =
            super::tools::from_listing(&listed.result, &listing.route, &is_injected)
                .into_iter()
                .filter(|t| {
                    self.lease
                        .device
                        .tools
                        .iter()
                        .all(|d| d.spec.name != t.spec.name)
                })
                .collect();
        self.app_tools = added;
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
        if matches!(answer, Err(CallError::Timeout(_))) {
            self.unanswered = true;
        }
        match answer {
            Ok(results) => {
                let result = protocol::result_of(&call, &results).scrubbed();
                if let Some(argument) = crate::tool::refused_injection(&result, &tool.injected) {
                    // The runner's own argument refused: no verdict on the agent, and
                    // every call would be refused the same way.
                    let fault = Failure::new(
                        Blame::Config,
                        format!(
                            "device {} refused the `{argument}` the runner fills in ([devices] inject): {}",
                            self.device(),
                            result.error.as_deref().unwrap_or_default()
                        ),
                    );
                    self.fault = Some(fault.clone());
                    return ToolResult::failure(&call, protocol::NAMESPACE, fault, Value::Null);
                }
                result
            }
            Err(CallError::Timeout(d)) => {
                // Only tools the device listed are sent, with the type it listed: a
                // command with no answer is one the device is stuck on, or one that
                // outlasts the runner's wait. No verdict on the task, which another
                // device (or another try) may run.
                let fault = Failure::environment(format!(
                    "device {} sent no result within {}s: it is stuck, or the command outlasts [devices] command_timeout",
                    self.device(),
                    d.as_secs()
                ));
                self.fault = Some(fault.clone());
                ToolResult::failure(&call, protocol::NAMESPACE, fault, Value::Null)
            }
            Err(CallError::Gone(why)) => {
                let fault =
                    Failure::environment(format!("device {} disconnected: {why}", self.device()));
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

    /// Calls a data collection tool by name; `None` when the device lacks it, `Err` when
    /// it failed.
    async fn collect(
        &mut self,
        name: &str,
        arguments: Map<String, Value>,
    ) -> Option<Result<Value, String>> {
        let tool = self.tool(name)?.clone();
        let mut call = ToolCall::action(name, arguments.clone());
        call.tool_type = ToolType::DataCollection;
        let arguments = self.arguments(&tool, arguments);
        let r = self.send(&call, tool, arguments).await;
        Some(match r.status {
            ResultStatus::Success => Ok(r.result),
            _ => Err(format!("{name} failed: {}", r.error.unwrap_or_default())),
        })
    }

    /// Observes a Windows device's screen for `scope` (UFO's data collection tools);
    /// saves it as step `step`'s screenshots (the final ones without a step).
    async fn observe(
        &mut self,
        step: Option<u32>,
        scope: Scope,
    ) -> Result<(String, ScreenView), String> {
        let clock = std::time::Instant::now();
        let mut answers = Vec::new();
        for ask in observe::asks(scope) {
            let answer = self
                .collect(ask.tool, ask.arguments)
                .await
                .ok_or_else(|| {
                    format!(
                        "device {} has no `{}` to observe its screen with",
                        self.device(),
                        ask.tool
                    )
                })??;
            answers.push(answer);
        }
        let view = observe::view(scope, &answers)?;
        match &view.listed {
            Listed::Windows(w) => self.windows = w.clone(),
            Listed::Controls(c) => self.controls = c.clone(),
        }
        view.clean
            .save(&self.run.dir.screenshot(step, false))
            .map_err(|e| e.to_string())?;
        view.annotated
            .save(&self.run.dir.screenshot(step, true))
            .map_err(|e| e.to_string())?;
        let what = match &view.listed {
            Listed::Windows(w) => format!("{} application windows", w.len()),
            Listed::Controls(c) => format!("{} controls", c.len()),
        };
        let note = format!(
            "observed {what} on device {} in {:.3}s",
            self.device(),
            clock.elapsed().as_secs_f64()
        );
        Ok((note, view))
    }

    /// The arguments of a call of `tool`, its control or window named as UFO's tools
    /// name them (see [`named_target`]).
    fn labelled(&self, tool: &DeviceTool, given: Map<String, Value>) -> Map<String, Value> {
        let takes = |p: &str| tool.spec.params.iter().any(|x| x.name == p);
        named_target(
            &tool.spec.name,
            &takes,
            given,
            &self.windows,
            &self.controls,
        )
    }

    /// A successful `select_application_window` answer (`{"root_name", "window_info":
    /// {"name", "title", ...}}`, ui_mcp_server.py) with the window and application named
    /// as the agents read them; the app's root name routes the AppAgent's next calls
    /// (UFO's client picks an app's tool set, its COM tools among them, by `root_name`).
    fn selected(&mut self, result: &mut ToolResult) {
        let root = result
            .result
            .get("root_name")
            .and_then(Value::as_str)
            .map(str::to_string);
        let info = result.result.get("window_info");
        let title = info
            .and_then(|i| i.get("title").or_else(|| i.get("name")))
            .and_then(Value::as_str)
            .map(str::to_string);
        self.process = info
            .and_then(|i| i.get("name").or_else(|| i.get("title")))
            .and_then(Value::as_str)
            .map(str::to_string);
        if let Value::Object(m) = &mut result.result {
            if let Some(title) = &title {
                m.insert("window".into(), Value::String(title.clone()));
            }
            if let Some(root) = &root {
                m.insert("application".into(), Value::String(root.clone()));
            }
        }
        self.root = root;
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

    /// Makes the task's folder on a Linux device and writes `files` into it; says how
    /// it went. UFO's own Linux tool refuses to make folders (it runs only allow-listed
    /// read-only commands): then the task runs in the device's own working folder, and a
    /// task with files to write cannot run there.
    pub(crate) async fn make_workspace(
        &mut self,
        files: &std::collections::BTreeMap<String, String>,
    ) -> Result<Option<String>, Failure> {
        // Files the task file asks for that the device cannot take: the task file's.
        let refused = |why: String| Failure::new(Blame::TaskFile, why);
        if self.lease.device.platform != Platform::Linux || self.tool(SHELL).is_none() {
            if !files.is_empty() {
                return Err(refused(format!(
                    "the task has files to write, and device {} has no `{SHELL}` to write them with",
                    self.device()
                )));
            }
            return Ok(None);
        }
        let failed = Failure::environment;
        let dir = format!("/tmp/ufo-batch/{}", self.run.session_id);
        // What an earlier invocation left (best effort: the folder is made fresh below).
        let _ = self
            .shell(&format!("rm -rf -- {}", quoted(&dir)))
            .await
            .map_err(failed)?;
        if let Some(fault) = self.fault.clone() {
            return Err(fault);
        }
        let made = self
            .shell(&format!("mkdir -p -- {}", quoted(&dir)))
            .await
            .map_err(failed)?;
        if let Some(fault) = self.fault.clone() {
            return Err(fault);
        }
        if self.unanswered {
            return Err(failed(format!(
                "device {} does not answer: {}",
                self.device(),
                made.error.unwrap_or_default()
            )));
        }
        if made.status != ResultStatus::Success {
            let why = made.error.unwrap_or_default();
            if !files.is_empty() {
                return Err(refused(format!(
                    "device {} refused to make the task's folder ({why}), so the task's files cannot be written there",
                    self.device()
                )));
            }
            return Ok(Some(format!(
                "device {} refused to make the task's folder ({why}): the task runs in the device's own working folder",
                self.device()
            )));
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
                .await
                .map_err(failed)?;
            if written.status != ResultStatus::Success {
                let why = format!(
                    "cannot write {path} on device {}: {}",
                    self.device(),
                    written.error.unwrap_or_default()
                );
                // The device broke (the fault says whose), or it refused the file.
                return Err(match &self.fault {
                    Some(fault) => Failure::new(fault.blame, why),
                    None => refused(why),
                });
            }
        }
        Ok(Some(format!("the task's folder on the device: {dir}")))
    }
}

impl DeviceExecutor {
    /// Brings each file the checks read from the device (from the task's folder there,
    /// or the device's own working folder) into the local workspace, with the commands
    /// UFO's Linux tool allows: `test` for what a path is, `cat` for a file's text, and
    /// `base64` for a document's bytes where the device has it (UFO's own tool does
    /// not: `Err`, as a document check cannot be made there). A file the device says is
    /// not there is not there locally either; a folder is a folder; a link, a file that
    /// cannot be read there, or a text that is not UTF-8 is `Err`: the checks cannot be
    /// made, which is no verdict.
    async fn fetch_all(&mut self, wanted: &[crate::executor::Fetch]) -> Result<(), String> {
        use crate::executor::FetchKind;
        if self.tool(SHELL).is_none() {
            return Err(format!("it has no `{SHELL}` to read files with"));
        }
        let local = crate::confined::Confined::open(&self.run.local_workspace)
            .map_err(|e| format!("cannot open the local workspace: {e}"))?;
        let mut fetched: Vec<&str> = Vec::new();
        // Contents first, then what only needs to exist.
        let mut order: Vec<&crate::executor::Fetch> = wanted.iter().collect();
        order.sort_by_key(|f| f.kind == FetchKind::Exists);
        for want in order {
            if fetched.contains(&want.path.as_str()) {
                continue;
            }
            let rel =
                crate::relpath::RelPath::parse(&want.path, false).map_err(|e| e.to_string())?;
            // `./` first: a name that begins with `-` is never read as an option.
            let at = quoted(&format!("./{}", rel.as_path().display()));
            if self.ran(&format!("test -L {at}")).await? {
                return Err(format!(
                    "{} is a symbolic link there, and checks do not follow links",
                    want.path
                ));
            }
            let content = match want.kind {
                FetchKind::Exists => None,
                FetchKind::Text => self.text_on_device(&at, &want.path).await?,
                FetchKind::Bytes => self.bytes_on_device(&at, &want.path).await?,
            };
            let kept = match content {
                Some(bytes) => local.write(&rel, &bytes, false),
                None => match self.what_is(&at, &want.path, want.kind).await? {
                    OnDevice::Absent => local.remove(&rel),
                    OnDevice::Folder => local.make_dirs(&rel),
                    OnDevice::File => local.write(&rel, b"", false),
                },
            };
            kept.map_err(|e| format!("cannot keep {} locally: {e}", want.path))?;
            fetched.push(&want.path);
        }
        Ok(())
    }

    /// What is at `at` (quoted) when its content could not be read (or was not asked
    /// for): not there, a folder, or (for a mere existence check) a file. A file whose
    /// content was asked for and could not be read is `Err`.
    async fn what_is(
        &mut self,
        at: &str,
        path: &str,
        kind: crate::executor::FetchKind,
    ) -> Result<OnDevice, String> {
        if !self.ran(&format!("test -e {at}")).await? {
            return Ok(OnDevice::Absent);
        }
        if self.ran(&format!("test -d {at}")).await? {
            return Ok(OnDevice::Folder);
        }
        if kind == crate::executor::FetchKind::Exists {
            return Ok(OnDevice::File);
        }
        Err(format!("{path} is there but cannot be read there"))
    }

    /// Whether `command` ran and succeeded (`false`: it ran and did not); `Err` when the
    /// device refused or failed to run it.
    async fn ran(&mut self, command: &str) -> Result<bool, String> {
        let got = self.shell(command).await?;
        match (got.status, got.exit_code()) {
            (ResultStatus::Success, _) => Ok(true),
            (_, Some(_)) => Ok(false),
            _ => Err(format!(
                "`{command}`: {}",
                got.error.unwrap_or_else(|| "it failed".into())
            )),
        }
    }

    /// The text of the file at `at` (quoted) on the device; `None` when `cat` ran and
    /// could not read it (see [`Self::what_is`]).
    async fn text_on_device(&mut self, at: &str, path: &str) -> Result<Option<Vec<u8>>, String> {
        let command = format!("cat {at}");
        let got = self.shell(&command).await?;
        match (got.status, got.exit_code()) {
            (ResultStatus::Success, _) => {
                let text = got.stdout().unwrap_or_default();
                // UFO's server decodes output with `errors="replace"`: a file that is not
                // UTF-8 comes back with U+FFFD, and is not what the device holds.
                if text.contains('\u{fffd}') {
                    return Err(format!(
                        "{path} is not UTF-8 text, so it does not come back as it is there"
                    ));
                }
                Ok(Some(text.as_bytes().to_vec()))
            }
            (_, Some(_)) => Ok(None),
            _ => Err(format!(
                "`{command}`: {}",
                got.error.unwrap_or_else(|| "it failed".into())
            )),
        }
    }

    /// The bytes of the file at `at` (quoted) on the device, through `base64`; a text
    /// document (`.txt`, `.csv`, `.md`, `.tsv`) through `cat` where `base64` is refused.
    /// `None` when it is not there (or not a file).
    async fn bytes_on_device(&mut self, at: &str, path: &str) -> Result<Option<Vec<u8>>, String> {
        use base64::Engine;
        let command = format!("base64 -w0 {at}");
        let got = self.shell(&command).await?;
        match (got.status, got.exit_code()) {
            (ResultStatus::Success, _) => {
                let text = got.stdout().unwrap_or_default().trim();
                base64::engine::general_purpose::STANDARD
                    .decode(text)
                    .map(Some)
                    .map_err(|e| format!("cannot read {path}: {e}"))
            }
            (_, Some(_)) => Ok(None),
            _ => {
                let texty = [".txt", ".csv", ".md", ".tsv", ".text"]
                    .iter()
                    .any(|end| path.to_ascii_lowercase().ends_with(end));
                if texty {
                    return self.text_on_device(at, path).await;
                }
                // A document the task did not make is the task's failure, not a check
                // that cannot be made.
                if !self.ran(&format!("test -e {at}")).await? {
                    return Ok(None);
                }
                Err(format!(
                    "it cannot send a document's bytes (`{command}`: {}), so a document check of {path} cannot be made there",
                    got.error.unwrap_or_else(|| "it failed".into())
                ))
            }
        }
    }
}

/// What a path is on a device, when its content is not what a check reads.
enum OnDevice {
    /// Nothing there.
    Absent,
    /// A folder.
    Folder,
    /// A file (for a check that it exists).
    File,
}

/// UFO's Windows UI tools name a control, and `select_application_window` a window, by
/// both `id` (its label in the last listing) and `name` (`ui_mcp_server.py`: each declares
/// `id: str` and `name: str`, both required, and FastMCP refuses any other argument). A
/// call of `tool` (which `takes` the parameters it does) that names one by `name` (and
/// `control_type`), as recordings do, or by `id` alone, has the other found in the last
/// listing (`windows`, `controls`); `control_type`, which UFO's tools do not take, only
/// helps to find it.
pub(super) fn named_target(
    tool: &str,
    takes: &dyn Fn(&str) -> bool,
    mut given: Map<String, Value>,
    windows: &[crate::desktop::backend::AppWindow],
    controls: &[crate::desktop::control::Control],
) -> Map<String, Value> {
    if !(takes("id") && takes("name")) {
        return given;
    }
    let text = |v: Option<&Value>| match v {
        Some(Value::String(s)) => Some(s.clone()),
        Some(Value::Number(n)) => Some(n.to_string()),
        _ => None,
    };
    let id = text(given.get("id"));
    let name = text(given.get("name"));
    let wanted_type = text(given.get("control_type"))
        .and_then(|t| crate::desktop::control::ControlType::parse(&t));
    // The id given decides when it is listed and its name is the one given (UFO works by
    // id: `_verify_id`); a stale id (a recording's, from another screen) gives way to the
    // name; a name that finds nothing leaves the id as given.
    let name_given = name.as_deref().filter(|n| !n.is_empty());
    let found = if tool == SELECT_WINDOW {
        let by_id = id
            .as_deref()
            .and_then(|i| windows.iter().find(|w| w.id == i));
        let by_name = name_given.and_then(|n| {
            let n = n.to_lowercase();
            let exact = windows.iter().find(|w| w.name.to_lowercase() == n);
            let mut partial = windows
                .iter()
                .filter(|w| w.name.to_lowercase().contains(&n));
            // A part of a title decides only when it is one window's.
            exact.or_else(|| match (partial.next(), partial.next()) {
                (Some(one), None) => Some(one),
                _ => None,
            })
        });
        match by_id {
            Some(w) if name_given.is_none_or(|n| n.eq_ignore_ascii_case(&w.name)) => Some(w),
            _ => by_name.or(by_id),
        }
        .map(|w| (w.id.clone(), w.name.clone()))
    } else {
        let by_id = id
            .as_deref()
            .and_then(|i| controls.iter().find(|c| c.id == i));
        let by_name = name_given.and_then(|n| {
            controls
                .iter()
                .find(|c| c.name == n && wanted_type.is_none_or(|t| t == c.control_type))
        });
        match by_id {
            Some(c) if name_given.is_none_or(|n| n == c.name) => Some(c),
            _ => by_name.or(by_id),
        }
        .map(|c| (c.id.clone(), c.name.clone()))
    };
    let (id, name) = match found {
        Some(found) => found,
        None => (id.unwrap_or_default(), name.unwrap_or_default()),
    };
    given.insert("id".into(), Value::String(id));
    given.insert("name".into(), Value::String(name));
    if !takes("control_type") {
        given.remove("control_type");
    }
    given
}

#[async_trait]
impl Executor for DeviceExecutor {
    async fn execute(&mut self, command: &ToolCall) -> ToolResult {
        let Some(tool) = self.tool(&command.tool_name).cloned() else {
            // An agent is given the device's own tools, so only a recorded plan calls one
            // the device lacks: the device cannot run this task (another may), which is
            // no verdict on the task.
            let names: Vec<&str> = self
                .lease
                .device
                .tools
                .iter()
                .map(|t| t.spec.name.as_ref())
                .collect();
            let why = format!(
                "device {} offers no tool `{}` (it has: {}), so it cannot run this task",
                self.device(),
                command.tool_name,
                names.join(", ")
            );
            let failure = Failure::environment(why);
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
                Failure::agent(format!(
                    "`{given}` is filled in by the runner ([devices] inject); leave it out"
                )),
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
        let parameters = self.arguments(&tool, parameters);
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
                let failure = Failure::environment(format!(
                    "the checks cannot be made on device {}: {why}",
                    self.device()
                ));
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
