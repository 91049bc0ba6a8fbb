//! Writing and installing a seccomp filter (Linux, x86_64 and aarch64): classic BPF
//! instructions with their jumps given as instruction indexes, made relative here. Shared
//! by the Landlock step's filter (`seccomp`) and the jail's init (`ufo-batch-jail`, which
//! includes this file).

/// The seccomp architecture of this build.
#[cfg(target_arch = "x86_64")]
pub(crate) const ARCH: u32 = 0xC000_003E;
#[cfg(target_arch = "aarch64")]
pub(crate) const ARCH: u32 = 0xC000_00B7;

const LD_W_ABS: u16 = 0x20;
const JEQ_K: u16 = 0x15;
const JSET_K: u16 = 0x45;
const RET_K: u16 = 0x06;

/// Answers: let the call through, or fail it with an errno.
pub(crate) const ALLOW: u32 = 0x7fff_0000;
pub(crate) const ERRNO: u32 = 0x0005_0000;
/// The bit that marks a system call of the x32 ABI.
pub(crate) const X32_BIT: u32 = 0x4000_0000;

/// Offsets in `struct seccomp_data`: the call's number, its architecture, and the low
/// half of an argument (little-endian).
pub(crate) const NR: u32 = 0;
pub(crate) const ARCH_AT: u32 = 4;
pub(crate) const fn arg(i: u32) -> u32 {
    16 + 8 * i
}

/// One instruction, its jumps given as instruction indexes (resolved by `assemble`).
#[derive(Clone, Copy, Debug)]
pub(crate) enum Op {
    Load(u32),
    /// If the loaded word equals `k`, go to `yes`, else to `no`.
    IfEq(u32, usize, usize),
    /// If the loaded word has any of `k`'s bits, go to `yes`, else to `no`.
    IfSet(u32, usize, usize),
    Ret(u32),
}

/// The instructions, with jumps made relative (BPF jumps only forward).
pub(crate) fn assemble(ops: &[Op]) -> Vec<libc::sock_filter> {
    let jump = |from: usize, to: usize| -> u8 {
        assert!(to > from, "a BPF jump goes forward");
        u8::try_from(to - from - 1).expect("a BPF jump is short")
    };
    let op = |code, jt, jf, k| libc::sock_filter { code, jt, jf, k };
    ops.iter()
        .enumerate()
        .map(|(i, o)| match *o {
            Op::Load(at) => op(LD_W_ABS, 0, 0, at),
            Op::IfEq(k, yes, no) => op(JEQ_K, jump(i, yes), jump(i, no), k),
            Op::IfSet(k, yes, no) => op(JSET_K, jump(i, yes), jump(i, no), k),
            Op::Ret(k) => op(RET_K, 0, 0, k),
        })
        .collect()
}

/// The kernel refused the filter.
#[derive(Debug, thiserror::Error)]
#[error("cannot install the seccomp filter: {0}")]
pub(crate) struct InstallError(#[source] std::io::Error);

/// Installs `ops` as this process's seccomp filter (and so of everything it execs and
/// starts). Needs `no_new_privs`.
pub(crate) fn install(ops: &[Op]) -> Result<(), InstallError> {
    let program = assemble(ops);
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
    if ret == 0 {
        Ok(())
    } else {
        Err(InstallError(std::io::Error::last_os_error()))
    }
}
