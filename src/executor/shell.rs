//! The `shell` executor: `execute_command`, `write_file`, `read_file` and `list_dir`,
//! all confined to the task's workspace. Commands run with `sh -c` in a scrubbed
//! environment, one process group each (see `process`).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use serde_json::{Map, Value, json};

use super::Executor;
use super::process::{self, ProcessGroup, ResourceLimits, Spec};
use super::sandbox::Sandbox;
use crate::command::{Command, CommandResult, ParamKind, ParamSpec, ToolSpec};
use crate::paths::resolve_in;
use crate::timestamp::seconds;

const NAMESPACE: &str = "shell";

/// Knobs of the shell executor.
#[derive(Clone, Debug)]
pub struct ShellSettings {
    /// Timeout of a command that does not ask for one.
    pub command_timeout: Duration,
    /// The longest timeout a command may ask for.
    pub max_command_timeout: Duration,
    /// Bytes kept of each output stream and of a file read.
    pub output_limit: usize,
    /// How commands are confined.
    pub sandbox: Sandbox,
    /// Per-process resource limits.
    pub limits: ResourceLimits,
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

/// The tools of the shell executor, for validation and for LLM prompts.
pub fn shell_tools() -> Vec<ToolSpec> {
    let p = |name, kind, required, description| ParamSpec {
        name,
        kind,
        required,
        description,
    };
    vec![
        ToolSpec {
            name: "execute_command",
            description: "Run a shell command (sh -c) in the workspace. Returns exit_code, stdout and stderr.",
            params: vec![
                p("command", ParamKind::String, true, "the command line"),
                p(
                    "timeout",
                    ParamKind::Integer,
                    false,
                    "seconds before the command and everything it started are killed",
                ),
                p(
                    "cwd",
                    ParamKind::String,
                    false,
                    "working directory, relative to the workspace",
                ),
            ],
        },
        ToolSpec {
            name: "write_file",
            description: "Write text to a file in the workspace, creating folders as needed.",
            params: vec![
                p(
                    "path",
                    ParamKind::String,
                    true,
                    "file path, relative to the workspace",
                ),
                p("content", ParamKind::String, true, "the text to write"),
                p(
                    "append",
                    ParamKind::Boolean,
                    false,
                    "append instead of replacing",
                ),
            ],
        },
        ToolSpec {
            name: "read_file",
            description: "Read a text file from the workspace.",
            params: vec![p(
                "path",
                ParamKind::String,
                true,
                "file path, relative to the workspace",
            )],
        },
        ToolSpec {
            name: "list_dir",
            description: "List a folder of the workspace (names, types, sizes).",
            params: vec![p(
                "path",
                ParamKind::String,
                false,
                "folder path, relative to the workspace (default: the workspace)",
            )],
        },
    ]
}

/// Runs shell tools inside one task's workspace.
pub struct ShellExecutor {
    workspace: PathBuf,
    /// Where commands may write (the workspace and the task's temp folder).
    writable: Vec<PathBuf>,
    /// Set when the executor itself failed (a shell that cannot start).
    fault: Option<String>,
    settings: ShellSettings,
    env: Vec<(String, String)>,
    /// Process groups that outlived their command, ended at shutdown.
    leftovers: Vec<ProcessGroup>,
}

impl ShellExecutor {
    /// An executor for `workspace` (which must exist).
    pub fn new(workspace: PathBuf, settings: ShellSettings) -> Self {
        Self::with_tmp(workspace, None, settings)
    }

    /// An executor for `workspace` whose commands get `tmp` as their private TMPDIR
    /// (both must exist). Both are the only places a sandboxed command may write.
    pub fn with_tmp(workspace: PathBuf, tmp: Option<PathBuf>, settings: ShellSettings) -> Self {
        let workspace = workspace.canonicalize().unwrap_or(workspace);
        let tmp = tmp.map(|t| t.canonicalize().unwrap_or(t));
        let env = command_env(&workspace, tmp.as_deref());
        let mut writable = vec![workspace.clone()];
        writable.extend(tmp);
        Self {
            workspace,
            writable,
            settings,
            env,
            leftovers: Vec::new(),
            fault: None,
        }
    }

    /// Adds a variable to the commands' environment.
    pub fn set_env(&mut self, key: &str, value: &str) {
        self.env.retain(|(k, _)| k != key);
        self.env.push((key.to_string(), value.to_string()));
    }

    async fn execute_command(&mut self, command: &Command) -> CommandResult {
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
        let spec = Spec {
            argv: &argv,
            cwd: &cwd,
            env: &self.env,
            timeout,
            output_limit: self.settings.output_limit,
            limits: spawn_limits,
        };
        let finished = match process::run(spec).await {
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
            return CommandResult::failure(command, NAMESPACE, error, result);
        }
        match (finished.exit_code, finished.signal) {
            (Some(0), _) => CommandResult::success(command, NAMESPACE, result),
            (Some(code), _) => {
                let stderr = crate::text::first_line(&finished.stderr.text(), 200);
                let error = if stderr.is_empty() {
                    format!("exit code {code}")
                } else {
                    format!("exit code {code}: {stderr}")
                };
                CommandResult::failure(command, NAMESPACE, error, result)
            }
            (None, signal) => {
                let error = format!(
                    "killed by signal {}",
                    signal.map_or("?".into(), |s| s.to_string())
                );
                CommandResult::failure(command, NAMESPACE, error, result)
            }
        }
    }

