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

use crate::setup::check;

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

pub(crate) fn harden(options: &crate::setup::Options) -> Result<(), String> {
    // SAFETY: prctl only changes this process.
    unsafe {
        libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0);
        check(
            libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) as libc::c_long,
            "cannot forbid new privileges",
        )?;
    }
    landlock(&options.dirs)?;
    seccomp(options.desktop)?;
    crate::caps::drop_all()
}

/// Landlock, as far as this kernel offers it: read everywhere, write only in `dirs` and
/// a few devices, no signals or abstract Unix sockets out of the jail.
fn landlock(dirs: &[String]) -> Result<(), String> {
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
    ruleset
        .map(|_| ())
        .map_err(|e| format!("cannot set up Landlock: {e}"))
}

/// seccomp: `socket(AF_UNIX, ...)` fails with EACCES (socketpair stays) unless
/// `unix_sockets` (a desktop's jail, whose view hides the machine's sockets), the
/// keyring calls with EPERM, and system calls of another architecture (a 32-bit
/// `socketcall` would get around the first rule) with ENOSYS.
fn seccomp(unix_sockets: bool) -> Result<(), String> {
    #[cfg(target_arch = "x86_64")]
    const ARCH: u32 = 0xC000_003E;
    #[cfg(target_arch = "aarch64")]
    const ARCH: u32 = 0xC000_00B7;
    const LD_W_ABS: u16 = 0x20;
    const JEQ_K: u16 = 0x15;
    const JSET_K: u16 = 0x45;
    const RET_K: u16 = 0x06;
    const ALLOW: u32 = 0x7fff_0000;
    const ERRNO: u32 = 0x0005_0000;
    const X32_BIT: u32 = 0x4000_0000;
    let op = |code, jt, jf, k| libc::sock_filter { code, jt, jf, k };
    // Jumps count instructions after the next one.
    let program = [
        /* 0 */ op(LD_W_ABS, 0, 0, 4), // arch
        /* 1 */ op(JEQ_K, 1, 0, ARCH), // native: 3
        /* 2 */ op(RET_K, 0, 0, ERRNO | libc::ENOSYS as u32),
        /* 3 */ op(LD_W_ABS, 0, 0, 0), // syscall number
        /* 4 */ op(JSET_K, 0, 1, X32_BIT), // x32: 5, else 6
        /* 5 */ op(RET_K, 0, 0, ERRNO | libc::ENOSYS as u32),
        /* 6 */ op(JEQ_K, 0, 3, libc::SYS_socket as u32), // socket: 7, else 10
        /* 7 */ op(LD_W_ABS, 0, 0, 16), // first argument, low half
        /* 8 */ op(JEQ_K, 6, 0, libc::AF_UNIX as u32), // AF_UNIX: 15, else 9
        /* 9 */ op(RET_K, 0, 0, ALLOW),
        /* 10 */ op(JEQ_K, 3, 0, libc::SYS_keyctl as u32), // 14
        /* 11 */ op(JEQ_K, 2, 0, libc::SYS_add_key as u32), // 14
        /* 12 */ op(JEQ_K, 1, 0, libc::SYS_request_key as u32), // 14
        /* 13 */ op(RET_K, 0, 0, ALLOW),
        /* 14 */ op(RET_K, 0, 0, ERRNO | libc::EPERM as u32),
        /* 15 */
        op(
            RET_K,
            0,
            0,
            if unix_sockets {
                ALLOW
            } else {
                ERRNO | libc::EACCES as u32
            },
        ),
    ];
    let fprog = libc::sock_fprog {
        len: program.len() as u16,
        filter: program.as_ptr() as *mut libc::sock_filter,
    };
    // SAFETY: the program outlives the call; the kernel copies it.
    let ret = unsafe {
        libc::prctl(
            libc::PR_SET_SECCOMP,
            libc::SECCOMP_MODE_FILTER,
            &fprog as *const libc::sock_fprog,
            0,
            0,
        )
    };
    check(ret as libc::c_long, "cannot install the seccomp filter")
}
