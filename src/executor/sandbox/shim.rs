//! `ufo-batch sandbox-exec --rw DIR... -- PROGRAM ARGS...`: restrict this process with
//! Landlock, then become the command. Landlock rules are applied here, after `exec` of
//! our own binary and before the command's, because they cannot be set up safely
//! between `fork` and `exec`.

use std::os::unix::process::CommandExt;
use std::path::PathBuf;

use landlock::{
    ABI, Access, AccessFs, Ruleset, RulesetAttr, RulesetCreatedAttr, RulesetStatus,
    path_beneath_rules,
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

/// Restricts this process to read-only access outside `writable`, then execs `argv`.
/// Only returns on failure.
pub fn exec(writable: &[PathBuf], argv: &[String]) -> String {
    let Some((program, args)) = argv.split_first() else {
        return "nothing to run".to_string();
    };
    // Landlock skips paths it cannot open, and a relative path would be resolved
    // against the wrong folder: use canonical paths only.
    let writable: Vec<PathBuf> = match writable.iter().map(|p| p.canonicalize()).collect() {
        Ok(w) => w,
        Err(e) => return format!("a writable folder does not exist: {e}"),
    };
    let abi = ABI::V5;
    let status = Ruleset::default()
        .handle_access(AccessFs::from_all(abi))
        .and_then(|r| r.create())
        .and_then(|r| r.add_rules(path_beneath_rules(["/"], AccessFs::from_read(abi))))
        .and_then(|r| r.add_rules(path_beneath_rules(&writable, AccessFs::from_all(abi))))
        .and_then(|r| r.add_rules(path_beneath_rules(DEVICES, AccessFs::from_all(abi))))
        .and_then(|r| r.restrict_self());
    match status {
        Ok(s) if s.ruleset == RulesetStatus::NotEnforced => {
            return "this kernel does not enforce Landlock".to_string();
        }
        Ok(_) => {}
        Err(e) => return format!("cannot set up Landlock: {e}"),
    }
    let error = std::process::Command::new(program).args(args).exec();
    format!("cannot run {program}: {error}")
}
