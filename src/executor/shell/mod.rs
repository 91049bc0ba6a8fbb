//! The `shell` executor: `execute_command`, `write_file`, `read_file` and `list_dir`,
//! all confined to the task's workspace. Commands run with `sh -c` in a scrubbed
//! environment, one process group (or supervisor) each (see `process`).

mod execute_command;
mod files;
mod tools;

#[cfg(all(test, unix))]
mod tests;

use std::path::{Path, PathBuf};
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Map, Value};

pub(crate) use tools::shell_tools;

use super::process::{ProcessGroup, ResourceLimits, SUPERVISOR_END};
use super::sandbox::Sandbox;
use super::{Executor, Service, ServiceSpec};
use crate::tool::{Failure, ToolCall, ToolResult};

const NAMESPACE: &str = "shell";

/// Knobs of the shell executor.
#[derive(Clone, Debug)]
pub(crate) struct ShellSettings {
    /// Timeout of a command that does not ask for one.
    pub(crate) command_timeout: Duration,
    /// The longest timeout a command may ask for.
    pub(crate) max_command_timeout: Duration,
    /// Bytes kept of each output stream and of a file read.
    pub(crate) output_limit: usize,
    /// How commands are confined.
    pub(crate) sandbox: Sandbox,
    /// Per-process resource limits.
    pub(crate) limits: ResourceLimits,
}

impl Default for ShellSettings {
    fn default() -> Self {
        Self {
            command_timeout: Duration::from_secs(60),
            max_command_timeout: Duration::from_secs(600),
            output_limit: 64 * 1024,
            sandbox: Sandbox::none(),
            limits: ResourceLimits::default(),
        }
    }
}

/// Runs shell tools inside one task's workspace.
pub(crate) struct ShellExecutor {
    workspace: PathBuf,
    /// Where commands may write (the workspace and the task's temp folder).
    writable: Vec<PathBuf>,
    /// Set when the executor itself failed (a shell that cannot start).
    fault: Option<Failure>,
    settings: ShellSettings,
    env: Vec<(String, String)>,
    /// The workspace's handle for the file tools, opened at their first use.
    confined: Option<std::sync::Arc<crate::confined::Confined>>,
    /// Process groups that outlived their command, ended at shutdown.
    leftovers: Vec<ProcessGroup>,
    /// The task's jail, once its first command started (with `--sandbox jail`).
    #[cfg(target_os = "linux")]
    jail: Option<crate::jail::Jail>,
    /// What the jail shows, when it is not the workspace alone (a desktop's world).
    #[cfg(target_os = "linux")]
    view: Option<crate::jail::JailOptions>,
}

impl ShellExecutor {
    /// The limits each of the task's processes has.
    pub(crate) fn limits(&self) -> ResourceLimits {
        self.settings.limits
    }

    /// An executor for `workspace` (which must exist).
    #[cfg(all(test, unix))]
    pub(crate) fn new(workspace: PathBuf, settings: ShellSettings) -> Self {
        Self::with_tmp(workspace, None, settings)
    }

    /// An executor for `workspace` whose commands get `tmp` as their private TMPDIR
    /// (both must exist). Both are the only places a sandboxed command may write.
    pub(crate) fn with_tmp(
        workspace: PathBuf,
        tmp: Option<PathBuf>,
        settings: ShellSettings,
    ) -> Self {
        let workspace = workspace.canonicalize().unwrap_or(workspace);
        let tmp = tmp.map(|t| t.canonicalize().unwrap_or(t));
        Self::with_real_paths(workspace, tmp, settings)
    }

    /// [`Self::with_tmp`] for folders whose paths are canonical already (a task's, under
    /// a resolved run dir: see `RunLayout::resolved`), which saves resolving them again.
    pub(crate) fn with_real_paths(
        workspace: PathBuf,
        tmp: Option<PathBuf>,
        settings: ShellSettings,
    ) -> Self {
        let env = command_env(&workspace, tmp.as_deref());
        let mut writable = vec![workspace.clone()];
        writable.extend(tmp);
        Self {
            workspace,
            writable,
            settings,
            env,
            confined: None,
            leftovers: Vec::new(),
            fault: None,
            #[cfg(target_os = "linux")]
            jail: None,
            #[cfg(target_os = "linux")]
            view: None,
        }
    }

    /// Commands that see the task's desktop as its programs do (an OSWorld task's
    /// LinuxAgent acts on its desktop's files): in a jail always, whose `/tmp` is the
    /// desktop's `tmp` (the display's socket is there), whose `/home/user` is the
    /// workspace, out of sight of `hidden` but for `kept`; with the desktop's
    /// variables.
    #[cfg(target_os = "linux")]
    pub(crate) fn see_desktop(
        &mut self,
        tmp: &Path,
        hidden: Vec<PathBuf>,
        kept: Vec<PathBuf>,
    ) -> Result<(), Failure> {
        let binary = crate::jail::jail_binary().ok_or_else(|| {
            Failure::environment(
                "desktop tasks run in a jail, and ufo-batch-jail is not beside ufo-batch (cargo build --release builds both)",
            )
        })?;
        std::fs::create_dir_all(tmp)
            .map_err(|e| Failure::environment(format!("cannot make {}: {e}", tmp.display())))?;
        self.settings.sandbox.confinement = super::sandbox::Confinement::Jail { binary };
        let mut writable = vec![self.workspace.clone(), tmp.to_path_buf()];
        writable.dedup();
        self.view = Some(crate::jail::JailOptions {
            writable,
            tmp: Some(tmp.to_path_buf()),
            home: Some(self.workspace.clone()),
            kept,
            hidden,
            desktop: true,
        });
        for (key, value) in [
            ("HOME", "/home/user"),
            ("TMPDIR", "/tmp"),
            ("DISPLAY", ":0"),
            ("XDG_RUNTIME_DIR", "/tmp/xdg"),
            ("DBUS_SESSION_BUS_ADDRESS", "unix:path=/tmp/session-bus"),
        ] {
            self.set_env(key, value);
        }
        Ok(())
    }

