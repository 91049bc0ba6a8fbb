//! A command spawned by the runner itself, in a process group of its own. A guard ends
//! the command's processes if the command is abandoned (task timeout, cancellation)
//! before it ends: it kills the group, or asks the command's supervisor (Landlock mode,
//! see `sandbox::supervisor`) to end everything the command started, its own sessions
//! included. A supervised command's own end comes from the supervisor, on a pipe.

use std::process::Stdio;
use std::time::Duration;

use tokio::process::Command;

use super::{Finished, ResourceLimits, Spec, Started, supervise};

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

/// A supervisor's report of its command's end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Report {
    exit_code: Option<i32>,
    signal: Option<i32>,
    /// Nothing of the command was left when it ended.
    done: bool,
}

/// The standard input of a command: /dev/null, or for a supervised one the pipe its
/// supervisor reports the command's end on (and the end the runner reads).
#[cfg(unix)]
fn report_pipe(supervised: bool) -> std::io::Result<(Stdio, Option<ReportPipe>)> {
    if !supervised {
        return Ok((Stdio::null(), None));
    }
    let (read, write) = std::io::pipe()?;
    let read = tokio::net::unix::pipe::Receiver::from_owned_fd(std::os::fd::OwnedFd::from(read))?;
    Ok((Stdio::from(write), Some(read)))
}

#[cfg(not(unix))]
fn report_pipe(_supervised: bool) -> std::io::Result<(Stdio, Option<ReportPipe>)> {
    Ok((Stdio::null(), None))
}

#[cfg(unix)]
type ReportPipe = tokio::net::unix::pipe::Receiver;
#[cfg(not(unix))]
type ReportPipe = std::convert::Infallible;

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

/// The command's end as its supervisor reports it; None when the supervisor ended
/// without a report.
#[cfg(unix)]
async fn read_report(pipe: &mut ReportPipe) -> std::io::Result<Option<Report>> {
    use tokio::io::AsyncReadExt;
    // One read: the line is written whole, and a read is safe to cancel.
    let mut line = [0u8; 64];
    let n = pipe.read(&mut line).await?;
    Ok(parse_report(&line[..n]))
}

#[cfg(not(unix))]
async fn read_report(pipe: &mut ReportPipe) -> std::io::Result<Option<Report>> {
    match *pipe {}
}

