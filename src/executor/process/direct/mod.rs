//! A command spawned by the runner itself, in a process group of its own. A guard ends
//! the command's processes if the command is abandoned (task timeout, cancellation)
//! before it ends: it kills the group, or asks the command's supervisor (Landlock mode,
//! see `sandbox::supervisor`) to end everything the command started, its own sessions
//! included. A supervised command's own end comes from the supervisor, on a pipe.

use std::process::Stdio;
use std::time::Duration;

use tokio::process::Command;

use super::{Finished, ResourceLimits, Spec, Started, supervise};

mod group;
mod report;

pub(crate) use group::{ProcessGroup, wait_for_supervisors};
use report::{Report, ReportPipe, read_report, report_pipe};

/// How long the end of a task waits for a supervisor to end what it supervises.
pub(crate) const SUPERVISOR_END: Duration = Duration::from_secs(5);

/// Spawns `spec` in a process group of its own with `stdin`, its stdout and stderr piped.
pub(super) fn spawn(spec: &Spec<'_>, stdin: Stdio) -> std::io::Result<tokio::process::Child> {
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
        // A supervisor killed outright could not end what it supervises.
        .kill_on_drop(!spec.supervised);
    isolate(&mut command, spec.limits);
    command.spawn()
}

/// Runs a command to its end or its timeout.
pub(super) async fn run(spec: Spec<'_>) -> std::io::Result<Finished> {
    let (stdin, report) = report_pipe(spec.supervised)?;
    let mut child = spawn(&spec, stdin)?;
    let (stdout_pipe, stderr_pipe) = (child.stdout.take(), child.stderr.take());
    let mut direct = Direct {
        group: ProcessGroup::new(child, spec.supervised),
        report,
        reported: None,
    };
    let s = supervise(&mut direct, stdout_pipe, stderr_pipe, &spec).await?;
    // A supervisor said whether anything of the command is left; a plain group is looked
    // at. (A command that timed out was ended whole; its supervisor may still be at it.)
    let left = match direct.reported {
        Some(Report { done, .. }) => !done,
        None => direct.group.alive(),
    };
    let group = &mut direct.group;
    let leftover = if !s.timed_out && (!s.pipes_closed || left) {
        Some(group.release())
    } else {
        if s.timed_out {
            // The next command starts once what this one started is gone.
            group
                .wait_ended(tokio::time::Instant::now() + SUPERVISOR_END)
                .await;
        }
        group.disarm();
        None
    };
    Ok(s.finished(leftover))
}

/// A directly spawned command and its group.
struct Direct {
    group: ProcessGroup,
    /// Where a supervisor reports the command's end (until it has been read).
    report: Option<ReportPipe>,
    /// The command's end, once reported.
    reported: Option<Report>,
}

impl Started for &mut Direct {
    async fn wait(&mut self) -> std::io::Result<(Option<i32>, Option<i32>)> {
        if let Some(r) = self.reported {
            return Ok((r.exit_code, r.signal));
        }
        if let Some(pipe) = &mut self.report {
            let report = read_report(pipe).await?;
            self.report = None;
            if let Some(r) = report {
                self.reported = Some(r);
                return Ok((r.exit_code, r.signal));
            }
            // No report: the supervisor itself ended first; its end is all there is.
        }
        let child = self
            .group
            .child
            .as_mut()
            .expect("the group holds its process");
        let status = child.wait().await?;
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

#[cfg(all(test, unix))]
mod tests;
