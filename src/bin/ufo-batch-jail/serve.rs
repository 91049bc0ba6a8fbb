//! The init's work: start each command the runner asks for (its own process group, its
//! limits, its output on the pipes sent with the request), kill a command's group when
//! asked, reap every process of the namespace (orphans come to PID 1), say when a
//! command ends, and end everything when told or when the runner is gone.

use std::collections::HashMap;
use std::convert::Infallible;
use std::ffi::CString;
use std::os::fd::{AsRawFd, OwnedFd};

use crate::children::ChildSignals;
use crate::protocol::{Event, Inbox, Request, recv_with_fds};
use crate::setup::{CONTROL, os_error, tell};

pub(crate) fn serve() -> Result<Infallible, String> {
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
        if ready.control {
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
                        cpu,
                        stdin,
                    }) => {
                        let input = if stdin { inbox.fds.pop_front() } else { None };
                        let (out, err) = match (inbox.fds.pop_front(), inbox.fds.pop_front()) {
                            (Some(out), Some(err)) if input.is_some() || !stdin => (out, err),
                            _ => {
                                tell(&Event::SpawnFailed {
                                    id,
                                    message: "the command's output pipes did not arrive".into(),
                                });
                                continue;
                            }
                        };
                        let command = Command {
                            argv,
                            env,
                            cwd,
                            memory,
                            cpu,
                        };
                        match command.start(input, out, err) {
                            Ok(pid) => {
                                running.insert(pid, id);
                                tell(&Event::Started { id });
                            }
                            Err(message) => tell(&Event::SpawnFailed { id, message }),
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
}

/// A command to start.
struct Command {
    argv: Vec<Vec<u8>>,
    env: Vec<Vec<u8>>,
    cwd: Vec<u8>,
    memory: u64,
    cpu: u64,
}

impl Command {
    /// Forks and execs the command with `input` (or `/dev/null`) as its stdin and `out`
    /// and `err` as its stdout and stderr; returns its pid once the exec has happened, or
    /// why it could not.
    fn start(
        &self,
        input: Option<OwnedFd>,
        out: OwnedFd,
        err: OwnedFd,
    ) -> Result<libc::pid_t, String> {
        let cstrings = |list: &[Vec<u8>]| -> Result<Vec<CString>, String> {
            list.iter()
                .map(|b| {
                    CString::new(b.clone()).map_err(|_| "a NUL byte in the command".to_string())
                })
                .collect()
        };
        let argv = cstrings(&self.argv)?;
        let env = cstrings(&self.env)?;
        let cwd =
            CString::new(self.cwd.clone()).map_err(|_| "a NUL byte in the folder".to_string())?;
        let null = CString::new("/dev/null").unwrap_or_default();
        if argv.is_empty() {
            return Err("nothing to run".into());
        }
        let mut argv_ptrs: Vec<*const libc::c_char> = argv.iter().map(|c| c.as_ptr()).collect();
        argv_ptrs.push(std::ptr::null());
        let mut env_ptrs: Vec<*const libc::c_char> = env.iter().map(|c| c.as_ptr()).collect();
        env_ptrs.push(std::ptr::null());
        let mut report = [0 as libc::c_int; 2];
        // SAFETY: a close-on-exec pipe for the exec's outcome.
        if unsafe { libc::pipe2(report.as_mut_ptr(), libc::O_CLOEXEC) } < 0 {
            return Err(os_error("cannot make a pipe"));
        }
        // SAFETY: the init is single-threaded; the child only makes system calls on
        // memory prepared above, then execs or exits.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            // SAFETY: as above; nothing here returns.
            unsafe {
                let mut all: libc::sigset_t = std::mem::zeroed();
                libc::sigemptyset(&mut all);
                libc::sigprocmask(libc::SIG_SETMASK, &all, std::ptr::null_mut());
                libc::signal(libc::SIGPIPE, libc::SIG_DFL);
                libc::setpgid(0, 0);
                let stdin = match &input {
                    Some(fd) => fd.as_raw_fd(),
                    None => libc::open(null.as_ptr(), libc::O_RDONLY),
                };
                libc::dup2(stdin, 0);
                libc::dup2(out.as_raw_fd(), 1);
                libc::dup2(err.as_raw_fd(), 2);
                for (resource, value) in
                    [(libc::RLIMIT_AS, self.memory), (libc::RLIMIT_CPU, self.cpu)]
                {
                    if value > 0 {
                        let limit = libc::rlimit {
                            rlim_cur: value as libc::rlim_t,
                            rlim_max: value as libc::rlim_t,
                        };
                        libc::setrlimit(resource, &limit);
                    }
                }
                if libc::chdir(cwd.as_ptr()) == 0 {
                    libc::execve(argv_ptrs[0], argv_ptrs.as_ptr(), env_ptrs.as_ptr());
                }
                let errno = *libc::__errno_location();
                libc::write(
                    report[1],
                    &errno as *const libc::c_int as *const libc::c_void,
                    4,
                );
                libc::_exit(127);
            }
        }
        // SAFETY: closing our copy of the pipe's write end.
        unsafe { libc::close(report[1]) };
        drop((input, out, err));
        if pid < 0 {
            // SAFETY: closing the read end.
            unsafe { libc::close(report[0]) };
            return Err(os_error("cannot fork"));
        }
        let mut errno: libc::c_int = 0;
        // SAFETY: reads at most 4 bytes into errno; EOF means the exec happened.
        let n = loop {
            let n = unsafe {
                libc::read(
                    report[0],
                    &mut errno as *mut libc::c_int as *mut libc::c_void,
                    4,
                )
            };
            if n >= 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
                break n;
            }
        };
        // SAFETY: closing the read end.
        unsafe { libc::close(report[0]) };
        if n == 4 {
            let why = std::io::Error::from_raw_os_error(errno);
            let program = String::from_utf8_lossy(&self.argv[0]).into_owned();
            return Err(format!("cannot run {program}: {why}"));
        }
        Ok(pid)
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
