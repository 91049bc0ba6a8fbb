//! The runner's side of a task's jail (see the `ufo-batch-jail` binary for what the jail
//! does). A task's shell executor starts one jail for the task and runs every command
//! of the task through it; a desktop task's desktop runs in a second one. Each ends
//! with the task: the jail's processes are then all gone, whatever they did (`setsid`,
//! double forks, `kill -9` of their parent).
//!
//! One background task reads the jail's events and hands each to whoever waits for it.

mod factory;
mod protocol;

use std::collections::HashMap;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::Interest;
use tokio::net::UnixStream;
use tokio::sync::oneshot;

use factory::JailProcess;
pub(crate) use factory::close as close_factory;
use protocol::{Event, Inbox, Request, frame, recv_with_fds, send_with_fds};

/// The jail binary's name, found beside the runner's.
const JAIL_BINARY: &str = "ufo-batch-jail";
/// How long a jail may take to be ready.
const START_TIMEOUT: Duration = Duration::from_secs(20);

/// How a jailed command ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct JailExit {
    /// Its exit code, when it exited.
    pub(crate) code: Option<i32>,
    /// The signal that ended it, when one did.
    pub(crate) signal: Option<i32>,
}

/// What one command asks of the jail.
pub(crate) struct JailSpawn<'a> {
    /// Program and arguments.
    pub(crate) argv: &'a [String],
    /// The command's whole environment.
    pub(crate) env: &'a [(String, String)],
    /// Working directory.
    pub(crate) cwd: &'a Path,
    /// RLIMIT_AS in bytes.
    pub(crate) memory: Option<u64>,
    /// RLIMIT_CPU in seconds.
    pub(crate) cpu: Option<u64>,
    /// Its stdin (default: `/dev/null`).
    pub(crate) stdin: Option<OwnedFd>,
    /// Where its stdout goes.
    pub(crate) stdout: OwnedFd,
    /// Where its stderr goes.
    pub(crate) stderr: OwnedFd,
}

/// What a jail lets its commands do beyond reading.
#[derive(Clone, Debug, Default)]
pub(crate) struct JailOptions {
    /// Folders they may write.
    pub(crate) writable: Vec<PathBuf>,
    /// A folder seen as `/tmp` inside the jail (writable).
    pub(crate) tmp: Option<PathBuf>,
    /// Folders seen empty inside (other tasks' folders, the user's home).
    pub(crate) hidden: Vec<PathBuf>,
    /// A desktop's jail: Unix sockets are allowed (a display server and message buses
    /// need them), so the machine's folders that hold sockets (`/run`, `/var/tmp`) are
    /// hidden behind empty ones, `/tmp` is the jail's own, and the jail has a network
    /// namespace of its own (abstract sockets live there).
    pub(crate) desktop: bool,
}

impl JailOptions {
    /// The jail binary's arguments for these options.
    fn args(&self) -> Vec<String> {
        let mut args = Vec::new();
        let path = |p: &PathBuf| p.to_string_lossy().into_owned();
        for dir in &self.writable {
            args.extend(["--rw".to_string(), path(dir)]);
        }
        if let Some(tmp) = &self.tmp {
            args.extend(["--tmp".to_string(), path(tmp)]);
        }
        for dir in &self.hidden {
            args.extend(["--hide".to_string(), path(dir)]);
        }
        if self.desktop {
            args.push("--desktop".to_string());
        }
        args
    }
}

/// Waiters for the jail's events.
#[derive(Default)]
struct Waiters {
    started: HashMap<u64, oneshot::Sender<Result<(), String>>>,
    exited: HashMap<u64, oneshot::Sender<JailExit>>,
    ended: Option<oneshot::Sender<u32>>,
    /// Set once the jail is gone, with why.
    gone: Option<String>,
}

struct Shared {
    socket: UnixStream,
    waiters: Mutex<Waiters>,
}

/// A running jail.
pub(crate) struct Jail {
    shared: Arc<Shared>,
    process: JailProcess,
    reader: tokio::task::JoinHandle<()>,
    next_id: u64,
}

