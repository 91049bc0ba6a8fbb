//! The runner's side of a task's jail (see the `ufo-batch-jail` binary for what the jail
//! does). A task's shell executor starts one jail for the task and runs every command
//! of the task through it; a desktop task's desktop runs in a second one. Each ends
//! with the task: the jail's processes are then all gone, whatever they did (`setsid`,
//! double forks, `kill -9` of their parent).
//!
//! One background task reads the jail's events and hands each to whoever waits for it.

mod error;
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

use error::Gone;
pub(crate) use error::JailError;
use factory::{JailProcess, START_TIMEOUT};
pub(crate) use factory::{close as close_factory, probe};
use protocol::{Event, Inbox, Request, frame, recv_with_fds, send_with_fds};

/// The jail binary's name, found beside the runner's.
const JAIL_BINARY: &str = "ufo-batch-jail";

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
    /// RLIMIT_DATA in bytes: the memory a program writes, not the address space it
    /// reserves (a browser reserves terabytes it never uses).
    pub(crate) data: Option<u64>,
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
    /// A folder seen as `/home/user` inside (writable): OSWorld's tasks name their files
    /// there.
    pub(crate) home: Option<PathBuf>,
    /// Folders kept in sight, read-only, even under a hidden one (the programs a desktop
    /// runs from a venv in the user's home).
    pub(crate) kept: Vec<PathBuf>,
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
        if let Some(home) = &self.home {
            args.extend(["--home".to_string(), path(home)]);
        }
        for dir in &self.kept {
            args.extend(["--ro".to_string(), path(dir)]);
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
    started: HashMap<u64, oneshot::Sender<Result<(), JailError>>>,
    exited: HashMap<u64, oneshot::Sender<JailExit>>,
    ended: Option<oneshot::Sender<u32>>,
    /// Set once the jail is gone, with why.
    gone: Option<Gone>,
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

/// The jail binary beside the current executable (or one folder up: unit tests run from
/// `target/debug/deps`).
pub(crate) fn jail_binary() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let dir = exe.parent()?;
    [dir.join(JAIL_BINARY), dir.parent()?.join(JAIL_BINARY)]
        .into_iter()
        .find(|p| p.is_file())
}

impl Jail {
    /// Starts a jail whose commands may write only in `writable`.
    pub(crate) async fn start(binary: &Path, writable: &[PathBuf]) -> Result<Jail, JailError> {
        let options = JailOptions {
            writable: writable.to_vec(),
            ..JailOptions::default()
        };
        Self::start_with(binary, &options).await
    }

    /// Starts a jail as `options` say.
    pub(crate) async fn start_with(
        binary: &Path,
        options: &JailOptions,
    ) -> Result<Jail, JailError> {
        let (ours, theirs) = std::os::unix::net::UnixStream::pair().map_err(JailError::Socket)?;
        let args = options.args();
        let binary = binary.to_path_buf();
        let process = tokio::task::spawn_blocking(move || {
            factory::make(&binary, &args, OwnedFd::from(theirs))
        })
        .await
        .map_err(JailError::Join)??;
        ours.set_nonblocking(true).map_err(JailError::UseSocket)?;
        let socket = UnixStream::from_std(ours).map_err(JailError::UseSocket)?;
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
            Ok(Err(_)) => Err(JailError::EndedBeforeReady),
            Err(_) => Err(JailError::NotReady(START_TIMEOUT)),
        }
    }

    /// Starts a command; returns once it runs (or why it cannot).
    pub(crate) async fn spawn(&mut self, spec: JailSpawn<'_>) -> Result<JailedCommand, JailError> {
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
            data: spec.data.unwrap_or(0),
            cpu: spec.cpu.unwrap_or(0),
            stdin: spec.stdin.is_some(),
        };
        let (started_tx, started_rx) = oneshot::channel();
        let (exit_tx, exit_rx) = oneshot::channel();
        {
            let mut waiters = self.waiters();
            if let Some(why) = &waiters.gone {
                return Err(why.clone().into());
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

    /// Why the jail is gone (killed, or its init died), once it is: in words, for a
    /// command's wait, which reports an I/O error.
    pub(crate) fn gone(&self) -> Option<String> {
        self.waiters().gone.as_ref().map(Gone::to_string)
    }

    fn gone_reason(&self) -> JailError {
        self.waiters()
            .gone
            .clone()
            .map_or(JailError::EndedUnexpectedly, JailError::Gone)
    }

    fn waiters(&self) -> std::sync::MutexGuard<'_, Waiters> {
        self.shared
            .waiters
            .lock()
            .unwrap_or_else(|p| p.into_inner())
    }

    async fn send(&self, request: &Request, fds: &[std::os::fd::RawFd]) -> Result<(), JailError> {
        let bytes = frame(&request.encode());
        let socket = &self.shared.socket;
        let mut sent = 0;
        while sent < bytes.len() {
            socket.writable().await.map_err(JailError::SocketFailed)?;
            let with = if sent == 0 { fds } else { &[] };
            match socket.try_io(Interest::WRITABLE, || {
                send_with_fds(socket.as_raw_fd(), &bytes[sent..], with)
            }) {
                Ok(n) => sent += n,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                Err(e) => return Err(JailError::Send(e)),
            }
        }
        Ok(())
    }
}

/// Reads the jail's events until it is gone, handing each to its waiter.
async fn read_events(shared: Arc<Shared>, ready: oneshot::Sender<Result<(), JailError>>) {
    let mut ready = Some(ready);
    let mut inbox = Inbox::default();
    // Events are a few bytes each; a frame larger than this comes in several reads.
    let mut buf = vec![0u8; 2 * 1024];
    let why = loop {
        if shared.socket.readable().await.is_err() {
            break Gone::Broken;
        }
        let mut fds = Vec::new();
        let got = shared.socket.try_io(Interest::READABLE, || {
            recv_with_fds(shared.socket.as_raw_fd(), &mut buf, &mut fds)
        });
        match got {
            Ok(0) => break Gone::Ended,
            Ok(n) => inbox.push(&buf[..n], fds),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => continue,
            Err(e) => break Gone::Socket(Arc::new(e)),
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
                        let _ = tx.send(Err(JailError::Fatal(message)));
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
                        let _ = tx.send(Err(JailError::SpawnFailed(message)));
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
        let _ = tx.send(Err(JailError::NotMade(why)));
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
        assert!(probed.is_ok(), "{probed:?}");
    }
}
