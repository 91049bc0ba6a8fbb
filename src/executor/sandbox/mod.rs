//! Confining commands to their task: where a command may write, and how that is enforced.
//!
//! - `jail` (the default where the kernel allows it): each task gets its own jail
//!   (`ufo-batch-jail`: user, mount, IPC and PID namespaces, a read-only file system but
//!   for its folders, its own `/proc` and `/dev`, no capabilities, Landlock, seccomp);
//!   see `executor::jail`.
//! - `landlock`: the runner starts each command through its own hidden `sandbox-exec`
//!   subcommand, which stays as the command's supervisor (a subreaper that ends every
//!   process the command leaves, see `supervisor`) and starts the command restricted
//!   with Landlock (read-only file system; read-write workspace, task temp folder and a
//!   few devices).
//! - `bwrap`: bubblewrap with a read-only root, the workspace bound read-write, private
//!   `/tmp` and PID namespace (a process that leaves its session still dies with it).
//! - `none`: no confinement (a loud warning is printed when `auto` finds nothing better).
//!
//! Resource limits (address space, CPU seconds) and the scrubbed environment apply in
//! every mode; they are set in `process`.

#[cfg(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
mod bpf;
mod error;
mod probe;
#[cfg(target_os = "linux")]
mod seccomp;
#[cfg(target_os = "linux")]
pub(crate) mod shim;
#[cfg(target_os = "linux")]
pub(crate) mod supervisor;

use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::ResourceLimits;
#[cfg(target_os = "linux")]
pub(crate) use error::ConfineError;
pub(crate) use error::SandboxError;

/// What `--sandbox none` leaves open, said at the start of the run.
const UNCONFINED: &str = "WARNING: --sandbox none: commands are not confined. They can read and write \
    anything this user can, see and signal every process of the machine (the runner \
    included, and with it its environment), and leave processes running after their \
    task; only their environment is scrubbed and their process group killed.";

/// What a runner running as root leaves open in every mode, said at the start of the run.
#[cfg(unix)]
const AS_ROOT: &str = "WARNING: ufo-batch runs as root, so a task's commands run as root too. \
    The sandbox takes away their capabilities and keeps their writes in the task's folders, \
    but they still read every file root owns (/etc/shadow, root's keys) and, with \
    --sandbox none, may change anything. Run ufo-batch as an ordinary user (in a \
    container: USER or --user).";

/// The warning for a runner running as root, when it is one.
pub(crate) fn as_root_warning() -> Option<String> {
    #[cfg(unix)]
    {
        // SAFETY: geteuid has no preconditions and cannot fail.
        (unsafe { libc::geteuid() } == 0).then(|| AS_ROOT.to_string())
    }
    #[cfg(not(unix))]
    {
        None
    }
}

/// What `landlock` leaves open (it has no namespaces), said at the start of the run.
const LANDLOCK_GAPS: &str = "sandbox landlock: commands write only in their task's folders, keep no \
    capability, cannot read the runner's environment, change other processes' limits or \
    priorities, or (from Linux 6.12) signal processes outside their task; a supervisor \
    ends whatever they leave running, new sessions included. But they share this user's \
    processes: they can see the others, before Linux 6.12 signal them, and reach the \
    user's services over Unix sockets (which could start processes for them). A jail \
    (user namespaces) or bubblewrap closes this.";

/// bubblewrap's arguments for a read-only view of the machine.
const BWRAP_BASE: &[&str] = &["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"];

/// What the user asked for (`--sandbox`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum SandboxMode {
    /// A jail if the kernel allows one, else Landlock, else bubblewrap, else none.
    #[default]
    Auto,
    /// A jail per task, or refuse to run.
    Jail,
    /// Landlock, or refuse to run.
    Landlock,
    /// Bubblewrap, or refuse to run.
    Bwrap,
    /// No confinement.
    None,
}

impl std::str::FromStr for SandboxMode {
    type Err = SandboxError;

    fn from_str(s: &str) -> Result<Self, SandboxError> {
        match s {
            "auto" => Ok(Self::Auto),
            "jail" => Ok(Self::Jail),
            "landlock" => Ok(Self::Landlock),
            "bwrap" => Ok(Self::Bwrap),
            "none" => Ok(Self::None),
            other => Err(SandboxError::UnknownMode(other.to_string())),
        }
    }
}

/// How commands are confined in this run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Confinement {
    /// Not at all.
    None,
    /// A jail per task (the jail binary).
    Jail {
        /// `ufo-batch-jail`.
        binary: PathBuf,
    },
    /// Landlock, applied by the `sandbox-exec` shim.
    Landlock,
    /// Bubblewrap.
    Bwrap {
        /// The bwrap binary.
        bwrap: PathBuf,
    },
}

