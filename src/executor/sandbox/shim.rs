//! `ufo-batch sandbox-exec --rw DIR... -- PROGRAM ARGS...`: restrict this process with
//! Landlock, drop every capability, then become the command. Landlock rules are applied here, after `exec` of
//! our own binary and before the command's, because they cannot be set up safely
//! between `fork` and `exec`.

use std::os::unix::process::CommandExt;
use std::path::PathBuf;

use super::error::ConfineError;
use crate::executor::ResourceLimits;
use landlock::{
    ABI, Access, AccessFs, CompatLevel, Compatible, Ruleset, RulesetAttr, RulesetCreatedAttr,
    RulesetStatus, Scope, path_beneath_rules,
};

/// Devices every command may write.
const DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/tty",
    "/dev/urandom",
    "/dev/random",
];

/// Applies `limits`, restricts this process to read-only access outside `writable`
/// (unless `landlock` is false), then execs `argv`. Only returns on failure: why.
pub(crate) fn exec(
    writable: &[PathBuf],
    landlock: bool,
    limits: ResourceLimits,
    argv: &[String],
) -> ConfineError {
    let Some((program, args)) = argv.split_first() else {
        return ConfineError::NothingToRun;
    };
    if let Err(e) = confine(writable, landlock, limits) {
        return e;
    }
    let source = std::process::Command::new(program).args(args).exec();
    ConfineError::Exec {
        program: program.clone(),
        source,
    }
}

/// Everything [`exec`] does before the exec.
fn confine(
    writable: &[PathBuf],
    landlock: bool,
    limits: ResourceLimits,
) -> Result<(), ConfineError> {
    apply_limits(limits).map_err(ConfineError::Limits)?;
    if landlock {
        restrict(writable)?;
        // Landlock does not keep a command from changing the limits or the scheduling of
        // this user's other processes (its supervisor, the runner): seccomp does.
        super::seccomp::refuse_other_processes()?;
    }
    // Even a root runner's commands keep no capability (with one, a command could read
    // the runner's memory and environment, or signal it).
    Ok(crate::caps::drop_all()?)
}

fn apply_limits(limits: ResourceLimits) -> std::io::Result<()> {
    for (resource, value) in [
        (libc::RLIMIT_AS, limits.memory_bytes),
        (libc::RLIMIT_CPU, limits.cpu_seconds),
    ] {
        let Some(v) = value else { continue };
        let limit = libc::rlimit {
            rlim_cur: v as libc::rlim_t,
            rlim_max: v as libc::rlim_t,
        };
        // SAFETY: setrlimit only reads the struct it is given.
        if unsafe { libc::setrlimit(resource, &limit) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Landlock: read-only everywhere, read-write in `writable` and a few devices.
fn restrict(writable: &[PathBuf]) -> Result<(), ConfineError> {
    // Landlock skips paths it cannot open, and a relative path would be resolved
    // against the wrong folder: use canonical paths only.
    let writable: Vec<PathBuf> = writable
        .iter()
        .map(|p| p.canonicalize())
        .collect::<Result<_, _>>()
        .map_err(ConfineError::NoFolder)?;
    // As far as this kernel offers it (signals and abstract sockets are scoped from
    // Linux 6.12): no signal to a process outside (the runner, other tasks), no
    // abstract Unix socket outside.
    let abi = ABI::V7;
    let status = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(AccessFs::from_all(abi))
        .and_then(|r| r.scope(Scope::from_all(abi)))
        .and_then(|r| r.create())
        .and_then(|r| r.add_rules(path_beneath_rules(["/"], AccessFs::from_read(abi))))
        .and_then(|r| r.add_rules(path_beneath_rules(&writable, AccessFs::from_all(abi))))
        .and_then(|r| r.add_rules(path_beneath_rules(DEVICES, AccessFs::from_all(abi))))
        .and_then(|r| r.restrict_self());
    match status {
        Ok(s) if s.ruleset == RulesetStatus::NotEnforced => Err(ConfineError::LandlockNotEnforced),
        Ok(_) => Ok(()),
        Err(e) => Err(ConfineError::Landlock(e)),
    }
}
