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

/// The bwrap binary, when it exists.
pub(super) fn bwrap_binary() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join("bwrap"))
        .find(|p| p.is_file())
}

/// Whether `sandbox` (bubblewrap, with the shim) starts a command here exactly as it
/// starts a task's, limits and the dropping of every capability included; why not, in
/// the words of what failed. A machine where bwrap runs but the shim cannot drop its
/// capabilities inside it would fail every command with 126: it is refused here, before
/// any task, rather than blamed on the agent.
pub(super) fn bwrap_works(sandbox: &super::Sandbox) -> Result<(), String> {
    let dir = std::env::temp_dir();
    let limits = crate::executor::ResourceLimits {
        memory_bytes: Some(1 << 30),
        cpu_seconds: Some(10),
    };
    let argv = ["/bin/sh", "-c", "true"].map(String::from);
    let wrapped = sandbox.wrap(
        &argv,
        std::slice::from_ref(&dir),
        &dir,
        limits,
        super::Role::Command,
    );
    let (program, args) = wrapped.argv.split_first().ok_or("nothing to run")?;
    let out = Command::new(program)
        .args(args)
        .current_dir(&dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| format!("cannot run {program}: {e}"))?;
    if out.status.success() {
        return Ok(());
    }
    let said = crate::text::first_line(&String::from_utf8_lossy(&out.stderr), 300);
    Err(if said.is_empty() {
        format!("a command in it ended with {}", out.status)
    } else {
        said
    })
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
