//! A command spawned by the runner itself, in a process group of its own; a guard kills
//! the group if the command is abandoned (task timeout, cancellation) before it ends.

use std::process::Stdio;

use tokio::process::Command;

use super::{Finished, ResourceLimits, Spec, Started, supervise};

/// Spawns `spec` in a process group of its own with `stdin`, its stdout and stderr piped.
pub(super) fn spawn(
    spec: &Spec<'_>,
    stdin: Stdio,
) -> std::io::Result<(tokio::process::Child, ProcessGroup)> {
    let (program, args) = spec.argv.split_first().expect("argv is never empty");
    let mut command = Command::new(program);
    command
        .args(args)
        .current_dir(spec.cwd)
        .env_clear()
        .envs(spec.env.iter().map(|(k, v)| (k, v)))
        .stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    isolate(&mut command, spec.limits);
    let child = command.spawn()?;
    let group = ProcessGroup::of(&child);
    Ok((child, group))
}

/// Runs a command to its end or its timeout.
pub(super) async fn run(spec: Spec<'_>) -> std::io::Result<Finished> {
    let (mut child, group) = spawn(&spec, Stdio::null())?;
    let (stdout_pipe, stderr_pipe) = (child.stdout.take(), child.stderr.take());
    let mut direct = Direct { child, group };
    let s = supervise(&mut direct, stdout_pipe, stderr_pipe, &spec).await?;
    let group = &mut direct.group;
    let leftover = if !s.timed_out && (!s.pipes_closed || group.alive()) {
        Some(group.release())
    } else {
        group.disarm();
        None
    };
    Ok(s.finished(leftover))
}

/// A directly spawned command and its group.
struct Direct {
    child: tokio::process::Child,
    group: ProcessGroup,
}

impl Started for &mut Direct {
    async fn wait(&mut self) -> std::io::Result<(Option<i32>, Option<i32>)> {
        let status = self.child.wait().await?;
        Ok((status.code(), exit_signal(&status)))
    }

    async fn kill(&mut self) {
        self.group.kill();
    }
}

/// Its own process group (so the whole tree can be killed) and its resource limits, set
/// between fork and exec so the command never runs a moment without them (setting them
/// from outside after the spawn raced with the command's first instructions).
#[cfg(unix)]
fn isolate(command: &mut Command, limits: ResourceLimits) {
    command.process_group(0);
    let set = |resource, value: Option<u64>| match value {
        None => Ok(()),
        Some(v) => {
            let limit = libc::rlimit {
                rlim_cur: v as libc::rlim_t,
                rlim_max: v as libc::rlim_t,
            };
            // SAFETY: setrlimit is async-signal-safe and touches only this process.
            if unsafe { libc::setrlimit(resource, &limit) } == 0 {
                Ok(())
            } else {
                Err(std::io::Error::last_os_error())
            }
        }
    };
    if limits == ResourceLimits::default() {
        // No hook: the spawn stays a posix_spawn instead of a fork of the whole runner.
        return;
    }
    // SAFETY: the closure only calls setrlimit, which is safe between fork and exec.
    unsafe {
        command.pre_exec(move || {
            set(libc::RLIMIT_AS, limits.memory_bytes)?;
            set(libc::RLIMIT_CPU, limits.cpu_seconds)
        });
    }
}

#[cfg(windows)]
fn isolate(command: &mut Command, _limits: ResourceLimits) {
    const CREATE_NEW_PROCESS_GROUP: u32 = 0x0000_0200;
    command.creation_flags(CREATE_NEW_PROCESS_GROUP);
}

#[cfg(unix)]
fn exit_signal(status: &std::process::ExitStatus) -> Option<i32> {
    use std::os::unix::process::ExitStatusExt;
    status.signal()
}

#[cfg(windows)]
fn exit_signal(_status: &std::process::ExitStatus) -> Option<i32> {
    None
}

/// A command's process group. Dropping it while armed kills the whole group, so an
/// abandoned command never outlives its task.
#[derive(Debug)]
pub(crate) struct ProcessGroup {
    id: Option<u32>,
}

impl ProcessGroup {
    pub(super) fn of(child: &tokio::process::Child) -> Self {
        Self { id: child.id() }
    }

