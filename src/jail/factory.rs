//! The runner's jail factory: one `ufo-batch-jail --zygote` process per runner, started
//! with the first jail, which forks every jail after it (a fork of a running process
//! instead of a program's start: see the zygote in the jail binary). A jail comes back as
//! its pid and a pidfd ([`JailProcess`]), through which it is killed and waited for
//! without racing pid reuse (the factory, its parent, reaps it).
//!
//! The factory's socket is a plain blocking one behind a mutex, so that any runtime (the
//! run's, a test's) can use it; a jail is asked for on a blocking thread. A factory that
//! died is started again for the next jail.
//!
//! The probe of a run's start (can a jail be made here?) lives here too: it is the same
//! blocking conversation, with one jail the factory makes.

use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::Duration;

use super::error::JailError;
use super::protocol::{Event, Inbox, Request, frame, recv_with_fds, send_with_fds};

/// How long the factory may take to answer.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(20);
/// How long a jail may take to be ready.
pub(super) const START_TIMEOUT: Duration = Duration::from_secs(20);

/// The running factory, if one was started.
static FACTORY: Mutex<Option<Factory>> = Mutex::new(None);

struct Factory {
    binary: PathBuf,
    socket: UnixStream,
    process: Child,
    inbox: Inbox,
}

/// A jail's process, made by the factory.
pub(crate) struct JailProcess {
    pid: u32,
    pidfd: OwnedFd,
}

impl JailProcess {
    /// Its process id.
    pub(crate) fn pid(&self) -> u32 {
        self.pid
    }

    /// Kills it (it may be gone already: then nothing happens).
    pub(crate) fn kill(&self) {
        // SAFETY: signals the process the pidfd refers to, never another one.
        unsafe {
            libc::syscall(
                libc::SYS_pidfd_send_signal,
                self.pidfd.as_raw_fd(),
                libc::SIGKILL,
                std::ptr::null::<libc::siginfo_t>(),
                0,
            );
        }
    }

    /// Waits until it has ended (at most `limit`).
    pub(crate) async fn wait(&self, limit: Duration) {
        // SAFETY: the pidfd stays open, the same descriptor, for as long as this
        // registration lives (it ends with this call; `self` outlives it).
        let Ok(fd) = (unsafe {
            tokio::io::unix::AsyncFd::register_with_interest(
                self.pidfd.as_raw_fd(),
                tokio::io::Interest::READABLE,
            )
        }) else {
            return;
        };
        // A pidfd is readable once its process has ended.
        let _ = tokio::time::timeout(limit, fd.readable()).await;
    }
}