/// A command started in a jail.
pub(crate) struct JailedCommand {
    /// The jail's number for it.
    pub(crate) id: u64,
    /// Its end.
    pub(crate) exit: oneshot::Receiver<JailExit>,
}

/// True when a read of a socket with a timeout failed only for now: a signal the process
/// handles interrupted it (SA_RESTART does not apply to such reads), or its timeout
/// passed (the caller's deadline decides).
fn read_again(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::Interrupted
            | std::io::ErrorKind::WouldBlock
            | std::io::ErrorKind::TimedOut
    )
}

/// The jail binary beside the current executable (or one folder up: unit tests run from
/// `target/debug/deps`).
pub(crate) fn jail_binary() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let dir = exe.parent()?;
    [dir.join(JAIL_BINARY), dir.parent()?.join(JAIL_BINARY)]
        .into_iter()
        .find(|p| p.is_file())
}

/// Checks that a jail can be made here: has the factory make one on a scratch folder,
/// and ends it.
pub(crate) fn probe(binary: &Path) -> Result<(), String> {
    use std::io::{Read, Write};
    let scratch = std::env::temp_dir().join(format!(".ufo-batch-probe-{}", std::process::id()));
    std::fs::create_dir_all(&scratch)
        .map_err(|e| format!("cannot make {}: {e}", scratch.display()))?;
    let (mut ours, theirs) =
        std::os::unix::net::UnixStream::pair().map_err(|e| format!("cannot make a socket: {e}"))?;
    let args = ["--rw".to_string(), scratch.to_string_lossy().into_owned()];
    let child = factory::make(binary, &args, OwnedFd::from(theirs))?;
    let deadline = std::time::Instant::now() + START_TIMEOUT;
    let mut inbox = Inbox::default();
    let mut buf = [0u8; 4096];
    let event = loop {
        if let Ok(Some(payload)) = inbox.next_frame() {
            break Event::decode(&payload).ok().map(Ok);
        }
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() {
            break Some(Err(format!(
                "the jail was not ready within {START_TIMEOUT:?}"
            )));
        }
        let _ = ours.set_read_timeout(Some(left));
        match ours.read(&mut buf) {
            Ok(0) => break None,
            Ok(n) => inbox.push(&buf[..n], Vec::new()),
            // A socket with a read timeout is interrupted by any signal the process
            // handles (SA_RESTART does not apply), such as another child's SIGCHLD.
            Err(e) if read_again(&e) => {}
            Err(e) => break Some(Err(format!("cannot read the jail's socket: {e}"))),
        }
    };
    let _ = ours.write_all(&frame(&Request::End.encode()));
    drop(ours);
    child.wait_blocking(START_TIMEOUT);
    let _ = std::fs::remove_dir(&scratch);
    match event {
        Some(Ok(Event::Ready)) => Ok(()),
        Some(Ok(Event::Fatal { message })) => Err(message),
        Some(Err(why)) => Err(why),
        _ => Err("the jail ended before it was ready".to_string()),
    }
}

impl Jail {
    /// Starts a jail whose commands may write only in `writable`.
    pub(crate) async fn start(binary: &Path, writable: &[PathBuf]) -> Result<Jail, String> {
        let options = JailOptions {
            writable: writable.to_vec(),
            ..JailOptions::default()
        };
        Self::start_with(binary, &options).await
    }

    /// Starts a jail as `options` say.
    pub(crate) async fn start_with(binary: &Path, options: &JailOptions) -> Result<Jail, String> {
        let (ours, theirs) = std::os::unix::net::UnixStream::pair()
            .map_err(|e| format!("cannot make a socket: {e}"))?;
        let args = options.args();
        let binary = binary.to_path_buf();
        let process = tokio::task::spawn_blocking(move || {
            factory::make(&binary, &args, OwnedFd::from(theirs))
        })
        .await
        .map_err(|e| format!("cannot start a jail: {e}"))??;
        ours.set_nonblocking(true)
            .map_err(|e| format!("cannot use the jail's socket: {e}"))?;
        let socket =
            UnixStream::from_std(ours).map_err(|e| format!("cannot use the jail's socket: {e}"))?;
        let shared = Arc::new(Shared {
            socket,
            waiters: Mutex::new(Waiters::default()),
        });
        let (ready_tx, ready_rx) = oneshot::channel();
        let reader = tokio::spawn(read_events(Arc::clone(&shared), ready_tx));
        let jail = Jail {
            shared,
            process,
            reader,
            next_id: 0,
        };
        match tokio::time::timeout(START_TIMEOUT, ready_rx).await {
            Ok(Ok(Ok(()))) => Ok(jail),
            Ok(Ok(Err(why))) => Err(why),
            Ok(Err(_)) => Err("the jail ended before it was ready".to_string()),
            Err(_) => Err(format!("the jail was not ready within {START_TIMEOUT:?}")),
        }
    }

