//! `ufo-batch-jail --zygote`: the runner's jail factory. The runner starts one, with its
//! socket as standard input, and asks it for every task's jail instead of starting the
//! jail binary each time: a fork of this small process that is already running costs a
//! fraction of a new program's start (its loading, linking and the CPU probing of the C
//! library, which traps to the hypervisor on a virtual machine: about 1 ms of CPU per
//! jail here, a sixth of a short task's).
//!
//! Each request carries the jail's arguments and its control socket. The child becomes
//! that jail exactly as if the binary had been started with them (`setup::main`); the
//! factory sends back the child's pid and a pidfd, through which the runner kills it and
//! waits for it without racing pid reuse, and reaps it when it ends. The factory ends
//! when the runner's socket closes (the runner ended, even by `kill -9`); the jails it
//! made go on until their own sockets close, as every jail does.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::process::ExitCode;

use crate::children::ChildSignals;
use crate::control::CONTROL;
use crate::error::{SysError, ZygoteError};
use crate::protocol::{Event, Inbox, Request, frame, recv_with_fds, send_with_fds};
use crate::setup;

/// The runner's socket: the factory's standard input.
const RUNNER: RawFd = 0;

/// Signals a scheduler sends to every process of a job: the factory ignores them (the
/// runner decides when things end); its jails start with them as a fresh program would.
const JOB_SIGNALS: [libc::c_int; 4] = [libc::SIGTERM, libc::SIGINT, libc::SIGHUP, libc::SIGQUIT];

/// Serves the runner until its socket closes.
pub(crate) fn main() -> ExitCode {
    let children = match ChildSignals::open() {
        Ok(fd) => fd,
        Err(e) => {
            eprintln!("ufo-batch-jail --zygote: {e}");
            return ExitCode::from(1);
        }
    };
    // SAFETY: changes only this process's dispositions and how its descendants are
    // reaped.
    unsafe {
        for signal in JOB_SIGNALS {
            libc::signal(signal, libc::SIG_IGN);
        }
        // A jail's init whose outer process the runner killed (it kills the jail once
        // its init has said it is done) comes to the factory, which reaps it as its
        // own, instead of waiting as a zombie for the machine's init to get to it.
        libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    }
    let mut inbox = Inbox::default();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let ready = children.wait(RUNNER);
        if ready.children {
            reap();
        }
        if !ready.control {
            continue;
        }
        let mut received = Vec::new();
        match recv_with_fds(RUNNER, &mut buf, &mut received) {
            Ok(0) | Err(_) => {
                // The runner is done: the jails that ended are reaped, so that their
                // time counts as the factory's children's when the runner reaps it.
                children.drain();
                reap();
                return ExitCode::SUCCESS;
            }
            Ok(n) => inbox.push(&buf[..n], received),
        }
        loop {
            let payload = match inbox.next_frame() {
                Ok(Some(payload)) => payload,
                Ok(None) => break,
                Err(_) => return ExitCode::from(1),
            };
            let reply = match (Request::decode(&payload), inbox.fds.pop_front()) {
                (Ok(Request::Make { args }), Some(control)) => make(args, control),
                _ => Err(ZygoteError::NotAJail),
            };
            let (event, pidfd) = match reply {
                Ok((pid, pidfd)) => (Event::Made { pid }, Some(pidfd)),
                // The runner gets words (its side says whose failure it is).
                Err(e) => (
                    Event::Fatal {
                        message: e.to_string(),
                    },
                    None,
                ),
            };
            let fds: Vec<RawFd> = pidfd.iter().map(AsRawFd::as_raw_fd).collect();
            if send(&frame(&event.encode()), &fds).is_err() {
                return ExitCode::SUCCESS;
            }
        }
    }
}

/// Sends a whole frame to the runner.
fn send(bytes: &[u8], fds: &[RawFd]) -> std::io::Result<()> {
    let mut sent = send_with_fds(RUNNER, bytes, fds)?;
    while sent < bytes.len() {
        match send_with_fds(RUNNER, &bytes[sent..], &[])? {
            0 => return Err(std::io::ErrorKind::WriteZero.into()),
            n => sent += n,
        }
    }
    Ok(())
}

/// Forks the jail: the child becomes it, on `control`; returns its pid and a pidfd.
fn make(args: Vec<Vec<u8>>, control: OwnedFd) -> Result<(u32, OwnedFd), ZygoteError> {
    let args = args
        .into_iter()
        .map(|a| String::from_utf8(a).map_err(|_| ZygoteError::NotUtf8))
        .collect::<Result<Vec<String>, ZygoteError>>()?;
    // SAFETY: fork in a single-threaded process; the child continues in plain Rust.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(SysError::last("cannot fork a jail").into());
    }
    if pid == 0 {
        // SAFETY: the child sets itself up as a freshly started jail would be: its
        // control socket as standard input (replacing the runner's socket) and no other
        // descriptor of the factory's (other jails' sockets waiting in the inbox among
        // them), no signal blocked, default dispositions for the signals the factory
        // ignores.
        unsafe {
            libc::dup2(control.as_raw_fd(), CONTROL);
            libc::syscall(libc::SYS_close_range, 3, libc::c_uint::MAX, 0);
            let mut none: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut none);
            libc::sigprocmask(libc::SIG_SETMASK, &none, std::ptr::null_mut());
            for signal in JOB_SIGNALS {
                libc::signal(signal, libc::SIG_DFL);
            }
        }
        let code = setup::main(args);
        // Flushes nothing and runs no destructor of the factory's.
        // SAFETY: ends this child.
        unsafe { libc::_exit(if code == ExitCode::SUCCESS { 0 } else { 1 }) };
    }
    drop(control);
    // SAFETY: pidfd_open on our own child, which cannot have been reaped yet (we reap).
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    if fd < 0 {
        let why = SysError::last("cannot open a pidfd for the jail");
        // SAFETY: the child we just made, unusable without its pidfd.
        unsafe { libc::kill(pid, libc::SIGKILL) };
        return Err(why.into());
    }
    // SAFETY: a descriptor pidfd_open just made, owned from here.
    Ok((pid as u32, unsafe { OwnedFd::from_raw_fd(fd as RawFd) }))
}

/// Reaps every jail that ended, and every process of a jail that came to the factory
/// (see `main`).
fn reap() {
    let mut status = 0;
    // SAFETY: reaps our own children without waiting.
    while unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) } > 0 {}
}
