//! The programs of one task's desktop, all in its jail: started by path (the jail does
//! not search `PATH`) with the desktop's environment and a log file each, watched for an
//! early end, and ended with the jail. The environment points every program at the
//! desktop's own display, buses, HOME and runtime folder inside the jail's `/tmp` (the
//! task's folder as `/home/user` when the desktop is furnished so).

use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use tokio::sync::oneshot;

use crate::desktop::error::DesktopError;
use crate::desktop::furniture::Furniture;
use crate::jail::{Jail, JailExit, JailSpawn};

mod logfile;

use crate::tool::{Blame, Blamed};
use logfile::log_file;
pub(super) use logfile::tail;

/// The display inside every desktop jail (each has its own `/tmp`, so they never meet).
pub(super) const DISPLAY: &str = ":0";
/// The session bus's socket, inside the jail.
pub(super) const SESSION_BUS: &str = "/tmp/session-bus";
/// What apps are called in the list of running programs.
pub(super) const APP: &str = "the app";

/// Why a program of the desktop cannot be started, or did not come up.
#[derive(Debug, thiserror::Error)]
pub(super) enum ProcessError {
    /// The program is not installed.
    #[error(
        "desktop sessions need `{0}`, which is not installed here: run scripts/setup-desktop.sh (Debian/Ubuntu) to install the desktop stack"
    )]
    NotInstalled(String),
    /// A command line with no program (the task file's app command).
    #[error("cannot start {0}: no program given")]
    NoProgram(String),
    /// The log cannot be opened.
    #[error("cannot open {}: {source}", path.display())]
    Log {
        /// The log.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The desktop's jail is gone.
    #[error("the desktop has ended")]
    Ended,
    /// The jail did not start it, or its pipes could not be made.
    #[error("cannot start {what}: {source}")]
    Start {
        /// The program, as the desktop calls it.
        what: String,
        /// Why.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// Its socket refuses connections.
    #[error("cannot connect to {what} at {}: {source}", path.display())]
    Socket {
        /// The program.
        what: String,
        /// Its socket.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// It ended while starting: how (with the log's last lines).
    #[error("{0} while starting")]
    EndedWhileStarting(String),
    /// Its socket did not come up in time.
    #[error("{what} did not come up within {secs}s{tail}")]
    NotUp {
        /// The program.
        what: String,
        /// The time it had.
        secs: u64,
        /// The log's last lines (`: ...`), or nothing.
        tail: String,
    },
}

/// A program that is missing or will not start is the machine's; an app command with no
/// program is the task file's.
impl Blamed for ProcessError {
    fn blame(&self) -> Blame {
        match self {
            Self::NoProgram(_) => Blame::TaskFile,
            _ => Blame::Environment,
        }
    }
}

impl From<ProcessError> for DesktopError {
    fn from(e: ProcessError) -> Self {
        DesktopError::classified(e)
    }
}

/// A program the desktop started.
struct Running {
    what: String,
    id: u64,
    exit: oneshot::Receiver<JailExit>,
    /// How it ended, once seen.
    ended: Option<JailExit>,
}

/// The desktop's programs.
pub(super) struct Processes {
    jail: Option<Jail>,
    running: Vec<Running>,
    /// The desktop's `/tmp`, as the runner sees it.
    pub(super) tmp: PathBuf,
    workspace: PathBuf,
    /// Where every program of the desktop prints.
    log: PathBuf,
    /// The programs' environment.
    env: Vec<(String, String)>,
    /// Each program's address-space limit.
    memory: Option<u64>,
}

/// Where a program is (the jail starts programs by path, with no search), or why it
/// cannot be run, with the install hint.
pub(super) fn find_program(argv0: &str) -> Result<PathBuf, ProcessError> {
    let candidates: Vec<PathBuf> = if argv0.contains('/') {
        vec![PathBuf::from(argv0)]
    } else {
        ["/usr/local/bin", "/usr/bin", "/bin"]
            .iter()
            .map(|d| Path::new(d).join(argv0))
            .collect()
    };
    candidates
        .into_iter()
        .find(|p| p.is_file())
        .ok_or_else(|| ProcessError::NotInstalled(argv0.to_string()))
}

fn describe(exit: JailExit) -> String {
    match (exit.code, exit.signal) {
        (Some(c), _) => format!("exited with code {c}"),
        (_, Some(s)) => format!("was killed by signal {s}"),
        _ => "ended".to_string(),
    }
}

impl Processes {
    pub(super) fn new(
        jail: Jail,
        tmp: PathBuf,
        workspace: PathBuf,
        log: PathBuf,
        furniture: &Furniture,
    ) -> Self {
        Self {
            jail: Some(jail),
            running: Vec::new(),
            tmp,
            workspace,
            log,
            env: Self::env(furniture),
            memory: furniture.memory,
        }
    }

    /// The programs' environment: the desktop's display, buses and home; the
    /// furniture's folders first on the PATH.
    fn env(furniture: &Furniture) -> Vec<(String, String)> {
        let mut path: Vec<String> = furniture
            .path_first
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        path.push("/usr/local/bin:/usr/bin:/bin".to_string());
        let home = if furniture.user_home {
            "/home/user"
        } else {
            "/tmp/home"
        };
        let mut env: Vec<(String, String)> = vec![
            ("PATH".to_string(), path.join(":")),
            ("HOME".to_string(), home.to_string()),
        ];
        env.extend(
            [
                ("TMPDIR", "/tmp"),
                ("LANG", "C.UTF-8"),
                ("DISPLAY", DISPLAY),
                ("XDG_RUNTIME_DIR", "/tmp/xdg"),
                ("DBUS_SESSION_BUS_ADDRESS", "unix:path=/tmp/session-bus"),
                ("GSETTINGS_BACKEND", "memory"),
                ("GTK_USE_PORTAL", "0"),
                ("NO_AT_BRIDGE", "0"),
                ("SAL_USE_VCLPLUGIN", "gtk3"),
                ("ACCESSIBILITY_ENABLED", "1"),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string())),
        );
        env
    }

    /// The log every program of the desktop writes to.
    pub(super) fn log(&self) -> &Path {
        &self.log
    }

    /// Starts `argv` as `what`, in the workspace.
    pub(super) async fn spawn(&mut self, what: &str, argv: &[String]) -> Result<(), ProcessError> {
        let cwd = self.workspace.clone();
        self.spawn_in(what, argv, &cwd).await
    }

    /// Starts `argv` as `what`, in `cwd` (a folder as the jail sees it).
    pub(super) async fn spawn_in(
        &mut self,
        what: &str,
        argv: &[String],
        cwd: &Path,
    ) -> Result<(), ProcessError> {
        let mut argv = argv.to_vec();
        let Some(first) = argv.first_mut() else {
            return Err(ProcessError::NoProgram(what.to_string()));
        };
        *first = find_program(first)?.display().to_string();
        let (stdout, stderr) = log_file(&self.log)?;
        let jail = self.jail.as_mut().ok_or(ProcessError::Ended)?;
        let started = jail
            .spawn(JailSpawn {
                argv: &argv,
                env: &self.env,
                cwd,
                // Its data, not its address space: browsers reserve far more than they use.
                memory: None,
                data: self.memory,
                cpu: None,
                stdin: None,
                stdout,
                stderr,
            })
            .await
            .map_err(|e| ProcessError::Start {
                what: what.to_string(),
                source: e.into(),
            })?;
        self.running.push(Running {
            what: what.to_string(),
            id: started.id,
            exit: started.exit,
            ended: None,
        });
        Ok(())
    }

    /// Starts `argv` as `what`, in `cwd` (as the jail sees it), with pipes to its
    /// standard input and from its standard output (its errors go to the log): the ends
    /// this side keeps.
    pub(super) async fn spawn_piped(
        &mut self,
        what: &str,
        argv: &[String],
        cwd: &Path,
    ) -> Result<(OwnedFd, OwnedFd), ProcessError> {
        let failed = |e: std::io::Error| ProcessError::Start {
            what: what.to_string(),
            source: e.into(),
        };
        let (stdin, to) = std::io::pipe().map_err(failed)?;
        let (from, stdout) = std::io::pipe().map_err(failed)?;
        let (_, stderr) = log_file(&self.log)?;
        let jail = self.jail.as_mut().ok_or(ProcessError::Ended)?;
        let started = jail
            .spawn(JailSpawn {
                argv,
                env: &self.env,
                cwd,
                // Its data, not its address space: browsers reserve far more than they use.
                memory: None,
                data: self.memory,
                cpu: None,
                stdin: Some(OwnedFd::from(stdin)),
                stdout: OwnedFd::from(stdout),
                stderr,
            })
            .await
            .map_err(|e| ProcessError::Start {
                what: what.to_string(),
                source: e.into(),
            })?;
        self.running.push(Running {
            what: what.to_string(),
            id: started.id,
            exit: started.exit,
            ended: None,
        });
        Ok((OwnedFd::from(to), OwnedFd::from(from)))
    }

    /// The task's workspace (the programs' working folder; the same path in the jail).
    pub(super) fn workspace(&self) -> &Path {
        &self.workspace
    }

    /// Notes which programs have ended.
    fn poll(&mut self) {
        for r in self.running.iter_mut().filter(|r| r.ended.is_none()) {
            if let Ok(exit) = r.exit.try_recv() {
                r.ended = Some(exit);
            }
        }
    }

    /// Why a program whose name starts with `what` is gone, if one is.
    pub(super) fn ended(&mut self, what: &str) -> Option<String> {
        self.poll();
        let r = self
            .running
            .iter()
            .find(|r| r.what.starts_with(what) && r.ended.is_some())?;
        let how = describe(r.ended?);
        Some(format!("{} {how}{}", r.what, tail(&self.log)))
    }

    /// Why a program whose name starts with `what` failed, if one did (ended other than
    /// with code 0: a launcher that hands over to a running instance exits with 0).
    pub(super) fn failed(&mut self, what: &str) -> Option<String> {
        self.poll();
        let r = self
            .running
            .iter()
            .find(|r| r.what.starts_with(what) && r.ended.is_some_and(|e| e.code != Some(0)))?;
        let how = describe(r.ended?);
        Some(format!("{} {how}{}", r.what, tail(&self.log)))
    }

    /// Whether a program whose name starts with `what` still runs.
    pub(super) fn runs(&mut self, what: &str) -> bool {
        self.poll();
        self.running
            .iter()
            .any(|r| r.what.starts_with(what) && r.ended.is_none())
    }

    /// Waits until the socket at `path` (on this side) accepts a connection, while
    /// `what` still runs.
    pub(super) async fn wait_for_socket(
        &mut self,
        path: &Path,
        what: &str,
        timeout: Duration,
    ) -> Result<(), ProcessError> {
        let clock = Instant::now();
        // The socket's file appears when it is bound, a moment before it is listened
        // on: ready is when a connection is accepted.
        loop {
            match std::os::unix::net::UnixStream::connect(path) {
                Ok(_) => return Ok(()),
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::NotFound | std::io::ErrorKind::ConnectionRefused
                    ) => {}
                Err(source) => {
                    return Err(ProcessError::Socket {
                        what: what.to_string(),
                        path: path.to_path_buf(),
                        source,
                    });
                }
            }
            if let Some(gone) = self.ended(what) {
                return Err(ProcessError::EndedWhileStarting(gone));
            }
            if clock.elapsed() > timeout {
                return Err(ProcessError::NotUp {
                    what: what.to_string(),
                    secs: timeout.as_secs(),
                    tail: tail(&self.log),
                });
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Waits up to `timeout` for every app to end; kills those that do not. Returns
    /// whether they all ended on their own.
    pub(super) async fn end_apps(&mut self, timeout: Duration) -> bool {
        let clock = Instant::now();
        while self.runs(APP) && clock.elapsed() < timeout {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        if !self.runs(APP) {
            return true;
        }
        if let Some(jail) = &self.jail {
            for r in self
                .running
                .iter()
                .filter(|r| r.what.starts_with(APP) && r.ended.is_none())
            {
                jail.kill(r.id).await;
            }
        }
        false
    }

    /// The jail's own process, every program of the desktop below it.
    pub(super) fn root(&self) -> Option<u32> {
        self.jail.as_ref()?.pid()
    }

    /// Ends the jail and everything in it; how many processes were still running.
    pub(super) async fn end(&mut self) -> Option<u32> {
        Some(self.jail.take()?.end().await)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_program_says_what_installs_it() {
        let err = find_program("no-such-desktop-program").unwrap_err();
        let words = err.to_string();
        assert!(
            words.contains("`no-such-desktop-program`, which is not installed here")
                && words.contains("scripts/setup-desktop.sh"),
            "{err}"
        );
        // The machine's: another machine (or this one set up) runs it.
        let failure = DesktopError::from(err).failure();
        assert_eq!(failure, crate::tool::Failure::environment(words));
        assert!(find_program("sh").is_ok());
    }
}
