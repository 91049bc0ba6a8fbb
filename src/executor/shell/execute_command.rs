//! `execute_command`: one shell command in the workspace, through the sandbox, with its
//! own process group, timeout and bounded output.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::{NAMESPACE, ShellExecutor, str_arg};
use crate::executor::process::{self, Launcher, Spec};
#[cfg(target_os = "linux")]
use crate::executor::sandbox::Confinement;
use crate::executor::sandbox::Role;
use crate::executor::{Service, ServiceSpec};
#[cfg(target_os = "linux")]
use crate::jail::Jail;
use crate::tool::{Blame, Failure, ToolCall, ToolResult};
use crate::units::seconds;

impl ShellExecutor {
    /// Starts the task's jail before its first command, when commands run in one.
    async fn start_jail(&mut self) -> Result<(), Failure> {
        #[cfg(target_os = "linux")]
        if let Confinement::Jail { binary } = &self.settings.sandbox.confinement
            && self.jail.is_none()
        {
            let started = match &self.view {
                Some(view) => Jail::start_with(binary, view).await,
                None => Jail::start(binary, &self.writable).await,
            };
            self.jail = Some(started.map_err(Failure::from)?);
        }
        Ok(())
    }

    /// Starts a helper process the way commands start: sandboxed, in the task's jail
    /// when it has one.
    pub(super) async fn start_service_process(
        &mut self,
        spec: &ServiceSpec<'_>,
    ) -> Result<Service, Failure> {
        // What to start, and where, is the configuration's; starting it, the machine's.
        let config = |why: String| Failure::new(Blame::Config, why);
        let program = spec
            .argv
            .first()
            .ok_or_else(|| config("nothing to start".into()))?
            .clone();
        let cwd = match spec.cwd {
            Some(dir) => self
                .folder_in_workspace(dir)
                .map_err(|e| config(e.to_string()))?,
            None => self.workspace.clone(),
        };
        let mut env = self.env.clone();
        for (key, value) in spec.env {
            env.retain(|(k, _)| k != key);
            env.push((key.clone(), value.clone()));
        }
        // A jail starts a program by its path: a bare name is looked up here, on the
        // PATH it will run with.
        let mut wanted = spec.argv.to_vec();
        wanted[0] = on_path(&program, &env).ok_or_else(|| {
            config(format!(
                "cannot start {program}: it is not found on the PATH commands get"
            ))
        })?;
        let wrapped = self.settings.sandbox.wrap(
            &wanted,
            &self.writable,
            &cwd,
            self.settings.limits,
            Role::Service,
        );
        let process = Spec {
            argv: &wrapped.argv,
            cwd: &cwd,
            env: &env,
            timeout: Duration::MAX,
            output_limit: 0,
            limits: wrapped.limits,
            supervised: wrapped.supervised,
        };
        let failed =
            |e: std::io::Error| Failure::environment(format!("cannot start {program}: {e}"));
        // Not in the commands' jail: one of its own, with the same view of the files, so
        // that the task's commands cannot read its environment or its pipes in /proc.
        #[cfg(target_os = "linux")]
        if let Confinement::Jail { binary } = &self.settings.sandbox.confinement {
            let jail = Jail::start(binary, &self.writable)
                .await
                .map_err(Failure::from)?;
            return process::start_jailed_service(process, jail)
                .await
                .map_err(failed);
        }
        process::start_service(process).map_err(failed)
    }

    pub(super) async fn execute_command(&mut self, command: &ToolCall) -> ToolResult {
        let args = &command.parameters;
        let line = str_arg(args, "command").unwrap_or_default().to_string();
        let timeout = match args.get("timeout").and_then(Value::as_u64) {
            Some(secs) => Duration::from_secs(secs.max(1)).min(self.settings.max_command_timeout),
            None => self.settings.command_timeout,
        };
        let cwd = match str_arg(args, "cwd") {
            Some(dir) => match self.folder_in_workspace(dir) {
                Ok(cwd) => cwd,
                Err(e) => return self.file_failed(command, e, None),
            },
            None => self.workspace.clone(),
        };
        let shell = ["/bin/sh".to_string(), "-c".to_string(), line];
        let wrapped = self.settings.sandbox.wrap(
            &shell,
            &self.writable,
            &cwd,
            self.settings.limits,
            Role::Command,
        );
        let clock = Instant::now();
        if let Err(failure) = self.start_jail().await {
            return self.broke(command, failure);
        }
        let spec = Spec {
            argv: &wrapped.argv,
            cwd: &cwd,
            env: &self.env,
            timeout,
            output_limit: self.settings.output_limit,
            limits: wrapped.limits,
            supervised: wrapped.supervised,
        };
        #[cfg(target_os = "linux")]
        let launcher = match self.jail.as_mut() {
            Some(jail) => Launcher::Jail(jail),
            None => Launcher::Direct,
        };
        #[cfg(not(target_os = "linux"))]
        let launcher = Launcher::Direct;
        let mut finished = match process::run(spec, launcher).await {
            Ok(f) => f,
            Err(e) => {
                // The machine, not the command: the attempt ends as an infrastructure error.
                let why = format!("could not start {}: {e}", wrapped.argv[0]);
                return self.broke(command, Failure::environment(why));
            }
        };
        if let Some(group) = finished.leftover.take() {
            self.leftovers.push(group);
        }
        command_result(command, &finished, clock.elapsed(), timeout)
    }
}

/// What the model sees of a command that ran: its exit, its bounded output and how long
/// it took; a timeout, a non-zero exit or a signal fails the step, as the agent's doing.
fn command_result(
    command: &ToolCall,
    finished: &process::Finished,
    took: Duration,
    timeout: Duration,
) -> ToolResult {
    let result = json!({
        "exit_code": finished.exit_code,
        "stdout": finished.stdout.text(),
        "stderr": finished.stderr.text(),
        "timed_out": finished.timed_out,
        "signal": finished.signal,
        "stdout_omitted_bytes": finished.stdout.dropped(),
        "stderr_omitted_bytes": finished.stderr.dropped(),
        "duration_s": seconds(took),
    });
    let error = if finished.timed_out {
        format!(
            "the command timed out after {}; it and every process it started were killed",
            humantime::format_duration(timeout)
        )
    } else {
        match (finished.exit_code, finished.signal) {
            (Some(0), _) => return ToolResult::success(command, NAMESPACE, result),
            (Some(code), _) => {
                let stderr = crate::text::first_line(&finished.stderr.text(), 200);
                if stderr.is_empty() {
                    format!("exit code {code}")
                } else {
                    format!("exit code {code}: {stderr}")
                }
            }
            (None, signal) => format!(
                "killed by signal {}",
                signal.map_or("?".into(), |s| s.to_string())
            ),
        }
    };
    ToolResult::failure(command, NAMESPACE, Failure::agent(error), result)
}

/// `program` as a path: itself when it names one, else the first executable file of that
/// name in the folders of `env`'s PATH.
fn on_path(program: &str, env: &[(String, String)]) -> Option<String> {
    if program.contains('/') {
        return Some(program.to_string());
    }
    let path = env
        .iter()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| v.as_str())?;
    std::env::split_paths(path)
        .map(|dir| dir.join(program))
        .find(|p| is_executable(p))
        .map(|p| p.display().to_string())
}

#[cfg(unix)]
fn is_executable(path: &std::path::Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    path.metadata()
        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_executable(path: &std::path::Path) -> bool {
    path.is_file()
}
