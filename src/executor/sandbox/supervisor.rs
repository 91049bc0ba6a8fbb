//! The `sandbox-exec` step's supervisor (`--supervise`, Landlock mode): without a PID
//! namespace, this process is what keeps a command's processes within its task.
//!
//! It becomes a child subreaper, so every process the command leaves behind, one that
//! started its own session (`setsid`) included, becomes its child when its parent ends;
//! then it forks the command, which starts a session of its own (no terminal, no job
//! control signal reaches this process), confines itself and execs. This process waits.
//! It ends every process it has (the whole tree in one pass, again until none is left,
//! never blocking on one) when the runner asks ([`end_signal`], a real-time signal: the
//! SIGTERM a scheduler or service manager sends to every process is the runner's to
//! handle, with its grace period) or when the runner is gone (its parent-death signal).
//! Otherwise it lives exactly as long as any of them, so the runner knows a command left
//! something running while this process exists. The command is confined and this
//! process is not: Landlock keeps the command from tracing it, and from Linux 6.12 from
//! signalling it.
//!
//! With `--report-status`, standard input is a pipe on which the command's own end is
//! written as one line as soon as it happens: `exit N` or `signal N`, then `done` when
//! nothing of the command is left or `running` when something is.

use std::io::Write;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use super::error::ConfineError;

/// The signals this process waits for: a child ended, the runner (or the thread that
/// started us) is gone, the runner asks for the end.
fn watched() -> [libc::c_int; 3] {
    [libc::SIGCHLD, libc::SIGHUP, end_signal()]
}

/// The signal by which the runner asks a supervisor to end everything it supervises.
pub(crate) fn end_signal() -> libc::c_int {
    libc::SIGRTMIN() + 3
}

/// Signals ignored here (the command gets them back as usual): job control, which would
/// stop this process, and the termination signals sent to a whole process tree.
const IGNORED: [libc::c_int; 5] = [
    libc::SIGTSTP,
    libc::SIGTTIN,
    libc::SIGTTOU,
    libc::SIGTERM,
    libc::SIGINT,
];

/// The longest pause between two passes over processes that are slow to end.
const MAX_PAUSE: std::time::Duration = std::time::Duration::from_millis(50);

/// Starts the command through `start` and supervises it until every process it left has
/// ended; returns this process's exit code (the command's). `start` runs in the forked
/// child, told whether the child is ready (standard input in place); it must turn the
/// child into the command, and say why not when it returns. The error is why the command
/// could not be started at all.
pub(crate) fn supervise(
    runner: u32,
    report_status: bool,
    start: impl FnOnce(Result<(), ConfineError>),
) -> Result<u8, ConfineError> {
    Ok(Supervisor::start(runner, report_status, start)?.serve())
}

struct Supervisor {
    runner: libc::pid_t,
    /// This process.
    me: libc::pid_t,
    /// The watched signals, blocked and read here.
    signals: OwnedFd,
    /// The command's own process.
    command: libc::pid_t,
    /// Its wait status, once it ended.
    ended: Option<libc::c_int>,
    /// Where its end is reported (taken when written).
    report: Option<std::fs::File>,
}

/// What reaping found.
enum Reaped {
    /// Every child is gone.
    AllGone,
    /// Some are left; this many were reaped.
    Some(usize),
}