    async fn write_file(&mut self, command: &Command) -> CommandResult {
        let args = &command.parameters;
        let rel = str_arg(args, "path").unwrap_or_default();
        let content = str_arg(args, "content").unwrap_or_default();
        let append = args.get("append").and_then(Value::as_bool).unwrap_or(false);
        let path = match resolve_in(&self.workspace, rel, false) {
            Ok(p) => p,
            Err(e) => return self.fail(command, e.to_string()),
        };
        let written = async {
            if let Some(parent) = path.parent() {
                tokio::fs::create_dir_all(parent).await?;
            }
            if append {
                use tokio::io::AsyncWriteExt;
                let mut f = tokio::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(&path)
                    .await?;
                f.write_all(content.as_bytes()).await?;
                f.flush().await
            } else {
                tokio::fs::write(&path, content).await
            }
        };
        match written.await {
            Ok(()) => CommandResult::success(
                command,
                NAMESPACE,
                json!({"path": rel, "bytes": content.len(), "append": append}),
            ),
            Err(e) => self.fail(command, format!("cannot write `{rel}`: {e}")),
        }
    }

    async fn read_file(&mut self, command: &Command) -> CommandResult {
        let rel = str_arg(&command.parameters, "path").unwrap_or_default();
        let path = match resolve_in(&self.workspace, rel, false) {
            Ok(p) => p,
            Err(e) => return self.fail(command, e.to_string()),
        };
        match tokio::fs::read(&path).await {
            Ok(bytes) => {
                let limit = self.settings.output_limit;
                let truncated = bytes.len() > limit;
                let kept = &bytes[..bytes.len().min(limit)];
                let content = String::from_utf8_lossy(kept).into_owned();
                CommandResult::success(
                    command,
                    NAMESPACE,
                    json!({"path": rel, "content": content, "bytes": bytes.len(), "truncated": truncated}),
                )
            }
            Err(e) => self.fail(command, format!("cannot read `{rel}`: {e}")),
        }
    }

    async fn list_dir(&mut self, command: &Command) -> CommandResult {
        let rel = str_arg(&command.parameters, "path").unwrap_or(".");
        let path = match resolve_in(&self.workspace, rel, true) {
            Ok(p) => p,
            Err(e) => return self.fail(command, e.to_string()),
        };
        match list(&path).await {
            Ok(entries) => {
                CommandResult::success(command, NAMESPACE, json!({"path": rel, "entries": entries}))
            }
            Err(e) => self.fail(command, format!("cannot list `{rel}`: {e}")),
        }
    }

    fn fail(&self, command: &Command, error: String) -> CommandResult {
        CommandResult::failure(command, NAMESPACE, error, Value::Null)
    }
}

#[async_trait]
impl Executor for ShellExecutor {
    fn namespace(&self) -> &str {
        NAMESPACE
    }

    fn tools(&self) -> Vec<ToolSpec> {
        shell_tools()
    }

