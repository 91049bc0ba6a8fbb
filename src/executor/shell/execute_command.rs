//! `execute_command`: one shell command in the workspace, through the sandbox, with its
//! own process group, timeout and bounded output.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::{NAMESPACE, ShellExecutor, str_arg};
use crate::executor::process::{self, Launcher, Spec};
#[cfg(target_os = "linux")]
use crate::executor::sandbox::Confinement;
#[cfg(target_os = "linux")]
use crate::jail::Jail;
use crate::relpath::resolve_in;
use crate::tool::{ToolCall, ToolResult};
use crate::units::seconds;

impl ShellExecutor {
    /// Starts the task's jail before its first command, when commands run in one.
    async fn start_jail(&mut self) -> Result<(), String> {
        #[cfg(target_os = "linux")]
        if let Confinement::Jail { binary } = &self.settings.sandbox.confinement
            && self.jail.is_none()
        {
            self.jail = Some(Jail::start(binary, &self.writable).await?);
        }
        Ok(())
    }

    pub(super) async fn execute_command(&mut self, command: &ToolCall) -> ToolResult {
        let args = &command.parameters;
        let line = str_arg(args, "command").unwrap_or_default().to_string();
        let timeout = match args.get("timeout").and_then(Value::as_u64) {
            Some(secs) => Duration::from_secs(secs.max(1)).min(self.settings.max_command_timeout),
            None => self.settings.command_timeout,
        };
        let cwd = match str_arg(args, "cwd") {
            Some(dir) => match resolve_in(&self.workspace, dir, true) {
                Ok(p) if p.is_dir() => p,
                Ok(_) => {
                    return self.fail(
                        command,
                        format!("cwd `{dir}` is not a folder in the workspace"),
                    );
                }
                Err(e) => return self.fail(command, e.to_string()),
            },
            None => self.workspace.clone(),
        };
        let shell = ["/bin/sh".to_string(), "-c".to_string(), line];
        let (argv, spawn_limits) =
            self.settings
                .sandbox
                .wrap(&shell, &self.writable, &cwd, self.settings.limits);
        let clock = Instant::now();
        if let Err(why) = self.start_jail().await {
            self.fault = Some(why.clone());
            return self.fail(command, why);
        }
        let spec = Spec {
            argv: &argv,
            cwd: &cwd,
            env: &self.env,
            timeout,
            output_limit: self.settings.output_limit,
            limits: spawn_limits,
        };
        #[cfg(target_os = "linux")]
        let launcher = match self.jail.as_mut() {
            Some(jail) => Launcher::Jail(jail),
            None => Launcher::Direct,
        };
        #[cfg(not(target_os = "linux"))]
        let launcher = Launcher::Direct;
        let finished = match process::run(spec, launcher).await {
            Ok(f) => f,
            Err(e) => {
                // The machine, not the command: the attempt ends as an infrastructure error.
                let why = format!("could not start {}: {e}", argv[0]);
                self.fault = Some(why.clone());
                return self.fail(command, why);
            }
        };
        let result = json!({
            "exit_code": finished.exit_code,
            "stdout": finished.stdout.text(),
            "stderr": finished.stderr.text(),
            "timed_out": finished.timed_out,
            "signal": finished.signal,
            "stdout_omitted_bytes": finished.stdout.dropped(),
            "stderr_omitted_bytes": finished.stderr.dropped(),
            "duration_s": seconds(clock.elapsed()),
        });
        if let Some(group) = finished.leftover {
            self.leftovers.push(group);
        }
        if finished.timed_out {
            let error = format!(
                "the command timed out after {}; it and every process it started were killed",
                humantime::format_duration(timeout)
            );
            return ToolResult::failure(command, NAMESPACE, error, result);
        }
        match (finished.exit_code, finished.signal) {
            (Some(0), _) => ToolResult::success(command, NAMESPACE, result),
            (Some(code), _) => {
                let stderr = crate::text::first_line(&finished.stderr.text(), 200);
                let error = if stderr.is_empty() {
                    format!("exit code {code}")
                } else {
                    format!("exit code {code}: {stderr}")
                };
                ToolResult::failure(command, NAMESPACE, error, result)
            }
            (None, signal) => {
                let error = format!(
                    "killed by signal {}",
                    signal.map_or("?".into(), |s| s.to_string())
                );
                ToolResult::failure(command, NAMESPACE, error, result)
            }
        }
    }
}
