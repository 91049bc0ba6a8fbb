//! Confining commands to their task: where a command may write, and how that is enforced.
//!
//! - `landlock`: the runner starts each command through its own hidden `sandbox-exec`
//!   subcommand, which restricts itself with Landlock (read-only file system; read-write
//!   workspace, task temp folder and a few devices) and then execs the command.
//! - `bwrap`: bubblewrap with a read-only root, the workspace bound read-write, private
//!   `/tmp` and PID namespace (a process that leaves its session still dies with it).
//! - `none`: no confinement (a loud warning is printed when `auto` finds nothing better).
//!
//! Resource limits (address space, CPU seconds) and the scrubbed environment apply in
//! every mode; they are set in `process`.

mod probe;
#[cfg(target_os = "linux")]
pub mod shim;

use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// bubblewrap's arguments for a read-only view of the machine.
const BWRAP_BASE: &[&str] = &["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"];

/// What the user asked for (`--sandbox`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SandboxMode {
    /// Landlock if the kernel enforces it, else bubblewrap if it works, else none.
    #[default]
    Auto,
    /// Landlock, or refuse to run.
    Landlock,
    /// Bubblewrap, or refuse to run.
    Bwrap,
    /// No confinement.
    None,
}

impl std::str::FromStr for SandboxMode {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "auto" => Ok(Self::Auto),
            "landlock" => Ok(Self::Landlock),
            "bwrap" => Ok(Self::Bwrap),
            "none" => Ok(Self::None),
            other => Err(format!(
                "unknown sandbox `{other}` (use auto, landlock, bwrap or none)"
            )),
        }
    }
}

/// How commands are actually confined in this run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Sandbox {
    /// Not at all.
    None,
    /// Through `shim sandbox-exec` with Landlock.
    Landlock {
        /// The ufo-batch binary.
        shim: PathBuf,
    },
    /// Through bubblewrap.
    Bwrap {
        /// The bwrap binary.
        bwrap: PathBuf,
    },
}

/// The sandbox a mode resolves to on this machine, and a warning when it is weaker than
/// asked. `shim` is the ufo-batch binary (for Landlock).
pub fn resolve(
    mode: SandboxMode,
    shim: Option<&Path>,
) -> Result<(Sandbox, Option<String>), String> {
    let landlock = || {
        shim.and_then(|s| {
            probe::landlock(s).then(|| Sandbox::Landlock {
                shim: s.to_path_buf(),
            })
        })
    };
    let bwrap = || probe::bwrap().map(|b| Sandbox::Bwrap { bwrap: b });
    match mode {
        SandboxMode::None => Ok((Sandbox::None, None)),
        SandboxMode::Landlock => landlock()
            .map(|s| (s, None))
            .ok_or_else(|| "--sandbox landlock: this kernel does not enforce Landlock (try --sandbox bwrap)".to_string()),
        SandboxMode::Bwrap => bwrap()
            .map(|s| (s, None))
            .ok_or_else(|| "--sandbox bwrap: bubblewrap is not installed or cannot create namespaces here".to_string()),
        SandboxMode::Auto => Ok(landlock().or_else(bwrap).map(|s| (s, None)).unwrap_or_else(|| {
            let warning = "WARNING: no sandbox is available (no Landlock in this kernel, no working bubblewrap): \
                           commands chosen by the model can write anywhere this user can. Install bubblewrap, \
                           or pass --sandbox none to accept this."
                .to_string();
            (Sandbox::None, Some(warning))
        })),
    }
}

impl Sandbox {
    /// The argv that runs `argv` confined to `writable` folders, starting in `cwd`.
    pub fn wrap(&self, argv: &[String], writable: &[PathBuf], cwd: &Path) -> Vec<String> {
        let mut out = Vec::new();
        match self {
            Self::None => {}
            Self::Landlock { shim } => {
                out.push(shim.display().to_string());
                out.push("sandbox-exec".to_string());
                for dir in writable {
                    out.push("--rw".to_string());
                    out.push(dir.display().to_string());
                }
                out.push("--".to_string());
            }
            Self::Bwrap { bwrap } => {
                out.push(bwrap.display().to_string());
                out.extend(BWRAP_BASE.iter().map(|a| a.to_string()));
                out.extend(["--tmpfs".to_string(), "/tmp".to_string()]);
                for dir in writable {
                    let d = dir.display().to_string();
                    out.extend(["--bind".to_string(), d.clone(), d]);
                }
                out.push("--chdir".to_string());
                out.push(cwd.display().to_string());
                for arg in [
                    "--unshare-all",
                    "--share-net",
                    "--die-with-parent",
                    "--new-session",
                    "--",
                ] {
                    out.push(arg.to_string());
                }
            }
        }
        out.extend(argv.iter().cloned());
        out
    }
}

impl fmt::Display for Sandbox {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::None => f.write_str("none"),
            Self::Landlock { .. } => f.write_str("landlock"),
            Self::Bwrap { .. } => f.write_str("bwrap"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wraps_commands() {
        let argv = vec!["/bin/sh".to_string(), "-c".to_string(), "ls".to_string()];
        let ws = PathBuf::from("/r/t/workspace");
        assert_eq!(
            Sandbox::None.wrap(&argv, std::slice::from_ref(&ws), &ws),
            argv
        );
        let l = Sandbox::Landlock {
            shim: "/bin/ufo-batch".into(),
        }
        .wrap(&argv, std::slice::from_ref(&ws), &ws);
        assert_eq!(
            l.join(" "),
            "/bin/ufo-batch sandbox-exec --rw /r/t/workspace -- /bin/sh -c ls"
        );
        let b = Sandbox::Bwrap {
            bwrap: "/usr/bin/bwrap".into(),
        }
        .wrap(&argv, std::slice::from_ref(&ws), &ws)
        .join(" ");
        assert!(
            b.contains("--bind /r/t/workspace /r/t/workspace --chdir /r/t/workspace"),
            "{b}"
        );
        assert!(
            b.ends_with("--die-with-parent --new-session -- /bin/sh -c ls"),
            "{b}"
        );
    }
}
