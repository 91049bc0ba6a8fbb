//! `ufo-batch sandbox-exec` (hidden): the step through which the runner starts a command
//! under Landlock and resource limits; it returns only when it could not become the
//! command.

use crate::cli::SandboxExecArgs;
use crate::error::Error;

/// Becomes the command under Landlock; returns only on failure.
#[cfg(target_os = "linux")]
pub(super) fn sandbox_exec(args: &SandboxExecArgs) -> Result<u8, Error> {
    use crate::executor::{ResourceLimits, sandbox};
    let limits = ResourceLimits {
        memory_bytes: args.memory,
        cpu_seconds: args.cpu,
    };
    let why = sandbox::shim::exec(&args.writable, !args.no_landlock, limits, &args.argv);
    eprintln!("ufo-batch sandbox: {why}");
    Ok(126)
}

#[cfg(not(target_os = "linux"))]
pub(super) fn sandbox_exec(_args: &SandboxExecArgs) -> Result<u8, Error> {
    eprintln!("ufo-batch sandbox: Landlock exists only on Linux");
    Ok(126)
}