    /// Starts a command; returns once it runs (or why it cannot).
    pub(crate) async fn spawn(&mut self, spec: JailSpawn<'_>) -> Result<JailedCommand, String> {
        self.next_id += 1;
        let id = self.next_id;
        let request = Request::Run {
            id,
            argv: spec.argv.iter().map(|a| a.as_bytes().to_vec()).collect(),
            env: spec
                .env
                .iter()
                .map(|(k, v)| format!("{k}={v}").into_bytes())
                .collect(),
            cwd: spec.cwd.as_os_str().as_encoded_bytes().to_vec(),
            memory: spec.memory.unwrap_or(0),
            cpu: spec.cpu.unwrap_or(0),
            stdin: spec.stdin.is_some(),
        };
        let (started_tx, started_rx) = oneshot::channel();
        let (exit_tx, exit_rx) = oneshot::channel();
        {
            let mut waiters = self.waiters();
            if let Some(why) = &waiters.gone {
                return Err(why.clone());
            }
            waiters.started.insert(id, started_tx);
            waiters.exited.insert(id, exit_tx);
        }
        let mut fds = Vec::with_capacity(3);
        fds.extend(spec.stdin.as_ref().map(AsRawFd::as_raw_fd));
        fds.extend([spec.stdout.as_raw_fd(), spec.stderr.as_raw_fd()]);
        self.send(&request, &fds).await?;
        drop((spec.stdin, spec.stdout, spec.stderr));
        match started_rx.await {
            Ok(Ok(())) => Ok(JailedCommand { id, exit: exit_rx }),
            Ok(Err(why)) => Err(why),
            Err(_) => Err(self.gone_reason()),
        }
    }

    /// Kills command `id` and its process group.
    pub(crate) async fn kill(&self, id: u64) {
        let _ = self.send(&Request::Kill { id }, &[]).await;
    }

    /// Ends the jail and everything in it; returns how many processes were still
    /// running (those commands left behind).
    pub(crate) async fn end(self) -> u32 {
        let (tx, rx) = oneshot::channel();
        self.waiters().ended = Some(tx);
        let left = match self.send(&Request::End, &[]).await {
            Ok(()) => tokio::time::timeout(Duration::from_secs(10), rx)
                .await
                .ok()
                .and_then(Result::ok)
                .unwrap_or(0),
            Err(_) => 0,
        };
        self.process.kill();
        self.process.wait(Duration::from_secs(10)).await;
        self.reader.abort();
        left
    }

    /// The jail's own process (every process of the jail is below it), while it runs.
    pub(crate) fn pid(&self) -> Option<u32> {
        Some(self.process.pid())
    }

    /// True once the jail is gone (killed, or its init died).
    pub(crate) fn gone(&self) -> Option<String> {
        self.waiters().gone.clone()
    }

    fn gone_reason(&self) -> String {
        self.gone()
            .unwrap_or_else(|| "the jail ended unexpectedly".to_string())
    }

    fn waiters(&self) -> std::sync::MutexGuard<'_, Waiters> {
        self.shared
            .waiters
            .lock()
            .unwrap_or_else(|p| p.into_inner())
    }

    async fn send(&self, request: &Request, fds: &[std::os::fd::RawFd]) -> Result<(), String> {
        let bytes = frame(&request.encode());
        let socket = &self.shared.socket;
        let mut sent = 0;
        while sent < bytes.len() {
            socket
                .writable()
                .await
                .map_err(|e| format!("the jail's socket failed: {e}"))?;
            let with = if sent == 0 { fds } else { &[] };
            match socket.try_io(Interest::WRITABLE, || {
                send_with_fds(socket.as_raw_fd(), &bytes[sent..], with)
            }) {
                Ok(n) => sent += n,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                Err(e) => return Err(format!("the jail is gone: {e}")),
            }
        }
        Ok(())
    }
}