/// How this run starts commands: the confinement, and the ufo-batch binary whose
/// `sandbox-exec` step applies Landlock and the resource limits. Going through the
/// shim keeps the runner's own spawn a plain `posix_spawn`: limits set in the runner
/// (a `pre_exec` hook) would force a `fork` of the whole runner for every command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Sandbox {
    /// The confinement.
    pub(crate) confinement: Confinement,
    /// The ufo-batch binary, when commands can be started through it.
    pub(crate) shim: Option<PathBuf>,
}

/// The sandbox a mode resolves to on this machine, and a warning when it is weaker than
/// asked. `shim` is the ufo-batch binary (for Landlock and for resource limits).
pub(crate) fn resolve(
    mode: SandboxMode,
    shim: Option<&Path>,
) -> Result<(Sandbox, Option<String>), SandboxError> {
    let shim = shim.map(Path::to_path_buf);
    let with = |confinement| Sandbox {
        confinement,
        shim: shim.clone(),
    };
    let landlock = || {
        shim.as_deref()
            .and_then(|s| probe::landlock(s).then(|| with(Confinement::Landlock)))
    };
    let bwrap = || -> Result<Sandbox, String> {
        let binary = probe::bwrap_binary().ok_or("it is not installed")?;
        let sandbox = with(Confinement::Bwrap { bwrap: binary });
        probe::bwrap_works(&sandbox)?;
        Ok(sandbox)
    };
    let jail = || probe::jail().map(|binary| with(Confinement::Jail { binary }));
    match mode {
        SandboxMode::None => Ok((with(Confinement::None), Some(UNCONFINED.to_string()))),
        SandboxMode::Jail => jail().map(|s| (s, None)).map_err(SandboxError::NoJail),
        SandboxMode::Landlock => landlock()
            .map(|s| (s, Some(LANDLOCK_GAPS.to_string())))
            .ok_or(SandboxError::NoLandlock),
        SandboxMode::Bwrap => bwrap().map(|s| (s, None)).map_err(SandboxError::NoBwrap),
        SandboxMode::Auto => Ok(match jail() {
            Ok(s) => (s, None),
            Err(why) => match landlock().or_else(|| bwrap().ok()) {
                // Weaker confinement than a jail: say why there is no jail.
                Some(s) => {
                    let mut warning =
                        format!("no jail here ({why}): commands are confined more weakly");
                    if matches!(s.confinement, Confinement::Landlock) {
                        warning = format!("{warning}. {LANDLOCK_GAPS}");
                    }
                    (s, Some(warning))
                }
                None => {
                    let warning = "WARNING: no sandbox is available (no Landlock in this kernel, no working bubblewrap): \
                                   commands chosen by the model can write anywhere this user can. Install bubblewrap, \
                                   or pass --sandbox none to accept this."
                        .to_string();
                    (with(Confinement::None), Some(warning))
                }
            },
        }),
    }
}

impl Sandbox {
    /// No confinement and no shim (limits, if any, are set by the spawn itself).
    pub(crate) fn none() -> Self {
        Self {
            confinement: Confinement::None,
            shim: None,
        }
    }

    /// How to start `argv` confined to `writable` folders, in `cwd`, as `role`.
    pub(crate) fn wrap(
        &self,
        argv: &[String],
        writable: &[PathBuf],
        cwd: &Path,
        limits: ResourceLimits,
        role: Role,
    ) -> Wrapped {
        let limited = limits != ResourceLimits::default();
        let mut out = Vec::new();
        let mut spawn_limits = limits;
        let mut supervised = false;
        match (&self.confinement, &self.shim) {
            (Confinement::Jail { .. }, _) => {}
            (Confinement::Landlock, Some(shim)) => {
                out.extend(shim_args(shim, Some(writable), limits));
                // No namespace holds the command's processes: the shim stays as their
                // supervisor (see `supervisor`).
                out.extend(["--supervise".to_string(), std::process::id().to_string()]);
                if role == Role::Command {
                    out.push("--report-status".to_string());
                }
                out.push("--".to_string());
                spawn_limits = ResourceLimits::default();
                supervised = true;
            }
            (Confinement::Bwrap { bwrap }, shim) => {
                out.push(bwrap.display().to_string());
                out.extend(BWRAP_BASE.iter().map(|a| a.to_string()));
                out.extend(["--tmpfs".to_string(), "/tmp".to_string()]);
                for dir in writable {
                    let d = dir.display().to_string();
                    out.extend(["--bind".to_string(), d.clone(), d]);
                }
                if let (Some(shim), true) = (shim, limited) {
                    // The binary may live under the private /tmp: show it explicitly.
                    let s = shim.display().to_string();
                    out.extend(["--ro-bind".to_string(), s.clone(), s]);
                }
                out.push("--chdir".to_string());
                out.push(cwd.display().to_string());
                out.extend(
                    [
                        "--unshare-all",
                        "--share-net",
                        "--die-with-parent",
                        "--new-session",
                        "--",
                    ]
                    .map(String::from),
                );
                if let (Some(shim), true) = (shim, limited) {
                    out.extend(shim_args(shim, None, limits));
                    out.push("--".to_string());
                    spawn_limits = ResourceLimits::default();
                }
            }
            // Unconfined: no step in between; the spawn applies the limits.
            (Confinement::None, _) | (Confinement::Landlock, None) => {}
        }
        out.extend(argv.iter().cloned());
        Wrapped {
            argv: out,
            limits: spawn_limits,
            supervised,
        }
    }
}

