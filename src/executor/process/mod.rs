//! Running one shell command as its own process group (or, under Landlock, under its own
//! supervisor): bounded output, a timeout that ends the whole tree, and no process
//! outliving its task. A command starts either directly (`direct`: the runner spawns it,
//! for `--sandbox none|landlock|bwrap`) or in the task's jail (`jailed`); either way
//! `supervise` reads its output, enforces its timeout and says how it ended.
//!
//! A command may leave background processes behind (`server &`). Once the command's
//! own process exits we wait a moment for the pipes to close, then stop reading; the
//! processes are ended when the task ends.

mod direct;
#[cfg(target_os = "linux")]
mod jailed;
mod service;

use std::path::Path;
use std::time::Duration;

use tokio::io::AsyncRead;

use super::capture::{Captured, drain};
#[cfg(target_os = "linux")]
use crate::jail::Jail;

pub(crate) use direct::{ProcessGroup, SUPERVISOR_END, wait_for_supervisors};
#[cfg(target_os = "linux")]
pub(crate) use service::start_jailed as start_jailed_service;
pub(crate) use service::{Service, StderrTail, start as start_service};

/// How long output pipes may stay open after the command's own process exited.
const PIPE_GRACE: Duration = Duration::from_millis(250);

/// How a command ended.
#[derive(Debug)]
pub(crate) struct Finished {
    /// Exit code, when it exited normally.
    pub(crate) exit_code: Option<i32>,
    /// The signal that ended it, when one did.
    pub(crate) signal: Option<i32>,
    /// Standard output, bounded.
    pub(crate) stdout: Captured,
    /// Standard error, bounded.
    pub(crate) stderr: Captured,
    /// True when the timeout ended it.
    pub(crate) timed_out: bool,
    /// The process group, when processes of a directly started command may still run
    /// (a jail ends its own with the task).
    pub(crate) leftover: Option<ProcessGroup>,
}

/// What to run and how.
pub(crate) struct Spec<'a> {
    /// The program and its arguments.
    pub(crate) argv: &'a [String],
    /// Working directory.
    pub(crate) cwd: &'a Path,
    /// The whole environment of the child.
    pub(crate) env: &'a [(String, String)],
    /// Wall-clock limit.
    pub(crate) timeout: Duration,
    /// Bytes kept per stream.
    pub(crate) output_limit: usize,
    /// Resource limits of the command's processes.
    pub(crate) limits: ResourceLimits,
    /// True when `argv` starts the sandbox's supervisor (see `Wrapped::supervised`).
    pub(crate) supervised: bool,
}

/// Per-process resource limits (each process of a command gets them).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub(crate) struct ResourceLimits {
    /// Address space in bytes (RLIMIT_AS).
    pub(crate) memory_bytes: Option<u64>,
    /// CPU seconds (RLIMIT_CPU).
    pub(crate) cpu_seconds: Option<u64>,
}

/// Where a command starts.
pub(crate) enum Launcher<'a> {
    /// Spawned by the runner.
    Direct,
    /// In the task's jail.
    #[cfg(target_os = "linux")]
    Jail(&'a mut Jail),
    /// Keeps the lifetime in use where there are no jails.
    #[cfg(not(target_os = "linux"))]
    #[expect(dead_code, reason = "only Linux has jails")]
    Never(std::marker::PhantomData<&'a ()>),
}

/// Runs a command to its end or its timeout.
pub(crate) async fn run(spec: Spec<'_>, launcher: Launcher<'_>) -> std::io::Result<Finished> {
    match launcher {
        Launcher::Direct => direct::run(spec).await,
        #[cfg(target_os = "linux")]
        Launcher::Jail(jail) => jailed::run(spec, jail).await,
        #[cfg(not(target_os = "linux"))]
        Launcher::Never(_) => direct::run(spec).await,
    }
}

/// A started command, as `supervise` sees it.
trait Started {
    /// Waits for the command's own process to end: its exit code or signal.
    async fn wait(&mut self) -> std::io::Result<(Option<i32>, Option<i32>)>;
    /// Ends it and every process it started (its group, or all its supervisor holds).
    async fn kill(&mut self);
}

/// How `supervise` found a command's end.
struct Supervised {
    exit_code: Option<i32>,
    signal: Option<i32>,
    stdout: Captured,
    stderr: Captured,
    timed_out: bool,
    /// False when the output pipes stayed open after the command ended (something it
    /// started holds them).
    pipes_closed: bool,
}

impl Supervised {
    /// The command's end, with what it left behind (if anything).
    fn finished(self, leftover: Option<ProcessGroup>) -> Finished {
        Finished {
            exit_code: self.exit_code,
            signal: self.signal,
            stdout: self.stdout,
            stderr: self.stderr,
            timed_out: self.timed_out,
            leftover,
        }
    }
}

/// Reads the command's output while it runs, kills it at the timeout, and waits a
/// moment for its pipes after it ends.
async fn supervise(
    mut child: impl Started,
    stdout_pipe: Option<impl AsyncRead + Unpin>,
    stderr_pipe: Option<impl AsyncRead + Unpin>,
    spec: &Spec<'_>,
) -> std::io::Result<Supervised> {
    let mut stdout = Captured::new(spec.output_limit);
    let mut stderr = Captured::new(spec.output_limit);
    let ((exit_code, signal), timed_out, pipes_closed) = {
        let out_reader = async {
            if let Some(p) = stdout_pipe {
                drain(p, &mut stdout).await;
            }
        };
        let err_reader = async {
            if let Some(p) = stderr_pipe {
                drain(p, &mut stderr).await;
            }
        };
        let mut readers = std::pin::pin!(async {
            tokio::join!(out_reader, err_reader);
        });
        let mut readers_done = false;
        let deadline = tokio::time::sleep(spec.timeout);
        tokio::pin!(deadline);
        let mut timed_out = false;
        let status = loop {
            tokio::select! {
                status = child.wait() => break status?,
                () = &mut readers, if !readers_done => readers_done = true,
                () = &mut deadline => {
                    timed_out = true;
                    child.kill().await;
                    break child.wait().await?;
                }
            }
        };
        let closed = readers_done || tokio::time::timeout(PIPE_GRACE, &mut readers).await.is_ok();
        (status, timed_out, closed)
    };
    Ok(Supervised {
        exit_code,
        signal,
        stdout,
        stderr,
        timed_out,
        pipes_closed,
    })
}