/// Reads the jail's events until it is gone, handing each to its waiter.
async fn read_events(shared: Arc<Shared>, ready: oneshot::Sender<Result<(), String>>) {
    let mut ready = Some(ready);
    let mut inbox = Inbox::default();
    // Events are a few bytes each; a frame larger than this comes in several reads.
    let mut buf = vec![0u8; 2 * 1024];
    let why = loop {
        if shared.socket.readable().await.is_err() {
            break "the jail's socket failed".to_string();
        }
        let mut fds = Vec::new();
        let got = shared.socket.try_io(Interest::READABLE, || {
            recv_with_fds(shared.socket.as_raw_fd(), &mut buf, &mut fds)
        });
        match got {
            Ok(0) => break "the jail ended".to_string(),
            Ok(n) => inbox.push(&buf[..n], fds),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => continue,
            Err(e) => break format!("the jail's socket failed: {e}"),
        }
        while let Ok(Some(payload)) = inbox.next_frame() {
            let Ok(event) = Event::decode(&payload) else {
                continue;
            };
            let mut w = shared.waiters.lock().unwrap_or_else(|p| p.into_inner());
            match event {
                Event::Ready => {
                    if let Some(tx) = ready.take() {
                        let _ = tx.send(Ok(()));
                    }
                }
                Event::Fatal { message } => {
                    if let Some(tx) = ready.take() {
                        let _ = tx.send(Err(format!("the task's jail cannot be made: {message}")));
                    }
                }
                Event::Started { id } => {
                    if let Some(tx) = w.started.remove(&id) {
                        let _ = tx.send(Ok(()));
                    }
                }
                Event::SpawnFailed { id, message } => {
                    w.exited.remove(&id);
                    if let Some(tx) = w.started.remove(&id) {
                        let _ = tx.send(Err(message));
                    }
                }
                Event::Exited { id, code, signal } => {
                    if let Some(tx) = w.exited.remove(&id) {
                        let _ = tx.send(JailExit { code, signal });
                    }
                }
                Event::Ended { left } => {
                    if let Some(tx) = w.ended.take() {
                        let _ = tx.send(left);
                    }
                }
                Event::Made { .. } => {}
            }
        }
    };
    let mut w = shared.waiters.lock().unwrap_or_else(|p| p.into_inner());
    w.gone = Some(why.clone());
    // Dropping the senders wakes every waiter: their command cannot end normally now.
    w.started.clear();
    w.exited.clear();
    w.ended.take();
    drop(w);
    if let Some(tx) = ready.take() {
        let _ = tx.send(Err(format!("the task's jail cannot be made: {why}")));
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};

    extern "C" fn ignore(_: libc::c_int) {}

    /// Signals the runner handles (another child's SIGCHLD) arriving while the probe
    /// waits for the jail do not make it fail.
    #[test]
    fn the_probe_outlasts_signals() {
        // `cargo test` builds the binaries before it runs any test.
        let binary = super::jail_binary().expect("ufo-batch-jail is not built: run `cargo build`");
        // SAFETY: installs a handler that does nothing, for a signal nothing else uses;
        // pthread_self has no preconditions.
        let me = unsafe {
            libc::signal(libc::SIGUSR1, ignore as *const () as libc::sighandler_t);
            libc::pthread_self()
        };
        let stop = Arc::new(AtomicBool::new(false));
        let pinger = {
            let stop = Arc::clone(&stop);
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    // SAFETY: `me` is alive until `stop` is set and this thread joined.
                    unsafe { libc::pthread_kill(me, libc::SIGUSR1) };
                    std::thread::sleep(std::time::Duration::from_micros(200));
                }
            })
        };
        let probed = super::probe(&binary);
        stop.store(true, Ordering::Relaxed);
        pinger.join().unwrap();
        assert_eq!(probed, Ok(()));
    }
}