impl JailProcess {
    /// Waits until it has ended (at most `limit`), blocking the thread.
    pub(crate) fn wait_blocking(&self, limit: Duration) {
        let mut fd = libc::pollfd {
            fd: self.pidfd.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        let ms = i32::try_from(limit.as_millis()).unwrap_or(i32::MAX);
        // SAFETY: polls one descriptor we own.
        unsafe { libc::poll(&mut fd, 1, ms) };
    }
}

impl Drop for JailProcess {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Asks the factory (started with `binary` when none runs) for a jail with `args`,
/// whose control socket is `control`.
pub(crate) fn make(
    binary: &Path,
    args: &[String],
    control: OwnedFd,
) -> Result<JailProcess, JailError> {
    let mut factory = FACTORY.lock().unwrap_or_else(|p| p.into_inner());
    // A factory that ended (killed) is replaced; so is one of another binary (tests).
    let usable = factory.as_mut().is_some_and(|f| {
        f.binary == binary && f.process.try_wait().is_ok_and(|ended| ended.is_none())
    });
    if !usable {
        *factory = Some(Factory::start(binary)?);
    }
    let Some(f) = factory.as_mut() else {
        return Err(JailError::FactoryNotStarted);
    };
    match f.make(args, &control) {
        Ok(made) => Ok(made),
        Err(e) => {
            // Whatever went wrong, the next jail gets a fresh factory.
            if let Some(mut old) = factory.take() {
                let _ = old.process.kill();
                let _ = old.process.wait();
            }
            Err(e)
        }
    }
}

/// Ends the factory, if one runs, once it has reaped the jails that ended (the next
/// jail starts a new one): the end of a batch, so that no process of the run outlives
/// it and the factory's time (and its jails') counts as the runner's children's.
pub(crate) fn close() {
    let old = FACTORY.lock().unwrap_or_else(|p| p.into_inner()).take();
    if let Some(Factory {
        socket,
        mut process,
        ..
    }) = old
    {
        drop(socket);
        let _ = process.wait();
    }
}

/// Checks that a jail can be made here: has the factory make one on a scratch folder,
/// and ends it.
pub(crate) fn probe(binary: &Path) -> Result<(), JailError> {
    use std::io::{Read, Write};
    let scratch = std::env::temp_dir().join(format!(".ufo-batch-probe-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).map_err(|source| JailError::Scratch {
        path: scratch.clone(),
        source,
    })?;
    let (mut ours, theirs) = UnixStream::pair().map_err(JailError::Socket)?;
    let args = ["--rw".to_string(), scratch.to_string_lossy().into_owned()];
    let child = make(binary, &args, OwnedFd::from(theirs))?;
    let deadline = std::time::Instant::now() + START_TIMEOUT;
    let mut inbox = Inbox::default();
    let mut buf = [0u8; 4096];
    let event = loop {
        if let Ok(Some(payload)) = inbox.next_frame() {
            break Event::decode(&payload).ok().map(Ok);
        }
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() {
            break Some(Err(JailError::NotReady(START_TIMEOUT)));
        }
        let _ = ours.set_read_timeout(Some(left));
        match ours.read(&mut buf) {
            Ok(0) => break None,
            Ok(n) => inbox.push(&buf[..n], Vec::new()),
            // A socket with a read timeout is interrupted by any signal the process
            // handles (SA_RESTART does not apply), such as another child's SIGCHLD.
            Err(e) if read_again(&e) => {}
            Err(e) => break Some(Err(JailError::Read(e))),
        }
    };
    let _ = ours.write_all(&frame(&Request::End.encode()));
    drop(ours);
    child.wait_blocking(START_TIMEOUT);
    let _ = std::fs::remove_dir(&scratch);
    match event {
        Some(Ok(Event::Ready)) => Ok(()),
        Some(Ok(Event::Fatal { message })) => Err(JailError::Refused(message)),
        Some(Err(why)) => Err(why),
        _ => Err(JailError::EndedBeforeReady),
    }
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

impl Factory {
    fn start(binary: &Path) -> Result<Self, JailError> {
        let (ours, theirs) = UnixStream::pair().map_err(JailError::Socket)?;
        let process = Command::new(binary)
            .arg("--zygote")
            .env_clear()
            .stdin(Stdio::from(OwnedFd::from(theirs)))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|source| JailError::StartFactory {
                binary: binary.to_path_buf(),
                source,
            })?;
        ours.set_read_timeout(Some(ANSWER_TIMEOUT))
            .map_err(JailError::FactorySocket)?;
        Ok(Self {
            binary: binary.to_path_buf(),
            socket: ours,
            process,
            inbox: Inbox::default(),
        })
    }

    fn make(&mut self, args: &[String], control: &OwnedFd) -> Result<JailProcess, JailError> {
        let request = Request::Make {
            args: args.iter().map(|a| a.as_bytes().to_vec()).collect(),
        };
        let bytes = frame(&request.encode());
        let fd = self.socket.as_raw_fd();
        let gone = JailError::FactoryGone;
        let mut sent = send_with_fds(fd, &bytes, &[control.as_raw_fd()]).map_err(gone)?;
        while sent < bytes.len() {
            sent += send_with_fds(fd, &bytes[sent..], &[]).map_err(gone)?;
        }
        let deadline = std::time::Instant::now() + ANSWER_TIMEOUT;
        let mut buf = [0u8; 1024];
        loop {
            if let Some(payload) = self.inbox.next_frame().map_err(gone)? {
                return match Event::decode(&payload).map_err(gone)? {
                    Event::Made { pid } => match self.inbox.fds.pop_front() {
                        Some(pidfd) => Ok(JailProcess { pid, pidfd }),
                        None => Err(JailError::NoPidfd),
                    },
                    Event::Fatal { message } => Err(JailError::Refused(message)),
                    other => Err(JailError::UnexpectedAnswer(other)),
                };
            }
            if std::time::Instant::now() > deadline {
                return Err(JailError::FactorySilent(ANSWER_TIMEOUT));
            }
            let mut fds = Vec::new();
            match recv_with_fds(fd, &mut buf, &mut fds) {
                Ok(0) => return Err(JailError::FactoryEnded),
                Ok(n) => self.inbox.push(&buf[..n], fds),
                // A signal the runner handles (a child's SIGCHLD) interrupts the read;
                // the read's own timeout ends in the deadline above.
                Err(e) if read_again(&e) => {}
                Err(e) => return Err(gone(e)),
            }
        }
    }
}
