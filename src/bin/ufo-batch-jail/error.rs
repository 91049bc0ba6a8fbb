//! What goes wrong in the jail binary. Every error here ends as words: the text of an
//! event to the runner (`Fatal` when a jail cannot be made, `SpawnFailed` when a command
//! cannot start) or a line on the factory's standard error. The runner's side
//! (`jail::JailError`) says whose failure it is; this binary cannot (it shares no code
//! with the library but the files it includes: `protocol`, `bpf`, `caps`).

use std::io;

/// A system call that failed: what was being done, and the error it left.
#[derive(Debug, thiserror::Error)]
#[error("{what}: {source}")]
pub(crate) struct SysError {
    /// What was being done ("cannot fork").
    what: &'static str,
    /// The system's error.
    #[source]
    source: io::Error,
}

impl SysError {
    /// The thread's last system error, said after `what`.
    pub(crate) fn last(what: &'static str) -> Self {
        Self {
            what,
            source: io::Error::last_os_error(),
        }
    }

    /// Checks a system call's return value: negative is the thread's last error.
    pub(crate) fn check(ret: libc::c_long, what: &'static str) -> Result<(), Self> {
        check(ret).map_err(|source| Self { what, source })
    }
}

/// Checks a system call's return value: negative is the thread's last error.
pub(crate) fn check(ret: libc::c_long) -> io::Result<()> {
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// Why a jail cannot be made: its arguments, its namespaces, its view of the files, its
/// hardening. Sent to the runner as the jail's `Fatal` event.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SetupError {
    /// A folder of the arguments cannot be resolved.
    #[error("the folder {dir} cannot be used: {source}")]
    Folder {
        /// The folder as given.
        dir: String,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// `--rw`, `--tmp`, `--home`, `--ro` or `--hide` came last, without its folder.
    #[error("{0} needs a folder")]
    NeedsFolder(String),
    /// An argument this binary does not know.
    #[error(
        "unknown argument {0:?} (usage: ufo-batch-jail [--rw DIR]... [--tmp DIR] [--home DIR] [--ro DIR]... [--hide DIR]... [--desktop])"
    )]
    UnknownArgument(String),
    /// A system call failed (namespaces, the init's fork, no new privileges, SIGCHLD).
    #[error(transparent)]
    Sys(#[from] SysError),
    /// A user namespace's map cannot be written.
    #[error("cannot write {file}: {source}")]
    Write {
        /// The `/proc/self` file.
        file: &'static str,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// A path holds a NUL byte (no system call takes it).
    #[error("{0:?} holds a NUL byte")]
    Nul(String),
    /// A mount failed.
    #[error("cannot mount {target}: {source}")]
    Mount {
        /// Where.
        target: String,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// A mount's attributes (read-only, nosuid, nodev) cannot be set.
    #[error("cannot set the mount attributes of {path}: {source}")]
    Attributes {
        /// The mount.
        path: String,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// A writable folder under a cover cannot be held open.
    #[error("cannot open {dir}: {source}")]
    Open {
        /// The folder.
        dir: String,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// A folder, file or link of the view cannot be made.
    #[error("cannot make {path}: {source}")]
    Make {
        /// What.
        path: String,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// The init cannot move to the new root.
    #[error("cannot enter /: {0}")]
    EnterRoot(#[source] io::Error),
    /// Landlock refused the ruleset.
    #[error("cannot set up Landlock: {0}")]
    Landlock(#[source] landlock::RulesetError),
    /// The seccomp filter cannot be installed.
    #[error(transparent)]
    Seccomp(#[from] crate::bpf::InstallError),
    /// Capabilities cannot be dropped.
    #[error(transparent)]
    Caps(#[from] crate::caps::DropError),
}

/// Why a command cannot start. Sent to the runner as its `SpawnFailed` event.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SpawnError {
    /// The request came without the descriptors it announced.
    #[error("the command's output pipes did not arrive")]
    NoPipes,
    /// An argument or an environment entry holds a NUL byte.
    #[error("a NUL byte in the command")]
    NulInCommand,
    /// The working folder holds a NUL byte.
    #[error("a NUL byte in the folder")]
    NulInFolder,
    /// No program.
    #[error("nothing to run")]
    NothingToRun,
    /// The pipe or the fork failed.
    #[error(transparent)]
    Sys(#[from] SysError),
    /// The exec failed (in the child, which said so on its pipe).
    #[error("cannot run {program}: {source}")]
    Exec {
        /// The program, as asked for.
        program: String,
        /// The exec's error.
        #[source]
        source: io::Error,
    },
}

/// Why the factory cannot make a jail. Sent to the runner as a `Fatal` event.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ZygoteError {
    /// A request that is not `Make`, or one without its control socket.
    #[error("the factory was sent something other than a jail to make")]
    NotAJail,
    /// A jail argument is not UTF-8.
    #[error("a jail argument is not UTF-8")]
    NotUtf8,
    /// The fork or the pidfd failed.
    #[error(transparent)]
    Sys(#[from] SysError),
}