/// What a started program is to its task.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Role {
    /// A command, run to its end: its end is what the runner waits for.
    Command,
    /// A helper kept running beside the commands (its standard input is its channel).
    Service,
}

/// How to start a program confined.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Wrapped {
    /// What to spawn.
    pub(crate) argv: Vec<String>,
    /// The limits the spawn itself must still apply (when no shim applies them).
    pub(crate) limits: ResourceLimits,
    /// True when what is spawned is the shim as supervisor (`sandbox-exec --supervise`):
    /// asked to end rather than killed, and (for a command) reporting its end on its
    /// standard input.
    pub(crate) supervised: bool,
}

/// `shim sandbox-exec [--rw DIR]... | --no-landlock, [--memory N] [--cpu N]` (the
/// caller ends it with `--`).
fn shim_args(
    shim: &Path,
    landlock_writable: Option<&[PathBuf]>,
    limits: ResourceLimits,
) -> Vec<String> {
    let mut out = vec![shim.display().to_string(), "sandbox-exec".to_string()];
    match landlock_writable {
        Some(dirs) => {
            for dir in dirs {
                out.extend(["--rw".to_string(), dir.display().to_string()]);
            }
        }
        None => out.push("--no-landlock".to_string()),
    }
    if let Some(m) = limits.memory_bytes {
        out.extend(["--memory".to_string(), m.to_string()]);
    }
    if let Some(c) = limits.cpu_seconds {
        out.extend(["--cpu".to_string(), c.to_string()]);
    }
    out
}

impl fmt::Display for Sandbox {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.confinement {
            Confinement::None => f.write_str("none"),
            Confinement::Jail { .. } => f.write_str("jail"),
            Confinement::Landlock => f.write_str("landlock"),
            Confinement::Bwrap { .. } => f.write_str("bwrap"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMITS: ResourceLimits = ResourceLimits {
        memory_bytes: Some(1024),
        cpu_seconds: Some(9),
    };

    fn sandbox(confinement: Confinement, shim: bool) -> Sandbox {
        Sandbox {
            confinement,
            shim: shim.then(|| PathBuf::from("/bin/ufo-batch")),
        }
    }

    #[test]
    fn wraps_commands() {
        let argv = vec!["/bin/sh".to_string(), "-c".to_string(), "ls".to_string()];
        let ws = PathBuf::from("/r/t/workspace");
        let dirs = std::slice::from_ref(&ws);
        let wrap = |s: &Sandbox, role| {
            let w = s.wrap(&argv, dirs, &ws, LIMITS, role);
            (w.argv.join(" "), w.limits, w.supervised)
        };
        let plain = argv.join(" ");
        assert_eq!(
            wrap(&Sandbox::none(), Role::Command),
            (plain.clone(), LIMITS, false),
            "without a shim the spawn applies the limits"
        );
        let me = std::process::id();
        let landlock = sandbox(Confinement::Landlock, true);
        assert_eq!(
            wrap(&landlock, Role::Command),
            (
                format!(
                    "/bin/ufo-batch sandbox-exec --rw /r/t/workspace --memory 1024 --cpu 9 --supervise {me} --report-status -- /bin/sh -c ls"
                ),
                ResourceLimits::default(),
                true
            )
        );
        assert_eq!(
            wrap(&landlock, Role::Service).0,
            format!(
                "/bin/ufo-batch sandbox-exec --rw /r/t/workspace --memory 1024 --cpu 9 --supervise {me} -- /bin/sh -c ls"
            ),
            "a service's standard input is its own"
        );
        assert_eq!(
            wrap(&sandbox(Confinement::None, true), Role::Command),
            (plain.clone(), LIMITS, false),
            "unconfined: nothing in between, the spawn applies the limits"
        );
        let jail = sandbox(
            Confinement::Jail {
                binary: "/bin/j".into(),
            },
            true,
        );
        assert_eq!(
            wrap(&jail, Role::Command),
            (plain.clone(), LIMITS, false),
            "the jail applies the limits"
        );
        let bwrap = sandbox(
            Confinement::Bwrap {
                bwrap: "/usr/bin/bwrap".into(),
            },
            true,
        );
        let (b, _, supervised) = wrap(&bwrap, Role::Command);
        assert!(b.contains("--bind /r/t/workspace /r/t/workspace --ro-bind /bin/ufo-batch /bin/ufo-batch --chdir /r/t/workspace"), "{b}");
        assert!(b.ends_with("--new-session -- /bin/ufo-batch sandbox-exec --no-landlock --memory 1024 --cpu 9 -- /bin/sh -c ls"), "{b}");
        assert!(
            !supervised,
            "bubblewrap's PID namespace holds the processes"
        );
    }
}
