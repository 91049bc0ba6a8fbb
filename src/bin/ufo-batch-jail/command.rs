//! One command the init starts: forked into its own process group, its limits set, its
//! standard descriptors the ones the runner sent, then exec'd; whether the exec
//! happened comes back on a close-on-exec pipe.

use std::ffi::CString;
use std::os::fd::{AsRawFd, OwnedFd};

use crate::error::{SpawnError, SysError};

/// A command to start.
pub(crate) struct Command {
    /// Program and arguments.
    pub(crate) argv: Vec<Vec<u8>>,
    /// `KEY=VALUE` entries: its whole environment.
    pub(crate) env: Vec<Vec<u8>>,
    /// Its working folder.
    pub(crate) cwd: Vec<u8>,
    /// RLIMIT_AS in bytes (0: none).
    pub(crate) memory: u64,
    /// RLIMIT_DATA in bytes (0: none).
    pub(crate) data: u64,
    /// RLIMIT_CPU in seconds (0: none).
    pub(crate) cpu: u64,
}

/// What the forked child needs, made before the fork (the child allocates nothing).
struct Prepared {
    /// The strings the pointers below point into (their heap buffers do not move).
    _strings: (Vec<CString>, Vec<CString>),
    /// `argv`, null-terminated.
    argv: Vec<*const libc::c_char>,
    /// `envp`, null-terminated.
    env: Vec<*const libc::c_char>,
    cwd: CString,
    null: CString,
}

impl Command {
    /// Forks and execs the command with `input` (or `/dev/null`) as its stdin and `out`
    /// and `err` as its stdout and stderr; returns its pid once the exec has happened, or
    /// why it could not.
    pub(crate) fn start(
        &self,
        input: Option<OwnedFd>,
        out: OwnedFd,
        err: OwnedFd,
    ) -> Result<libc::pid_t, SpawnError> {
        let prepared = self.prepare()?;
        let mut report = [0 as libc::c_int; 2];
        // SAFETY: a close-on-exec pipe for the exec's outcome.
        if unsafe { libc::pipe2(report.as_mut_ptr(), libc::O_CLOEXEC) } < 0 {
            return Err(SysError::last("cannot make a pipe").into());
        }
        // SAFETY: the init is single-threaded; the child only makes system calls on
        // memory prepared above, then execs or exits.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            self.become_it(&prepared, input.as_ref(), &out, &err, report[1]);
        }
        // SAFETY: closing our copy of the pipe's write end.
        unsafe { libc::close(report[1]) };
        drop((input, out, err));
        if pid < 0 {
            // SAFETY: closing the read end.
            unsafe { libc::close(report[0]) };
            return Err(SysError::last("cannot fork").into());
        }
        match exec_error(report[0]) {
            Some(errno) => Err(SpawnError::Exec {
                program: String::from_utf8_lossy(&self.argv[0]).into_owned(),
                source: std::io::Error::from_raw_os_error(errno),
            }),
            None => Ok(pid),
        }
    }

    /// The C strings the child uses.
    fn prepare(&self) -> Result<Prepared, SpawnError> {
        let cstrings = |list: &[Vec<u8>]| -> Result<Vec<CString>, SpawnError> {
            list.iter()
                .map(|b| CString::new(b.clone()).map_err(|_| SpawnError::NulInCommand))
                .collect()
        };
        let argv = cstrings(&self.argv)?;
        let env = cstrings(&self.env)?;
        let cwd = CString::new(self.cwd.clone()).map_err(|_| SpawnError::NulInFolder)?;
        let null = CString::new("/dev/null").unwrap_or_default();
        if argv.is_empty() {
            return Err(SpawnError::NothingToRun);
        }
        let pointers = |list: &[CString]| {
            let mut p: Vec<*const libc::c_char> = list.iter().map(|c| c.as_ptr()).collect();
            p.push(std::ptr::null());
            p
        };
        Ok(Prepared {
            argv: pointers(&argv),
            env: pointers(&env),
            _strings: (argv, env),
            cwd,
            null,
        })
    }

    /// In the forked child: becomes the command, or writes the exec's errno on `report`
    /// and exits.
    fn become_it(
        &self,
        prepared: &Prepared,
        input: Option<&OwnedFd>,
        out: &OwnedFd,
        err: &OwnedFd,
        report: libc::c_int,
    ) -> ! {
        // SAFETY: in the child of a single-threaded process; nothing here returns.
        unsafe {
            let mut all: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut all);
            libc::sigprocmask(libc::SIG_SETMASK, &all, std::ptr::null_mut());
            libc::signal(libc::SIGPIPE, libc::SIG_DFL);
            libc::setpgid(0, 0);
            let stdin = match input {
                Some(fd) => fd.as_raw_fd(),
                None => libc::open(prepared.null.as_ptr(), libc::O_RDONLY),
            };
            libc::dup2(stdin, 0);
            libc::dup2(out.as_raw_fd(), 1);
            libc::dup2(err.as_raw_fd(), 2);
            for (resource, value) in [
                (libc::RLIMIT_AS, self.memory),
                (libc::RLIMIT_DATA, self.data),
                (libc::RLIMIT_CPU, self.cpu),
            ] {
                if value > 0 {
                    let limit = libc::rlimit {
                        rlim_cur: value as libc::rlim_t,
                        rlim_max: value as libc::rlim_t,
                    };
                    libc::setrlimit(resource, &limit);
                }
            }
            if libc::chdir(prepared.cwd.as_ptr()) == 0 {
                libc::execve(
                    prepared.argv[0],
                    prepared.argv.as_ptr(),
                    prepared.env.as_ptr(),
                );
            }
            let errno = *libc::__errno_location();
            libc::write(
                report,
                &errno as *const libc::c_int as *const libc::c_void,
                4,
            );
            libc::_exit(127);
        }
    }
}

/// Reads the exec's outcome off the report pipe's read end (and closes it): the errno
/// the child wrote, or none (end of file: the exec happened).
fn exec_error(report: libc::c_int) -> Option<libc::c_int> {
    let mut errno: libc::c_int = 0;
    let n = loop {
        // SAFETY: reads at most 4 bytes into errno.
        let n = unsafe {
            libc::read(
                report,
                &mut errno as *mut libc::c_int as *mut libc::c_void,
                4,
            )
        };
        if n >= 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            break n;
        }
    };
    // SAFETY: closing the read end.
    unsafe { libc::close(report) };
    (n == 4).then_some(errno)
}
