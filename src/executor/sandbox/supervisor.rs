//! The `sandbox-exec` step's supervisor (`--supervise`, Landlock mode): without a PID
//! namespace, this process is what keeps a command's processes within its task.
//!
//! It becomes a child subreaper, so every process the command leaves behind, one that
//! started its own session (`setsid`) included, becomes its child when its parent ends;
//! then it forks the command (which confines itself in the child and execs) and waits.
//! It ends every one of those processes, generation by generation, when the runner asks
//! (SIGTERM) or when the runner is gone (its parent-death signal). Otherwise it lives
//! exactly as long as any of them, so the runner knows a command left something running
//! while this process exists. The command is confined and this process is not: from
//! Linux 6.12, Landlock keeps the command from signalling it.
//!
//! With `--report-status`, standard input is a pipe on which the command's own end is
//! written as one line (`exit N` or `signal N`) as soon as it happens.

use std::io::Write;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// The signals this process waits for: a child ended, the runner asks for the end, the
/// runner (or the thread that started us) is gone.
const WATCHED: [libc::c_int; 4] = [libc::SIGCHLD, libc::SIGTERM, libc::SIGINT, libc::SIGHUP];

/// Starts the command through `start` and supervises it until every process it left has
/// ended; returns this process's exit code (the command's). `start` runs in the forked
/// child, told whether the child is ready (standard input in place); it must turn the
/// child into the command, and say why not when it returns. The error is why the command
/// could not be started at all.
pub(crate) fn supervise(
    runner: u32,
    report_status: bool,
    start: impl FnOnce(Result<(), String>),
) -> Result<u8, String> {
    Ok(Supervisor::start(runner, report_status, start)?.serve())
}

struct Supervisor {
    runner: libc::pid_t,
    /// SIGCHLD, SIGTERM, SIGINT and SIGHUP, blocked and read here.
    signals: OwnedFd,
    /// The command's own process.
    command: libc::pid_t,
    /// Its wait status, once it ended.
    ended: Option<libc::c_int>,
    /// Where its end is reported (taken when written).
    report: Option<std::fs::File>,
}

impl Supervisor {
    fn start(
        runner: u32,
        report_status: bool,
        start: impl FnOnce(Result<(), String>),
    ) -> Result<Self, String> {
        let runner = runner as libc::pid_t;
        let failed = |what: &str| format!("{what}: {}", std::io::Error::last_os_error());
        // SAFETY: prctl only changes this process.
        unsafe {
            if libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0 {
                return Err(failed("cannot become a subreaper"));
            }
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGHUP, 0, 0, 0) != 0 {
                return Err(failed("cannot watch the runner"));
            }
        }
        // Set after the runner could already have ended: look once.
        if !runner_alive(runner) {
            return Err("the runner is gone".to_string());
        }
        let signals = block_and_watch()?;
        let null = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open("/dev/null")
            .map_err(|e| format!("cannot open /dev/null: {e}"))?;
        // SAFETY: this process has one thread (the `sandbox-exec` step starts none), so
        // the child may run any code before it execs.
        let command = unsafe { libc::fork() };
        if command < 0 {
            return Err(failed("cannot start the command"));
        }
        if command == 0 {
            start(in_child(&null, report_status));
            // SAFETY: ends the child without running the parent's exit handlers.
            unsafe { libc::_exit(126) };
        }
        // The command's output pipes (and a service's input) are the command's alone:
        // they must close when its processes are gone, not when this one is.
        let keep_stdin = report_status;
        for fd in [0, 1, 2] {
            if fd == 0 && keep_stdin {
                continue;
            }
            // SAFETY: dup2 onto a standard descriptor of this process.
            unsafe { libc::dup2(null.as_raw_fd(), fd) };
        }
        // SAFETY: descriptor 0 is the report pipe, owned from here on (and moved off 0).
        let report = report_status.then(|| unsafe {
            let fd = libc::fcntl(0, libc::F_DUPFD_CLOEXEC, 3);
            libc::dup2(null.as_raw_fd(), 0);
            std::fs::File::from(OwnedFd::from_raw_fd(fd))
        });
        Ok(Self {
            runner,
            signals,
            command,
            ended: None,
            report,
        })
    }

    /// Waits for signals until every process is gone.
    fn serve(&mut self) -> u8 {
        loop {
            match self.next_signal() {
                libc::SIGCHLD if self.reap() => return self.exit_code(),
                libc::SIGTERM | libc::SIGINT => return self.end_all(),
                // Sent when the thread of the runner that started us ends, and again
                // when the runner itself does: only the second is the end.
                libc::SIGHUP if !runner_alive(self.runner) => return self.end_all(),
                _ => {}
            }
        }
    }

    /// The next watched signal (blocking).
    fn next_signal(&self) -> libc::c_int {
        // SAFETY: an all-zero siginfo record is valid; read fills it whole or fails.
        let mut info: libc::signalfd_siginfo = unsafe { std::mem::zeroed() };
        let size = std::mem::size_of::<libc::signalfd_siginfo>();
        loop {
            // SAFETY: reads one record into `info`, which has its size.
            let n = unsafe {
                libc::read(
                    self.signals.as_raw_fd(),
                    (&raw mut info).cast::<libc::c_void>(),
                    size,
                )
            };
            if n == size as isize {
                return info.ssi_signo as libc::c_int;
            }
            if std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
                // The descriptor broke: nothing more can be watched, so end it all.
                return libc::SIGTERM;
            }
        }
    }

    /// Reaps every ended child; true when none is left.
    fn reap(&mut self) -> bool {
        loop {
            let mut status = 0;
            // SAFETY: waitpid writes the status it is given.
            let pid = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
            match pid {
                0 => return false,
                p if p > 0 => self.ended_child(p, status),
                _ if errno() == libc::EINTR => {}
                // ECHILD: no child at all.
                _ => return true,
            }
        }
    }

    /// Ends every process this one has or will inherit, then itself.
    fn end_all(&mut self) -> u8 {
        loop {
            let children = children();
            for &pid in &children {
                // SAFETY: a child of this process, not yet reaped: the pid is its own.
                unsafe { libc::kill(pid, libc::SIGKILL) };
            }
            let mut status = 0;
            // Wait for one of those just killed; with none listed, only look.
            let flags = if children.is_empty() {
                libc::WNOHANG
            } else {
                0
            };
            // SAFETY: waitpid writes the status it is given.
            let pid = unsafe { libc::waitpid(-1, &mut status, flags) };
            match pid {
                p if p > 0 => self.ended_child(p, status),
                // A child appeared between the listing and the look: list again.
                0 => {}
                _ if errno() == libc::EINTR => {}
                _ => return self.exit_code(),
            }
        }
    }

    fn ended_child(&mut self, pid: libc::pid_t, status: libc::c_int) {
        if pid != self.command || self.ended.is_some() {
            return;
        }
        self.ended = Some(status);
        if let Some(mut report) = self.report.take() {
            let line = if libc::WIFSIGNALED(status) {
                format!("signal {}\n", libc::WTERMSIG(status))
            } else {
                format!("exit {}\n", libc::WEXITSTATUS(status))
            };
            // The runner may be gone; nothing else to tell then.
            let _ = report.write_all(line.as_bytes());
        }
    }

    fn exit_code(&self) -> u8 {
        match self.ended {
            Some(s) if libc::WIFSIGNALED(s) => 128u8.saturating_add(libc::WTERMSIG(s) as u8),
            Some(s) => libc::WEXITSTATUS(s) as u8,
            None => 126,
        }
    }
}