    /// The group, armed again (after `release`), to be killed by the executor later.
    pub(super) fn release(&mut self) -> ProcessGroup {
        ProcessGroup { id: self.id.take() }
    }

    /// Forgets the group without killing it (it has ended).
    pub(super) fn disarm(&mut self) {
        self.id = None;
    }

    /// True while any process of the group exists.
    pub(crate) fn alive(&self) -> bool {
        self.id.is_some_and(group_alive)
    }

    /// Kills every process of the group.
    pub(crate) fn kill(&mut self) {
        if let Some(id) = self.id {
            kill_group(id);
        }
    }
}

impl Drop for ProcessGroup {
    fn drop(&mut self) {
        self.kill();
    }
}

#[cfg(unix)]
fn kill_group(id: u32) {
    // SAFETY: killpg only sends a signal; the id is a process group we created.
    unsafe {
        libc::killpg(id as libc::pid_t, libc::SIGKILL);
    }
}

#[cfg(unix)]
fn group_alive(id: u32) -> bool {
    // SAFETY: signal 0 only checks that the group exists.
    unsafe { libc::killpg(id as libc::pid_t, 0) == 0 }
}

#[cfg(windows)]
fn kill_group(id: u32) {
    let _ = std::process::Command::new("taskkill")
        .args(["/F", "/T", "/PID", &id.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}

#[cfg(windows)]
fn group_alive(_id: u32) -> bool {
    false
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::time::Duration;

    use crate::testutil::wait_gone;

    fn env() -> Vec<(String, String)> {
        vec![("PATH".into(), std::env::var("PATH").unwrap_or_default())]
    }

    async fn sh(script: &str, timeout: Duration) -> Finished {
        let dir = std::env::temp_dir();
        let argv = ["/bin/sh".to_string(), "-c".to_string(), script.to_string()];
        run(Spec {
            argv: &argv,
            cwd: &dir,
            env: &env(),
            timeout,
            output_limit: 4096,
            limits: ResourceLimits::default(),
        })
        .await
        .unwrap()
    }

    #[tokio::test]
    async fn captures_exit_code_and_streams() {
        let f = sh("echo out; echo err >&2; exit 3", Duration::from_secs(10)).await;
        assert_eq!(f.exit_code, Some(3));
        assert_eq!(f.stdout.text(), "out\n");
        assert_eq!(f.stderr.text(), "err\n");
        assert!(!f.timed_out);
        assert!(f.leftover.is_none());
    }

    #[tokio::test]
    async fn timeout_kills_the_whole_group() {
        let f = sh("sleep 30 & echo $!; sleep 30", Duration::from_millis(300)).await;
        assert!(f.timed_out);
        assert_eq!(f.signal, Some(libc::SIGKILL));
        let pid: i32 = f.stdout.text().trim().parse().unwrap();
        assert!(wait_gone(pid).await, "background sleeper {pid} survived");
    }

    #[tokio::test]
    async fn background_processes_are_handed_back_and_killed_on_drop() {
        let f = sh("sleep 30 & echo $!", Duration::from_secs(10)).await;
        assert_eq!(f.exit_code, Some(0));
        let pid: i32 = f.stdout.text().trim().parse().unwrap();
        let group = f.leftover.expect("the sleeper keeps the group alive");
        assert!(group.alive());
        drop(group);
        assert!(wait_gone(pid).await, "background sleeper {pid} survived");
    }

    #[tokio::test]
    async fn memory_and_cpu_limits_apply_to_the_command() {
        let dir = std::env::temp_dir();
        let argv = [
            "/bin/sh".to_string(),
            "-c".to_string(),
            "ulimit -v; ulimit -t".to_string(),
        ];
        let limits = ResourceLimits {
            memory_bytes: Some(512 << 20),
            cpu_seconds: Some(7),
        };
        let spec = Spec {
            argv: &argv,
            cwd: &dir,
            env: &env(),
            timeout: Duration::from_secs(10),
            output_limit: 4096,
            limits,
        };
        let f = run(spec).await.unwrap();
        assert_eq!(f.stdout.text(), "524288\n7\n");
    }
}