    async fn execute(&mut self, command: &Command) -> CommandResult {
        if let Some(spec) = shell_tools().iter().find(|t| t.name == command.tool_name) {
            if let Err(e) = spec.check_arguments(&command.parameters) {
                return self.fail(command, e);
            }
        } else {
            let names: Vec<&str> = shell_tools().iter().map(|t| t.name).collect();
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

    fn fault(&self) -> Option<String> {
        self.fault.clone()
    }

    async fn shutdown(&mut self) -> Option<String> {
        let alive = self.leftovers.iter().filter(|g| g.alive()).count();
        self.leftovers.clear(); // dropping a group kills it
        (alive > 0).then(|| {
            format!(
                "ended {} left running by commands",
                crate::text::plural(alive, "background process group")
            )
        })
    }
}

fn str_arg<'a>(args: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
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

async fn list(path: &Path) -> std::io::Result<Vec<Value>> {
    let mut dir = tokio::fs::read_dir(path).await?;
    let mut entries = Vec::new();
    while let Some(entry) = dir.next_entry().await? {
        let meta = entry.metadata().await?;
        let kind = if meta.is_dir() {
            "dir"
        } else if meta.is_symlink() {
            "symlink"
        } else {
            "file"
        };
        let name = entry.file_name().to_string_lossy().into_owned();
        entries.push((name, kind, meta.len()));
    }
    entries.sort();
    Ok(entries
        .into_iter()
        .map(|(name, kind, size)| json!({"name": name, "type": kind, "size": size}))
        .collect())
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use crate::command::ResultStatus;

    fn cmd(tool: &str, args: Value) -> Command {
        Command::action(tool, args.as_object().unwrap().clone())
    }

    fn executor() -> (tempfile::TempDir, ShellExecutor) {
        let dir = tempfile::tempdir().unwrap();
        let ex = ShellExecutor::new(dir.path().to_path_buf(), ShellSettings::default());
        (dir, ex)
    }

    #[tokio::test]
    async fn commands_run_in_the_workspace() {
        let (dir, mut ex) = executor();
        let r = ex
            .execute(&cmd(
                "execute_command",
                json!({"command": "pwd; echo $HOME"}),
            ))
            .await;
        assert_eq!(r.status, ResultStatus::Success);
        let ws = dir.path().display().to_string();
        assert_eq!(r.stdout().unwrap(), format!("{ws}\n{ws}\n"));
    }

    #[tokio::test]
    async fn nonzero_exit_is_a_failure_with_stderr() {
        let (_dir, mut ex) = executor();
        let r = ex
            .execute(&cmd(
                "execute_command",
                json!({"command": "echo bad >&2; exit 4"}),
            ))
            .await;
        assert_eq!(r.status, ResultStatus::Failure);
        assert_eq!(r.exit_code(), Some(4));
        assert_eq!(r.error.as_deref(), Some("exit code 4: bad"));
    }

    #[tokio::test]
    async fn command_timeout_is_reported() {
        let (_dir, mut ex) = executor();
        let r = ex
            .execute(&cmd(
                "execute_command",
                json!({"command": "sleep 20", "timeout": 1}),
            ))
            .await;
        assert_eq!(r.status, ResultStatus::Failure);
        assert!(r.error.unwrap().contains("timed out after 1s"));
        assert_eq!(r.result["timed_out"], json!(true));
    }

    #[tokio::test]
    async fn file_tools_stay_inside_the_workspace() {
        let (_dir, mut ex) = executor();
        let w = ex
            .execute(&cmd(
                "write_file",
                json!({"path": "a/b.txt", "content": "hi\n"}),
            ))
            .await;
        assert_eq!(w.status, ResultStatus::Success, "{w:?}");
        let a = ex
            .execute(&cmd(
                "write_file",
                json!({"path": "a/b.txt", "content": "more\n", "append": true}),
            ))
            .await;
        assert_eq!(a.status, ResultStatus::Success);
        let r = ex
            .execute(&cmd("read_file", json!({"path": "a/b.txt"})))
            .await;
        assert_eq!(r.result["content"], json!("hi\nmore\n"));
        let l = ex.execute(&cmd("list_dir", json!({}))).await;
        assert_eq!(
            l.result["entries"],
            json!([{"name": "a", "type": "dir", "size": l.result["entries"][0]["size"]}])
        );
        let out = ex
            .execute(&cmd(
                "write_file",
                json!({"path": "../escape.txt", "content": "x"}),
            ))
            .await;
        assert_eq!(out.status, ResultStatus::Failure);
        assert_eq!(
            out.error.as_deref(),
            Some("`../escape.txt` leaves the workspace")
        );
        let abs = ex
            .execute(&cmd("read_file", json!({"path": "/etc/passwd"})))
            .await;
        assert!(abs.error.unwrap().contains("absolute path"));
    }

    #[tokio::test]
    async fn environment_is_scrubbed() {
        let (_dir, mut ex) = executor();
        // The test process's own environment has CARGO_* variables; none may leak.
        let r = ex
            .execute(&cmd(
                "execute_command",
                json!({"command": "env | cut -d= -f1 | sort"}),
            ))
            .await;
        let names: Vec<&str> = r.stdout().unwrap().lines().collect();
        assert!(
            names.iter().all(|n| [
                "HOME", "LANG", "PATH", "PWD", "SHLVL", "TERM", "TMPDIR", "_"
            ]
            .contains(n)),
            "{names:?}"
        );
    }

    #[tokio::test]
    async fn unknown_tools_and_bad_arguments_fail_clearly() {
        let (_dir, mut ex) = executor();
        let r = ex.execute(&cmd("rm_everything", json!({}))).await;
        assert!(
            r.error.unwrap().starts_with(
                "unknown tool `rm_everything`; the shell executor has: execute_command"
            )
        );
        let r = ex
            .execute(&cmd("execute_command", json!({"command": 5})))
            .await;
        assert!(
            r.error
                .unwrap()
                .contains("must be a string, not an integer")
        );
    }

    #[tokio::test]
    async fn shutdown_ends_background_processes() {
        let (_dir, mut ex) = executor();
        let r = ex
            .execute(&cmd(
                "execute_command",
                json!({"command": "sleep 30 & echo $!"}),
            ))
            .await;
        assert_eq!(r.status, ResultStatus::Success);
        let pid: i32 = r.stdout().unwrap().trim().parse().unwrap();
        let note = ex.shutdown().await.unwrap();
        assert_eq!(
            note,
            "ended 1 background process group left running by commands"
        );
        assert!(crate::testutil::wait_gone(pid).await);
    }
}
