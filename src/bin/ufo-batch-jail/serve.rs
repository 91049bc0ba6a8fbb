//! The init's work: start each command the runner asks for (its own process group, its
//! limits, its output on the pipes sent with the request), kill a command's group when
//! asked, reap every process of the namespace (orphans come to PID 1), say when a
//! command ends, and end everything when told or when the runner is gone.

use std::collections::HashMap;
use std::convert::Infallible;
use std::os::fd::OwnedFd;

use crate::children::ChildSignals;
use crate::command::Command;
use crate::control::{CONTROL, tell};
use crate::error::{SpawnError, SysError};
use crate::protocol::{Event, Inbox, Request, recv_with_fds};

/// Serves the runner until it ends the jail or is gone (then the init exits); returns
/// only when it cannot watch its children.
pub(crate) fn serve() -> Result<Infallible, SysError> {
    let children = ChildSignals::open()?;
    // SAFETY: changes only this process's disposition: a runner gone away is an error
    // to the write, not our death.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
    }
    let mut inbox = Inbox::default();
    let mut running: HashMap<libc::pid_t, u64> = HashMap::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let ready = children.wait(CONTROL);
        if ready.children {
            reap(&mut running);
        }
        if !ready.control {
            continue;
        }
        let mut received = Vec::new();
        match recv_with_fds(CONTROL, &mut buf, &mut received) {
            Ok(0) | Err(_) => end_all(false),
            Ok(n) => inbox.push(&buf[..n], received),
        }
        while let Ok(Some(payload)) = inbox.next_frame() {
            match Request::decode(&payload) {
                Ok(Request::Run {
                    id,
                    argv,
                    env,
                    cwd,
                    memory,
                    data,
                    cpu,
                    stdin,
                }) => {
                    let command = Command {
                        argv,
                        env,
                        cwd,
                        memory,
                        data,
                        cpu,
                    };
                    match run(&command, stdin, &mut inbox) {
                        Ok(pid) => {
                            running.insert(pid, id);
                            tell(&Event::Started { id });
                        }
                        Err(e) => tell(&Event::SpawnFailed {
                            id,
                            // The runner gets words (its side says whose failure it is).
                            message: e.to_string(),
                        }),
                    }
                }
                Ok(Request::Kill { id }) => {
                    if let Some((&pid, _)) = running.iter().find(|(_, v)| **v == id) {
                        // SAFETY: signals our own children's process group.
                        unsafe {
                            libc::kill(-pid, libc::SIGKILL);
                            libc::kill(pid, libc::SIGKILL);
                        }
                    }
                }
                Ok(Request::End | Request::Make { .. }) | Err(_) => end_all(true),
            }
        }
    }
}

/// Starts `command` on the descriptors that came with its request (its stdin first, when
/// `stdin`); returns its pid.
fn run(command: &Command, stdin: bool, inbox: &mut Inbox) -> Result<libc::pid_t, SpawnError> {
    let input: Option<OwnedFd> = if stdin { inbox.fds.pop_front() } else { None };
    match (inbox.fds.pop_front(), inbox.fds.pop_front()) {
        (Some(out), Some(err)) if input.is_some() || !stdin => command.start(input, out, err),
        _ => Err(SpawnError::NoPipes),
    }
}

/// Reaps every process that has ended; tells the runner about its commands.
fn reap(running: &mut HashMap<libc::pid_t, u64>) {
    loop {
        let mut status = 0;
        // SAFETY: waits for any child of ours without blocking.
        let pid = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
        if pid <= 0 {
            return;
        }
        if let Some(id) = running.remove(&pid) {
            let (code, signal) = if libc::WIFEXITED(status) {
                (Some(libc::WEXITSTATUS(status)), None)
            } else if libc::WIFSIGNALED(status) {
                (None, Some(libc::WTERMSIG(status)))
            } else {
                continue;
            };
            tell(&Event::Exited { id, code, signal });
        }
    }
}

/// Kills every process of the namespace, says how many there were (when the runner
/// asked), and ends the init, which ends the namespace.
fn end_all(asked: bool) -> ! {
    let left = std::fs::read_dir("/proc")
        .map(|entries| {
            entries
                .flatten()
                .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
                .filter(|pid| *pid != 1)
                .count() as u32
        })
        .unwrap_or(0);
    // SAFETY: kill(-1) from PID 1 reaches every other process of its namespace only.
    unsafe {
        libc::kill(-1, libc::SIGKILL);
        let mut status = 0;
        while libc::waitpid(-1, &mut status, 0) > 0 {}
    }
    if asked {
        tell(&Event::Ended { left });
    }
    std::process::exit(0)
}
