//! Finding out, once per run, which sandbox works on this machine: each candidate is
//! tried on a harmless command.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::error::NoJail;

/// True when the shim can restrict itself with Landlock here, and supervise the command.
pub(super) fn landlock(shim: &Path) -> bool {
    let dir = std::env::temp_dir();
    Command::new(shim)
        .args(["sandbox-exec", "--rw"])
        .arg(&dir)
        .args(["--supervise", &std::process::id().to_string()])
        .args(["--", "/bin/sh", "-c", "true"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// The bwrap binary, when it exists and can create its namespaces here with `base` (its
/// arguments for a read-only view of the machine).
pub(super) fn bwrap(base: &[&str]) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    let bwrap = std::env::split_paths(&path)
        .map(|d| d.join("bwrap"))
        .find(|p| p.is_file())?;
    let works = Command::new(&bwrap)
        .args(base)
        .args(["--unshare-all", "--die-with-parent", "true"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    works.then_some(bwrap)
}

/// The jail binary, when it exists and a jail can be made here (user namespaces, mount
/// attributes, Landlock and seccomp all work); otherwise why not.
#[cfg(target_os = "linux")]
pub(super) fn jail() -> Result<PathBuf, NoJail> {
    let binary = crate::jail::jail_binary().ok_or(NoJail::NotBeside)?;
    crate::jail::probe(&binary)
        .map(|()| binary)
        .map_err(NoJail::Probe)
}

#[cfg(not(target_os = "linux"))]
pub(super) fn jail() -> Result<PathBuf, NoJail> {
    Err(NoJail::NotLinux)
}