    /// The same, where there are no jails: OSWorld's desktops are Linux's.
    #[cfg(not(target_os = "linux"))]
    pub(crate) fn see_desktop(
        &mut self,
        _tmp: &Path,
        _hidden: Vec<PathBuf>,
        _kept: Vec<PathBuf>,
    ) -> Result<(), Failure> {
        Err(Failure::environment("OSWorld's desktops run on Linux only"))
    }

    /// Adds a variable to the commands' environment.
    pub(crate) fn set_env(&mut self, key: &str, value: &str) {
        self.env.retain(|(k, _)| k != key);
        self.env.push((key.to_string(), value.to_string()));
    }
    /// A command that failed by the agent's doing (its arguments, its path).
    fn fail(&self, command: &ToolCall, error: String) -> ToolResult {
        ToolResult::failure(command, NAMESPACE, Failure::agent(error), Value::Null)
    }

    /// A command that could not run because the means of running it broke (its jail,
    /// a process that cannot start): the executor's fault from now on.
    fn broke(&mut self, command: &ToolCall, failure: Failure) -> ToolResult {
        self.fault = Some(failure.clone());
        ToolResult::failure(command, NAMESPACE, failure, Value::Null)
    }
}

#[async_trait]
impl Executor for ShellExecutor {
    async fn execute(&mut self, command: &ToolCall) -> ToolResult {
        if let Some(spec) = shell_tools().iter().find(|t| t.name == command.tool_name) {
            if let Err(e) = spec.check_arguments(&command.parameters) {
                return self.fail(command, e.to_string());
            }
        } else {
            let names: Vec<&str> = shell_tools().iter().map(|t| t.name.as_ref()).collect();
            let error = format!(
                "unknown tool `{}`; the shell executor has: {}",
                command.tool_name,
                names.join(", ")
            );
            return self.fail(command, error);
        }
        match command.tool_name.as_str() {
            "execute_command" => self.execute_command(command).await,
            "write_file" => self.write_file(command).await,
            "read_file" => self.read_file(command).await,
            "list_dir" => self.list_dir(command).await,
            _ => unreachable!("checked against shell_tools above"),
        }
    }

    fn fault(&self) -> Option<Failure> {
        self.fault.clone()
    }

    async fn start_service(&mut self, spec: &ServiceSpec<'_>) -> Result<Service, Failure> {
        self.start_service_process(spec).await
    }

    async fn shutdown(&mut self) -> Option<String> {
        #[cfg(target_os = "linux")]
        if let Some(jail) = self.jail.take() {
            let left = jail.end().await as usize;
            return (left > 0).then(|| {
                format!(
                    "ended {} left running by commands",
                    crate::text::plural(left, "process")
                )
            });
        }
        let alive = self
            .leftovers
            .iter_mut()
            .map(|g| g.alive())
            .filter(|&a| a)
            .count();
        // All asked at once, then waited for together.
        for group in &mut self.leftovers {
            group.kill();
        }
        let deadline = tokio::time::Instant::now() + SUPERVISOR_END;
        let mut unended = 0;
        for group in self.leftovers.drain(..) {
            unended += usize::from(!group.ended_by(deadline).await);
        }
        let what = |n| crate::text::plural(n, "background process group");
        match (alive, unended) {
            (0, 0) => None,
            (n, 0) => Some(format!("ended {} left running by commands", what(n))),
            (n, u) => Some(format!(
                "{} left running by commands: {u} not ended within {}s (still being ended)",
                what(n.max(u)),
                SUPERVISOR_END.as_secs()
            )),
        }
    }
}

pub(super) fn str_arg<'a>(args: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    args.get(key).and_then(Value::as_str)
}

/// The environment a command sees: enough to work, nothing secret. The runner's own
/// variables (API keys among them) are not passed on.
fn command_env(workspace: &Path, tmp: Option<&Path>) -> Vec<(String, String)> {
    let path = std::env::var("PATH").unwrap_or_else(|_| "/usr/local/bin:/usr/bin:/bin".to_string());
    let lang = std::env::var("LANG").unwrap_or_else(|_| "C.UTF-8".to_string());
    vec![
        ("PATH".to_string(), path),
        ("HOME".to_string(), workspace.display().to_string()),
        ("LANG".to_string(), lang),
        ("TERM".to_string(), "dumb".to_string()),
        (
            "TMPDIR".to_string(),
            tmp.unwrap_or(workspace).display().to_string(),
        ),
    ]
}
