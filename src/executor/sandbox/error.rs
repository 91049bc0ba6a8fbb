//! What goes wrong with the sandbox, and whose failure it is: a mode this machine cannot
//! give ([`SandboxError`], found when the run starts: the run's configuration), and the
//! `sandbox-exec` step that cannot confine, supervise or start a command
//! ([`ConfineError`]: the machine's).

use crate::tool::{Blame, Blamed};

/// The sandbox asked for (`--sandbox`) cannot be had.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SandboxError {
    /// A mode that does not exist.
    #[error("unknown sandbox `{0}` (use auto, jail, landlock, bwrap or none)")]
    UnknownMode(String),
    /// `--sandbox jail`, and no jail can be made here.
    #[error("--sandbox jail: {0}")]
    NoJail(#[source] NoJail),
    /// `--sandbox landlock`, and the kernel does not enforce it.
    #[error("--sandbox landlock: this kernel does not enforce Landlock (try --sandbox bwrap)")]
    NoLandlock,
    /// `--sandbox bwrap`, and bubblewrap does not start a command here (not installed,
    /// no namespaces, or the command cannot be confined in it), with why.
    #[error("--sandbox bwrap: bubblewrap cannot start a confined command here: {0}")]
    NoBwrap(String),
}

impl Blamed for SandboxError {
    /// The user asked for a sandbox this machine cannot give: the configuration's, and
    /// running again gives the same until it changes.
    fn blame(&self) -> Blame {
        Blame::Config
    }
}

/// Why no jail can be made here (without `--sandbox jail: `, which `auto`'s warning
/// leaves out).
#[derive(Debug, thiserror::Error)]
pub(crate) enum NoJail {
    /// The jail binary is missing.
    #[cfg(target_os = "linux")]
    #[error("ufo-batch-jail is not beside ufo-batch (build both: cargo build --release)")]
    NotBeside,
    /// The probe's jail could not be made.
    #[cfg(target_os = "linux")]
    #[error(transparent)]
    Probe(#[from] crate::jail::JailError),
    /// Not Linux.
    #[cfg(not(target_os = "linux"))]
    #[error("task jails exist only on Linux")]
    NotLinux,
}

/// Why the `sandbox-exec` step could not confine, supervise or start a command. It says
/// so on the command's standard error (the runner reads it there) and exits 126.
#[cfg(target_os = "linux")]
#[derive(Debug, thiserror::Error)]
pub(crate) enum ConfineError {
    /// The runner gave no program.
    #[error("nothing to run")]
    NothingToRun,
    /// `setrlimit` refused a limit.
    #[error("cannot set resource limits: {0}")]
    Limits(#[source] std::io::Error),
    /// A writable folder cannot be resolved.
    #[error("a writable folder does not exist: {0}")]
    NoFolder(#[source] std::io::Error),
    /// Landlock is not enforced (its probe passed when the run started).
    #[error("this kernel does not enforce Landlock")]
    LandlockNotEnforced,
    /// Landlock refused the ruleset.
    #[error("cannot set up Landlock: {0}")]
    Landlock(#[source] landlock::RulesetError),
    /// The seccomp filter cannot be installed.
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    #[error(transparent)]
    Seccomp(#[from] super::bpf::InstallError),
    /// Capabilities cannot be dropped.
    #[error(transparent)]
    Caps(#[from] crate::caps::DropError),
    /// The exec failed.
    #[error("cannot run {program}: {source}")]
    Exec {
        /// The program.
        program: String,
        /// The exec's error.
        #[source]
        source: std::io::Error,
    },
    /// The supervisor cannot become a subreaper.
    #[error("cannot become a subreaper: {0}")]
    Subreaper(#[source] std::io::Error),
    /// The supervisor cannot set its parent-death signal.
    #[error("cannot watch the runner: {0}")]
    WatchRunner(#[source] std::io::Error),
    /// The runner ended before the supervisor started.
    #[error("the runner is gone")]
    RunnerGone,
    /// `/dev/null` cannot be opened.
    #[error("cannot open /dev/null: {0}")]
    DevNull(#[source] std::io::Error),
    /// The fork failed.
    #[error("cannot start the command: {0}")]
    Fork(#[source] std::io::Error),
    /// The command's session cannot be made.
    #[error("cannot start the command's session: {0}")]
    Session(#[source] std::io::Error),
    /// The command's standard input cannot be put in place.
    #[error("cannot give the command its input: {0}")]
    Input(#[source] std::io::Error),
    /// The supervisor cannot block or read its signals.
    #[error("cannot watch the command: {0}")]
    Watch(#[source] std::io::Error),
}

#[cfg(target_os = "linux")]
impl ConfineError {
    /// The thread's last system error as `variant`.
    pub(crate) fn last(variant: fn(std::io::Error) -> Self) -> Self {
        variant(std::io::Error::last_os_error())
    }
}

#[cfg(target_os = "linux")]
impl Blamed for ConfineError {
    /// The machine's (the run's probe found the sandbox working), but for what only the
    /// runner causes: no program, or its own end.
    fn blame(&self) -> Blame {
        match self {
            Self::NothingToRun | Self::RunnerGone => Blame::Runner,
            _ => Blame::Environment,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mode_the_machine_cannot_give_is_the_configurations() {
        for e in [
            SandboxError::NoLandlock,
            SandboxError::NoBwrap("no namespaces".into()),
            SandboxError::UnknownMode("box".into()),
        ] {
            assert_eq!(e.blame(), Blame::Config, "{e}");
        }
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn no_jail_is_said_once() {
        let e = SandboxError::NoJail(NoJail::NotBeside);
        assert_eq!(e.blame(), Blame::Config);
        assert_eq!(
            e.failure().message,
            "--sandbox jail: ufo-batch-jail is not beside ufo-batch (build both: cargo build --release)",
            "the cause is said once"
        );
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_sandbox_that_fails_at_a_command_is_the_machines() {
        let io = || std::io::Error::from_raw_os_error(libc::EPERM);
        let e = ConfineError::Subreaper(io());
        assert_eq!(e.blame(), Blame::Environment);
        assert_eq!(
            e.failure().message,
            format!("cannot become a subreaper: {}", io())
        );
        assert_eq!(ConfineError::RunnerGone.blame(), Blame::Runner);
    }
}
