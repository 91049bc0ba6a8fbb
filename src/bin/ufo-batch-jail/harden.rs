//! What the init takes away from itself, and so from every command it starts: new
//! privileges (setuid programs gain nothing), every capability (even the user
//! namespace's: no mount, no mknod, no raising a limit), and, with Landlock, writing
//! outside the task's folders and signalling or reaching abstract sockets outside the
//! jail; with seccomp, creating Unix sockets (which could connect to any socket on the
//! machine) and the kernel keyrings.

use landlock::{
    ABI, Access, AccessFs, CompatLevel, Compatible, Ruleset, RulesetAttr, RulesetCreatedAttr,
    Scope, path_beneath_rules,
};

use crate::error::{SetupError, SysError};
use crate::options::Options;

/// Devices and folders besides the task's own that a command may write.
const WRITABLE_DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/tty",
    "/dev/random",
    "/dev/urandom",
    "/dev/shm",
];

/// Takes away what the module's documentation says, from this process and so from every
/// command it starts.
pub(crate) fn harden(options: &Options) -> Result<(), SetupError> {
    // SAFETY: prctl only changes this process.
    unsafe {
        libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0);
        SysError::check(
            libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) as libc::c_long,
            "cannot forbid new privileges",
        )?;
    }
    landlock(&options.dirs)?;
    seccomp(options.desktop)?;
    Ok(crate::caps::drop_all()?)
}

/// Landlock, as far as this kernel offers it: read everywhere, write only in `dirs` and
/// a few devices, no signals or abstract Unix sockets out of the jail.
fn landlock(dirs: &[String]) -> Result<(), SetupError> {
    let abi = ABI::V7;
    let ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(AccessFs::from_all(abi))
        .and_then(|r| r.scope(Scope::from_all(abi)))
        .and_then(|r| r.create())
        .and_then(|r| r.add_rules(path_beneath_rules(["/"], AccessFs::from_read(abi))))
        .and_then(|r| r.add_rules(path_beneath_rules(dirs, AccessFs::from_all(abi))))
        .and_then(|r| {
            r.add_rules(path_beneath_rules(
                WRITABLE_DEVICES,
                AccessFs::from_all(abi),
            ))
        })
        .and_then(|r| r.restrict_self());
    ruleset.map(|_| ()).map_err(SetupError::Landlock)
}

/// seccomp: `socket(AF_UNIX, ...)` fails with EACCES (socketpair stays) unless
/// `unix_sockets` (a desktop's jail, whose view hides the machine's sockets), the
/// keyring calls with EPERM, and system calls of another architecture (a 32-bit
/// `socketcall` would get around the first rule) with ENOSYS.
fn seccomp(unix_sockets: bool) -> Result<(), crate::bpf::InstallError> {
    use crate::bpf::{ALLOW, ARCH, ARCH_AT, ERRNO, NR, Op, X32_BIT, arg};
    let foreign = ERRNO | libc::ENOSYS as u32;
    let program = [
        /* 0 */ Op::Load(ARCH_AT),
        /* 1 */ Op::IfEq(ARCH, 3, 2),
        /* 2 */ Op::Ret(foreign),
        /* 3 */ Op::Load(NR),
        /* 4 */ Op::IfSet(X32_BIT, 5, 6),
        /* 5 */ Op::Ret(foreign),
        /* 6 */ Op::IfEq(libc::SYS_socket as u32, 7, 10),
        /* 7 */ Op::Load(arg(0)),
        /* 8 */ Op::IfEq(libc::AF_UNIX as u32, 15, 9),
        /* 9 */ Op::Ret(ALLOW),
        /* 10 */ Op::IfEq(libc::SYS_keyctl as u32, 14, 11),
        /* 11 */ Op::IfEq(libc::SYS_add_key as u32, 14, 12),
        /* 12 */ Op::IfEq(libc::SYS_request_key as u32, 14, 13),
        /* 13 */ Op::Ret(ALLOW),
        /* 14 */ Op::Ret(ERRNO | libc::EPERM as u32),
        /* 15 */
        Op::Ret(if unix_sockets {
            ALLOW
        } else {
            ERRNO | libc::EACCES as u32
        }),
    ];
    crate::bpf::install(&program)
}
