//! `ufo-batch sandbox-exec` (hidden): the step through which the runner starts a command
//! under Landlock and resource limits. It becomes the command, or (`--supervise`) stays
//! as its supervisor; it returns at once only when it could not start the command.

use crate::cli::SandboxExecArgs;
use crate::error::Error;

/// Becomes the command under Landlock, or supervises it; returns its exit code.
#[cfg(target_os = "linux")]
pub(super) fn sandbox_exec(args: &SandboxExecArgs) -> Result<u8, Error> {
    use crate::executor::{ResourceLimits, sandbox};
    let limits = ResourceLimits {
        memory_bytes: args.memory,
        cpu_seconds: args.cpu,
    };
    let become_command =
        || sandbox::shim::exec(&args.writable, !args.no_landlock, limits, &args.argv);
    let Some(runner) = args.supervise else {
        eprintln!("ufo-batch sandbox: {}", become_command());
        return Ok(126);
    };
    // The command's process: its stderr is the command's, read by the runner.
    let start = |ready: Result<(), sandbox::ConfineError>| {
        let why = ready.map_or_else(|e| e, |()| become_command());
        eprintln!("ufo-batch sandbox: {why}");
    };
    Ok(
        sandbox::supervisor::supervise(runner, args.report_status, start).unwrap_or_else(|why| {
            eprintln!("ufo-batch sandbox: {why}");
            126
        }),
    )
}

#[cfg(not(target_os = "linux"))]
pub(super) fn sandbox_exec(_args: &SandboxExecArgs) -> Result<u8, Error> {
    eprintln!("ufo-batch sandbox: Landlock exists only on Linux");
    Ok(126)
}