/// In the forked child: the signal mask back to normal, and /dev/null as standard input
/// when the parent keeps the report pipe there.
fn in_child(null: &std::fs::File, report_status: bool) -> Result<(), String> {
    // SAFETY: plain signal-mask and descriptor calls on this process.
    unsafe {
        let mut none: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut none);
        libc::sigprocmask(libc::SIG_SETMASK, &none, std::ptr::null_mut());
        if report_status && libc::dup2(null.as_raw_fd(), 0) < 0 {
            return Err(format!(
                "cannot give the command its input: {}",
                std::io::Error::last_os_error()
            ));
        }
    }
    Ok(())
}

/// Blocks the watched signals and opens a descriptor that reads them.
fn block_and_watch() -> Result<OwnedFd, String> {
    // SAFETY: plain signal-mask calls; the set is initialised before use.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for signal in WATCHED {
            libc::sigaddset(&mut set, signal);
        }
        libc::sigprocmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
        let fd = libc::signalfd(-1, &set, libc::SFD_CLOEXEC);
        if fd < 0 {
            return Err(format!(
                "cannot watch the command: {}",
                std::io::Error::last_os_error()
            ));
        }
        Ok(OwnedFd::from_raw_fd(fd))
    }
}

/// True while this process's parent is still `runner` (when the runner dies, this
/// process passes to another).
fn runner_alive(runner: libc::pid_t) -> bool {
    // SAFETY: getppid has no preconditions.
    unsafe { libc::getppid() == runner }
}

/// This process's children, from `/proc` (its one thread's `children` list, or a scan of
/// every process where the kernel keeps no such list).
fn children() -> Vec<libc::pid_t> {
    // SAFETY: getpid has no preconditions.
    let me = unsafe { libc::getpid() };
    let parse = |text: &str| -> Vec<libc::pid_t> {
        text.split_whitespace()
            .filter_map(|p| p.parse().ok())
            .collect()
    };
    if let Ok(text) = std::fs::read_to_string(format!("/proc/{me}/task/{me}/children")) {
        return parse(&text);
    }
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<libc::pid_t>().ok())
        .filter(|pid| parent_of(*pid) == Some(me))
        .collect()
}

/// A process's parent, from `/proc/PID/stat` (the field after the state, past the
/// command name, which may hold any character).
fn parent_of(pid: libc::pid_t) -> Option<libc::pid_t> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(1)?.parse().ok()
}

fn errno() -> libc::c_int {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}