/// `exit N` or `signal N`, then `done` or `running`, as the supervisor writes them.
#[cfg(unix)]
fn parse_report(line: &[u8]) -> Option<Report> {
    let line = std::str::from_utf8(line).ok()?.strip_suffix('\n')?;
    let mut words = line.split(' ');
    let (kind, value, left) = (words.next()?, words.next()?, words.next()?);
    let value: i32 = value.parse().ok()?;
    let done = match left {
        "done" => true,
        "running" => false,
        _ => return None,
    };
    let (exit_code, signal) = match kind {
        "exit" => (Some(value), None),
        "signal" => (None, Some(value)),
        _ => return None,
    };
    (words.next().is_none()).then_some(Report {
        exit_code,
        signal,
        done,
    })
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

/// A command's process group, and the process started (held unreaped, so that its id
/// stays its own while the group may be signalled). Dropping it while armed ends every
/// process of the command, so an abandoned command never outlives its task.
#[derive(Debug)]
pub(crate) struct ProcessGroup {
    /// The group's id (the started process's), while armed.
    id: Option<u32>,
    child: Option<tokio::process::Child>,
    /// The started process is the command's supervisor: asked to end everything rather
    /// than killed (it follows processes that left the group).
    supervised: bool,
    /// The supervisor has been asked to end everything.
    asked: bool,
}

impl ProcessGroup {
    pub(super) fn new(child: tokio::process::Child, supervised: bool) -> Self {
        Self {
            id: child.id(),
            child: Some(child),
            supervised,
            asked: false,
        }
    }

    /// The group, armed again (after `release`), to be ended by the executor later.
    pub(super) fn release(&mut self) -> ProcessGroup {
        ProcessGroup {
            id: self.id.take(),
            child: self.child.take(),
            supervised: self.supervised,
            asked: self.asked,
        }
    }

    /// Forgets the group without ending it (it has ended, or has been asked to).
    pub(super) fn disarm(&mut self) {
        self.id = None;
    }

    /// True while any process of the command may still run: its supervisor's (which
    /// lives exactly as long as they do), or any process of its group.
    pub(crate) fn alive(&mut self) -> bool {
        if self.supervised {
            return self.supervisor_running();
        }
        self.id.is_some_and(group_alive)
    }

    /// Ends every process of the command (without waiting).
    pub(crate) fn kill(&mut self) {
        let Some(id) = self.id else { return };
        if !self.supervised {
            kill_group(id);
        } else if self.supervisor_running() {
            ask_to_end(id);
            self.asked = true;
        }
        // A supervisor that has ended (and is reaped) left nothing: its command had a
        // session of its own, and the id may already be another's.
    }

    /// Waits, until `deadline` at most, for a supervisor asked to end; false when it had
    /// not ended by then (it goes on).
    pub(crate) async fn ended_by(mut self, deadline: tokio::time::Instant) -> bool {
        self.id = None;
        self.wait_ended(deadline).await
    }

    /// Waits (until `deadline` at most) until a supervisor that was asked to end has.
    async fn wait_ended(&mut self, deadline: tokio::time::Instant) -> bool {
        match (self.supervised && self.asked, self.child.as_mut()) {
            (true, Some(child)) => tokio::time::timeout_at(deadline, child.wait())
                .await
                .is_ok(),
            _ => true,
        }
    }

    fn supervisor_running(&mut self) -> bool {
        self.child
            .as_mut()
            .is_some_and(|c| matches!(c.try_wait(), Ok(None)))
    }
}

impl Drop for ProcessGroup {
    fn drop(&mut self) {
        self.kill();
        // A supervisor asked to end and still at it is waited for at the end of the run;
        // any other is reaped by the runtime once it exits.
        if self.supervised
            && self.asked
            && let Some(mut child) = self.child.take()
            && matches!(child.try_wait(), Ok(None))
        {
            let mut ending = ENDING.lock().unwrap_or_else(|e| e.into_inner());
            ending.retain_mut(|c| matches!(c.try_wait(), Ok(None)));
            ending.push(child);
        }
    }
}

/// Supervisors asked to end (or ending) whose task went on without waiting for them.
static ENDING: std::sync::Mutex<Vec<tokio::process::Child>> = std::sync::Mutex::new(Vec::new());

/// Waits, `limit` at most, until every supervisor asked to end has ended; returns how
/// many have not.
pub(crate) async fn wait_for_supervisors(limit: Duration) -> usize {
    let mut ending = std::mem::take(&mut *ENDING.lock().unwrap_or_else(|e| e.into_inner()));
    let all = async {
        for child in &mut ending {
            let _ = child.wait().await;
        }
    };
    let _ = tokio::time::timeout(limit, all).await;
    ending
        .iter_mut()
        .map(|c| matches!(c.try_wait(), Ok(None)))
        .filter(|&running| running)
        .count()
}

#[cfg(unix)]
fn kill_group(id: u32) {
    // SAFETY: killpg only sends a signal; the id is a process group we created.
    unsafe {
        libc::killpg(id as libc::pid_t, libc::SIGKILL);
    }
}

/// Asks a supervisor to end everything it supervises (and wakes it if stopped).
#[cfg(unix)]
fn ask_to_end(id: u32) {
    #[cfg(target_os = "linux")]
    let end = crate::executor::sandbox::supervisor::end_signal();
    #[cfg(not(target_os = "linux"))]
    let end = libc::SIGTERM;
    // SAFETY: kill only sends signals; the id is our child's, not yet reaped.
    unsafe {
        libc::kill(id as libc::pid_t, end);
        libc::kill(id as libc::pid_t, libc::SIGCONT);
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
fn ask_to_end(id: u32) {
    kill_group(id);
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
            supervised: false,
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
        let mut group = f.leftover.expect("the sleeper keeps the group alive");
        assert!(group.alive());
        drop(group);
        assert!(wait_gone(pid).await, "background sleeper {pid} survived");
    }

    #[test]
    fn a_supervisors_report_reads_as_the_commands_end() {
        let report = |exit_code, signal, done| {
            Some(Report {
                exit_code,
                signal,
                done,
            })
        };
        assert_eq!(parse_report(b"exit 3 done\n"), report(Some(3), None, true));
        assert_eq!(
            parse_report(b"signal 9 running\n"),
            report(None, Some(9), false)
        );
        // Nothing (the supervisor ended first) or anything else: no report.
        for line in [
            &b""[..],
            b"exit 3",
            b"exit 3 done",
            b"exit x done\n",
            b"stop 1 done\n",
            b"exit 1 maybe\n",
            b"exit 1 done more\n",
            b"\xff 1 done\n",
        ] {
            assert_eq!(parse_report(line), None, "{line:?}");
        }
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
            supervised: false,
        };
        let f = run(spec).await.unwrap();
        assert_eq!(f.stdout.text(), "524288\n7\n");
    }
}