impl Supervisor {
    fn start(
        runner: u32,
        report_status: bool,
        start: impl FnOnce(Result<(), ConfineError>),
    ) -> Result<Self, ConfineError> {
        let runner = runner as libc::pid_t;
        // Blocked before the parent-death signal is set, which would otherwise end this
        // process should the runner's thread that started it end.
        let signals = block_and_watch()?;
        set_ignored(libc::SIG_IGN);
        // SAFETY: prctl only changes this process.
        unsafe {
            if libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0 {
                return Err(ConfineError::last(ConfineError::Subreaper));
            }
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGHUP, 0, 0, 0) != 0 {
                return Err(ConfineError::last(ConfineError::WatchRunner));
            }
        }
        // Set after the runner could already have ended: look once.
        if !runner_alive(runner) {
            return Err(ConfineError::RunnerGone);
        }
        let null = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open("/dev/null")
            .map_err(ConfineError::DevNull)?;
        // SAFETY: this process has one thread (the `sandbox-exec` step starts none), so
        // the child may run any code before it execs.
        let command = unsafe { libc::fork() };
        if command < 0 {
            return Err(ConfineError::last(ConfineError::Fork));
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
        // Descriptor 0 is the report pipe, owned from here on (and moved off 0). Without
        // a descriptor to move it to, the runner gets no report and reads this
        // process's end instead.
        // SAFETY: fcntl and dup2 on this process's descriptors; the new one is owned.
        let report = report_status
            .then(|| unsafe {
                let fd = libc::fcntl(0, libc::F_DUPFD_CLOEXEC, 3);
                libc::dup2(null.as_raw_fd(), 0);
                (fd >= 0).then(|| std::fs::File::from(OwnedFd::from_raw_fd(fd)))
            })
            .flatten();
        Ok(Self {
            runner,
            // SAFETY: getpid has no preconditions.
            me: unsafe { libc::getpid() },
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
                libc::SIGCHLD if matches!(self.reap(), Reaped::AllGone) => {
                    return self.exit_code();
                }
                signal if signal == end_signal() => return self.end_all(),
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
                return end_signal();
            }
        }
    }

    /// Reaps every child that has ended, without waiting; reports the command's end
    /// once it is among them.
    fn reap(&mut self) -> Reaped {
        let mut reaped = 0;
        let result = loop {
            let mut status = 0;
            // SAFETY: waitpid writes the status it is given.
            let pid = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
            match pid {
                0 => break Reaped::Some(reaped),
                p if p > 0 => {
                    reaped += 1;
                    if p == self.command && self.ended.is_none() {
                        self.ended = Some(status);
                    }
                }
                _ if errno() == libc::EINTR => {}
                // ECHILD: no child at all.
                _ => break Reaped::AllGone,
            }
        };
        self.send_report(matches!(result, Reaped::AllGone));
        result
    }

    /// Ends every process this one has or will inherit, then itself. Each pass kills the
    /// whole tree (children, theirs, and so on), then reaps what ended; a process that
    /// cannot be reaped yet (a traced one, whose tracer is killed in the same pass) is
    /// looked at again after a pause, never waited for.
    fn end_all(&mut self) -> u8 {
        let mut pause = std::time::Duration::from_millis(1);
        loop {
            let tree = descendants();
            if tree.is_empty() && self.ended.is_none() {
                // Nothing listed (`/proc` unreadable?) while the command is not reaped:
                // it at least is ours to end.
                // SAFETY: kill only sends a signal; the child is not reaped yet.
                unsafe { libc::kill(self.command, libc::SIGKILL) };
            }
            for (pid, parent) in tree {
                kill_in_tree(pid, parent, self.me);
            }
            match self.reap() {
                Reaped::AllGone => return self.exit_code(),
                Reaped::Some(0) => {
                    std::thread::sleep(pause);
                    pause = (pause * 2).min(MAX_PAUSE);
                }
                Reaped::Some(_) => pause = std::time::Duration::from_millis(1),
            }
        }
    }

    /// Writes the command's end (once it has ended, and once), and whether anything of
    /// it is left.
    fn send_report(&mut self, nothing_left: bool) {
        let Some(status) = self.ended else { return };
        let Some(mut report) = self.report.take() else {
            return;
        };
        let end = if libc::WIFSIGNALED(status) {
            format!("signal {}", libc::WTERMSIG(status))
        } else {
            format!("exit {}", libc::WEXITSTATUS(status))
        };
        let left = if nothing_left { "done" } else { "running" };
        // The runner may be gone; nothing else to tell then.
        let _ = report.write_all(format!("{end} {left}\n").as_bytes());
    }

    fn exit_code(&self) -> u8 {
        match self.ended {
            Some(s) if libc::WIFSIGNALED(s) => 128u8.saturating_add(libc::WTERMSIG(s) as u8),
            Some(s) => libc::WEXITSTATUS(s) as u8,
            None => 126,
        }
    }
}

