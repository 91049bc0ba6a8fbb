//! The jail's namespaces. The process the runner starts enters new user, mount, IPC and
//! PID namespaces and forks the task's init (PID 1 of the new PID namespace), then only
//! waits for it; the init builds the file system view (`view`), hardens itself
//! (`harden`) and serves (`serve`).

use std::process::ExitCode;

use crate::control::{CONTROL, fatal, tell};
use crate::error::{SetupError, SysError};
use crate::options::Options;
use crate::protocol::Event;

/// Becomes the jail `args` (the binary's arguments) describe; returns when it ends.
pub(crate) fn main(args: Vec<String>) -> ExitCode {
    let options = match Options::parse(args) {
        Ok(o) => o,
        Err(e) => return fatal(&e),
    };
    if let Err(e) = enter_namespaces(&options) {
        return fatal(&e);
    }
    // SAFETY: fork in a single-threaded process; the child continues in plain Rust.
    match unsafe { libc::fork() } {
        -1 => fatal(&SysError::last("cannot start the task's init")),
        0 => match init(&options) {
            Ok(never) => match never {},
            Err(e) => fatal(&e),
        },
        child => outer(child),
    }
}

/// Enters the new namespaces, this user mapped to root in the new user namespace.
fn enter_namespaces(options: &Options) -> Result<(), SetupError> {
    // SAFETY: plain system calls on this single-threaded process.
    let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
    // A desktop gets a network namespace of its own: abstract Unix sockets (an X
    // server's, a session bus's) are per network namespace, so no other desktop and
    // nothing of the machine's can be reached that way, whatever the kernel's Landlock.
    let mut flags =
        libc::CLONE_NEWUSER | libc::CLONE_NEWNS | libc::CLONE_NEWIPC | libc::CLONE_NEWPID;
    if options.desktop {
        flags |= libc::CLONE_NEWNET;
    }
    // SAFETY: unshare only changes this process's namespaces.
    SysError::check(
        unsafe { libc::unshare(flags) } as libc::c_long,
        "cannot create namespaces",
    )?;
    let maps = [
        ("/proc/self/setgroups", "deny".to_string()),
        ("/proc/self/uid_map", format!("0 {uid} 1")),
        ("/proc/self/gid_map", format!("0 {gid} 1")),
    ];
    for (file, text) in maps {
        std::fs::write(file, text).map_err(|source| SetupError::Write { file, source })?;
    }
    if options.desktop {
        loopback_up()?;
    }
    Ok(())
}

/// Brings up the new network namespace's loopback (it starts down): a desktop's
/// programs talk over `127.0.0.1` among themselves (OSWorld's server and its
/// evaluator), and nothing else is reachable from it.
fn loopback_up() -> Result<(), SetupError> {
    // SAFETY: a socket of our own, and ioctls on a zeroed `ifreq` naming "lo".
    unsafe {
        let socket = libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0);
        SysError::check(
            socket as libc::c_long,
            "cannot open a socket to bring up loopback",
        )?;
        let mut request: libc::ifreq = std::mem::zeroed();
        for (to, from) in request.ifr_name.iter_mut().zip(b"lo\0") {
            *to = *from as libc::c_char;
        }
        let got = libc::ioctl(socket, libc::SIOCGIFFLAGS, &mut request);
        let set = if got < 0 {
            got
        } else {
            request.ifr_ifru.ifru_flags |= (libc::IFF_UP | libc::IFF_RUNNING) as libc::c_short;
            libc::ioctl(socket, libc::SIOCSIFFLAGS, &request)
        };
        libc::close(socket);
        SysError::check(set as libc::c_long, "cannot bring up loopback")?;
        Ok(())
    }
}

/// The process the runner started: waits for the init and ends with it. Signals a
/// scheduler sends to every process of a job do not end it: only the runner decides
/// when a task's jail ends.
fn outer(child: libc::pid_t) -> ExitCode {
    // SAFETY: closing our copy of the socket and ignoring signals only affect this process.
    unsafe {
        libc::close(CONTROL);
        for signal in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP, libc::SIGQUIT] {
            libc::signal(signal, libc::SIG_IGN);
        }
    }
    let mut status = 0;
    loop {
        // SAFETY: waits for our own child.
        let r = unsafe { libc::waitpid(child, &mut status, 0) };
        if r == child
            || (r < 0 && std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR))
        {
            break;
        }
    }
    ExitCode::from(if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status) as u8
    } else {
        1
    })
}

/// The task's init: PID 1 of the new PID namespace.
fn init(options: &Options) -> Result<std::convert::Infallible, SetupError> {
    // SAFETY: prctl and setsid only change this process.
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
        libc::setsid();
    }
    crate::view::build(options)?;
    crate::harden::harden(options)?;
    tell(&Event::Ready);
    crate::serve::serve().map_err(SetupError::from)
}
