//! A helper process started for a task and kept running beside its commands (a stdio
//! MCP server): started the way the task's commands are (directly, in its own process
//! group, or in a jail of its own with the same view of the files: the task's commands
//! cannot see its processes, so not its environment nor its pipes), with pipes to its
//! stdin and stdout, its stderr kept (the end of it) for messages. It ends when dropped.

use std::process::Stdio;
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite};

use super::Spec;
use super::direct::ProcessGroup;

/// Bytes kept of a service's stderr.
const STDERR_TAIL: usize = 4096;

/// A running helper process.
pub(crate) struct Service {
    /// Its standard input (taken by whoever speaks to it).
    pub(crate) stdin: Option<Box<dyn AsyncWrite + Send + Unpin>>,
    /// Its standard output (taken by whoever speaks to it).
    pub(crate) stdout: Option<Box<dyn AsyncRead + Send + Unpin>>,
    /// The end of what it wrote to stderr so far.
    pub(crate) stderr: StderrTail,
    /// Kills it when dropped.
    _guard: Guard,
}

/// What ends a service when dropped.
enum Guard {
    /// A directly started one: its process and group.
    Direct(#[expect(dead_code, reason = "held to be dropped")] ProcessGroup),
    /// A jailed one: its jail (ending the jail ends every process in it).
    #[cfg(target_os = "linux")]
    Jail { _jail: crate::jail::Jail },
}

/// The end of a service's stderr, filled while it runs.
#[derive(Clone)]
pub(crate) struct StderrTail {
    bytes: Arc<Mutex<Vec<u8>>>,
    /// True once the pipe has ended (every process that held it is gone).
    ended: tokio::sync::watch::Receiver<bool>,
}

impl StderrTail {
    /// What it holds, as text.
    pub(crate) fn text(&self) -> String {
        let bytes = self.bytes.lock().unwrap_or_else(|e| e.into_inner());
        String::from_utf8_lossy(&bytes).trim().to_string()
    }

    /// Waits, at most `limit`, for the pipe to end: a service that failed has then said
    /// all it had to say.
    pub(crate) async fn settled(&self, limit: std::time::Duration) {
        let mut ended = self.ended.clone();
        let _ = tokio::time::timeout(limit, ended.wait_for(|done| *done)).await;
    }

    fn keep(bytes: &Mutex<Vec<u8>>, more: &[u8]) {
        let mut bytes = bytes.lock().unwrap_or_else(|e| e.into_inner());
        bytes.extend_from_slice(more);
        let len = bytes.len();
        if len > STDERR_TAIL {
            bytes.drain(..len - STDERR_TAIL);
        }
    }

    /// Reads `pipe` to its end into a new tail.
    fn drain(mut pipe: impl AsyncRead + Send + Unpin + 'static) -> Self {
        let bytes = Arc::new(Mutex::new(Vec::new()));
        let (ended_tx, ended) = tokio::sync::watch::channel(false);
        let kept = Arc::clone(&bytes);
        tokio::spawn(async move {
            let mut buf = [0u8; 4096];
            while let Ok(n) = pipe.read(&mut buf).await {
                if n == 0 {
                    break;
                }
                Self::keep(&kept, &buf[..n]);
            }
            let _ = ended_tx.send(true);
        });
        Self { bytes, ended }
    }
}

/// Starts `spec` directly (its timeout is not used: a service runs until dropped).
pub(crate) fn start(spec: Spec<'_>) -> std::io::Result<Service> {
    let mut child = super::direct::spawn(&spec, Stdio::piped())?;
    let missing = || std::io::Error::other("a pipe of the process is missing");
    let stdin = child.stdin.take().ok_or_else(missing)?;
    let stdout = child.stdout.take().ok_or_else(missing)?;
    let stderr = StderrTail::drain(child.stderr.take().ok_or_else(missing)?);
    Ok(Service {
        stdin: Some(Box::new(stdin)),
        stdout: Some(Box::new(stdout)),
        stderr,
        _guard: Guard::Direct(ProcessGroup::new(child, spec.supervised)),
    })
}

/// Starts `spec` in `jail`, which is the service's own from then on.
#[cfg(target_os = "linux")]
pub(crate) async fn start_jailed(
    spec: Spec<'_>,
    mut jail: crate::jail::Jail,
) -> std::io::Result<Service> {
    use std::os::fd::OwnedFd;

    use tokio::net::unix::pipe;

    let (in_read, in_write) = std::io::pipe()?;
    let (out_read, out_write) = std::io::pipe()?;
    let (err_read, err_write) = std::io::pipe()?;
    jail.spawn(crate::jail::JailSpawn {
        argv: spec.argv,
        env: spec.env,
        cwd: spec.cwd,
        memory: spec.limits.memory_bytes,
        data: None,
        cpu: spec.limits.cpu_seconds,
        stdin: Some(OwnedFd::from(in_read)),
        stdout: OwnedFd::from(out_write),
        stderr: OwnedFd::from(err_write),
    })
    .await
    .map_err(std::io::Error::other)?;
    let stderr = StderrTail::drain(pipe::Receiver::from_owned_fd(OwnedFd::from(err_read))?);
    Ok(Service {
        stdin: Some(Box::new(pipe::Sender::from_owned_fd(OwnedFd::from(
            in_write,
        ))?)),
        stdout: Some(Box::new(pipe::Receiver::from_owned_fd(OwnedFd::from(
            out_read,
        ))?)),
        stderr,
        _guard: Guard::Jail { _jail: jail },
    })
}