/// In the forked child: signals back to normal, a session of its own (so that nothing it
/// does with a terminal stops its supervisor, and it has no terminal), and /dev/null as
/// standard input when the parent keeps the report pipe there.
fn in_child(null: &std::fs::File, report_status: bool) -> Result<(), ConfineError> {
    set_ignored(libc::SIG_DFL);
    // SAFETY: plain signal-mask, session and descriptor calls on this process.
    unsafe {
        let mut none: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut none);
        libc::sigprocmask(libc::SIG_SETMASK, &none, std::ptr::null_mut());
        if libc::setsid() < 0 {
            return Err(ConfineError::last(ConfineError::Session));
        }
        if report_status && libc::dup2(null.as_raw_fd(), 0) < 0 {
            return Err(ConfineError::last(ConfineError::Input));
        }
    }
    Ok(())
}

/// Sets what the ignored signals do to this process.
fn set_ignored(action: libc::sighandler_t) {
    for signal in IGNORED {
        // SAFETY: sets a signal's disposition to ignore or default, no handler.
        unsafe { libc::signal(signal, action) };
    }
}

/// Blocks the watched signals and opens a descriptor that reads them.
fn block_and_watch() -> Result<OwnedFd, ConfineError> {
    // SAFETY: plain signal-mask calls; the set is initialised before use.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for signal in watched() {
            libc::sigaddset(&mut set, signal);
        }
        libc::sigprocmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
        let fd = libc::signalfd(-1, &set, libc::SFD_CLOEXEC);
        if fd < 0 {
            return Err(ConfineError::last(ConfineError::Watch));
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

/// Every process below this one, with its parent: its children, theirs, and so on (each
/// thread's children, from `/proc`; where the kernel keeps no such list, from every
/// process's parent).
fn descendants() -> Vec<(libc::pid_t, libc::pid_t)> {
    // SAFETY: getpid has no preconditions.
    let me = unsafe { libc::getpid() };
    if std::fs::metadata(format!("/proc/{me}/task/{me}/children")).is_err() {
        return descendants_by_parent(me);
    }
    let mut found = Vec::new();
    let mut next = vec![me];
    while let Some(parent) = next.pop() {
        let Ok(threads) = std::fs::read_dir(format!("/proc/{parent}/task")) else {
            continue;
        };
        for thread in threads.flatten() {
            let Ok(text) = std::fs::read_to_string(thread.path().join("children")) else {
                continue;
            };
            for child in text.split_whitespace().filter_map(|p| p.parse().ok()) {
                found.push((child, parent));
                next.push(child);
            }
        }
    }
    found
}

/// [`descendants`] from one scan of every process's parent.
fn descendants_by_parent(me: libc::pid_t) -> Vec<(libc::pid_t, libc::pid_t)> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let parents: Vec<(libc::pid_t, libc::pid_t)> = entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<libc::pid_t>().ok())
        .filter_map(|pid| Some((pid, parent_of(pid)?)))
        .collect();
    let mut found = Vec::new();
    let mut next = vec![me];
    while let Some(parent) = next.pop() {
        for &(pid, _) in parents.iter().filter(|(_, p)| *p == parent) {
            found.push((pid, parent));
            next.push(pid);
        }
    }
    found
}

/// Kills `pid`, found as a child of `parent`, if it still is that process. A child of
/// this process is ours until reaped; a deeper one could have ended and its pid gone
/// to an unrelated process since it was listed: it is held by a pidfd and its parent
/// checked again before the signal.
fn kill_in_tree(pid: libc::pid_t, parent: libc::pid_t, me: libc::pid_t) {
    if parent == me {
        // SAFETY: kill only sends a signal; the child is not reaped yet.
        unsafe { libc::kill(pid, libc::SIGKILL) };
        return;
    }
    // SAFETY: pidfd_open takes a pid and flags and returns a new descriptor or -1.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    if fd < 0 {
        // Gone already (or no pidfds where a filter refuses them: then the parent is
        // checked just before the signal, a narrower window).
        if errno() == libc::ENOSYS && parent_of(pid) == Some(parent) {
            // SAFETY: kill only sends a signal.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
        return;
    }
    // SAFETY: the descriptor was just opened and is owned here.
    let fd = unsafe { OwnedFd::from_raw_fd(fd as libc::c_int) };
    if parent_of(pid) == Some(parent) {
        // SAFETY: sends a signal through a pidfd of ours; no siginfo.
        unsafe {
            libc::syscall(
                libc::SYS_pidfd_send_signal,
                fd.as_raw_fd(),
                libc::SIGKILL,
                std::ptr::null::<libc::siginfo_t>(),
                0,
            )
        };
    }
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
