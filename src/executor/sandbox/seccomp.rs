//! The system calls a Landlock-confined command may not aim at another process (Linux).
//!
//! Without a PID namespace a command shares its user with the runner, its own supervisor
//! and the other tasks' processes, and the kernel lets a process of the same user change
//! their resource limits, CPU affinity, scheduling and I/O priority. Landlock scopes
//! signals and tracing, not these: a command could, say, take its supervisor's file
//! descriptors away (`prlimit --nofile`) so that it can no longer end anything, or the
//! runner's memory. This filter (inherited by every process the command starts) refuses
//! them with EPERM unless they aim at the calling process itself (pid 0), and refuses
//! `setpriority`/`ioprio_set` aimed at a whole user. System calls of another ABI (32-bit,
//! x32) are refused with ENOSYS, as they would get around it.

/// The seccomp architecture of this build.
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

/// Offsets in `struct seccomp_data`: the call's number, its architecture, and the low
/// half of an argument (little-endian).
const NR: u32 = 0;
const ARCH_AT: u32 = 4;
const fn arg(i: u32) -> u32 {
    16 + 8 * i
}

/// `setpriority`'s `which` for a whole user, and `ioprio_set`'s.
const PRIO_USER: u32 = 2;
const IOPRIO_WHO_USER: u32 = 3;

/// One instruction, its jumps given as instruction indexes (resolved by `assemble`).
#[derive(Clone, Copy)]
enum Op {
    Load(u32),
    /// If the loaded word equals `k`, go to `yes`, else to `no`.
    IfEq(u32, usize, usize),
    /// If the loaded word has any of `k`'s bits, go to `yes`, else to `no`.
    IfSet(u32, usize, usize),
    Ret(u32),
}

/// Installs the filter on this process (and so on everything it execs and starts). Needs
/// `no_new_privs`, which Landlock has set.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
pub(crate) fn refuse_other_processes() -> Result<(), String> {
    let program = assemble(&program());
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
        Err(format!(
            "cannot install the seccomp filter: {}",
            std::io::Error::last_os_error()
        ))
    }
}

/// No filter where this build knows no seccomp architecture.
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
pub(crate) fn refuse_other_processes() -> Result<(), String> {
    Ok(())
}

/// The filter, its jumps as instruction indexes. Every jump goes forward: the entry,
/// then one comparison per checked call, then the checks of the arguments, then the
/// answers.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
fn program() -> Vec<Op> {
    let calls = [
        (libc::SYS_prlimit64, Check::PidIsSelf),
        (libc::SYS_sched_setaffinity, Check::PidIsSelf),
        (libc::SYS_sched_setscheduler, Check::PidIsSelf),
        (libc::SYS_sched_setparam, Check::PidIsSelf),
        (libc::SYS_sched_setattr, Check::PidIsSelf),
        (libc::SYS_setpriority, Check::Priority),
        (libc::SYS_ioprio_set, Check::IoPriority),
    ];
    let dispatch = 4;
    let pid_is_self = dispatch + calls.len() + 1;
    let priority = pid_is_self + 2;
    let io_priority = priority + 4;
    let allowed = io_priority + 4;
    let (refused, foreign) = (allowed + 1, allowed + 2);
    let mut ops = vec![
        Op::Load(ARCH_AT),
        Op::IfEq(ARCH, 2, foreign),
        Op::Load(NR),
        Op::IfSet(X32_BIT, foreign, dispatch),
    ];
    for (call, check) in calls {
        let target = match check {
            Check::PidIsSelf => pid_is_self,
            Check::Priority => priority,
            Check::IoPriority => io_priority,
        };
        let next = ops.len() + 1;
        ops.push(Op::IfEq(call as u32, target, next));
    }
    ops.push(Op::Ret(ALLOW));
    ops.extend([Op::Load(arg(0)), Op::IfEq(0, allowed, refused)]);
    for (at, user) in [(priority, PRIO_USER), (io_priority, IOPRIO_WHO_USER)] {
        ops.extend([
            Op::Load(arg(1)),
            Op::IfEq(0, at + 2, refused),
            Op::Load(arg(0)),
            Op::IfEq(user, refused, allowed),
        ]);
    }
    ops.extend([
        Op::Ret(ALLOW),
        Op::Ret(ERRNO | libc::EPERM as u32),
        Op::Ret(ERRNO | libc::ENOSYS as u32),
    ]);
    debug_assert_eq!(ops.len(), foreign + 1);
    ops
}

/// What a checked call's arguments must be.
#[derive(Clone, Copy)]
enum Check {
    /// Its first argument, a pid, is 0 (the caller).
    PidIsSelf,
    /// `setpriority(which, 0)` for the caller or its group, not its user.
    Priority,
    /// `ioprio_set(which, 0)`, the same.
    IoPriority,
}

/// The instructions, with jumps made relative (BPF jumps only forward).
fn assemble(ops: &[Op]) -> Vec<libc::sock_filter> {
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

#[cfg(all(test, any(target_arch = "x86_64", target_arch = "aarch64")))]
mod tests {
    use super::*;

    /// Runs the filter the way the kernel would, on one call's number and arguments.
    fn verdict(nr: i64, args: [u32; 2]) -> u32 {
        let ops = program();
        let (mut at, mut loaded) = (0, 0);
        loop {
            match ops[at] {
                Op::Load(offset) => {
                    loaded = match offset {
                        NR => nr as u32,
                        ARCH_AT => ARCH,
                        o if o == arg(0) => args[0],
                        o if o == arg(1) => args[1],
                        o => panic!("loads an unknown offset {o}"),
                    };
                    at += 1;
                }
                Op::IfEq(k, yes, no) => at = if loaded == k { yes } else { no },
                Op::IfSet(k, yes, no) => at = if loaded & k != 0 { yes } else { no },
                Op::Ret(answer) => return answer,
            }
        }
    }

    #[test]
    fn only_calls_aimed_at_another_process_are_refused() {
        let refused = ERRNO | libc::EPERM as u32;
        for call in [
            libc::SYS_prlimit64,
            libc::SYS_sched_setaffinity,
            libc::SYS_sched_setscheduler,
            libc::SYS_sched_setparam,
            libc::SYS_sched_setattr,
        ] {
            assert_eq!(verdict(call, [0, 0]), ALLOW, "{call} on itself");
            assert_eq!(verdict(call, [1234, 0]), refused, "{call} on another");
        }
        // setpriority(PRIO_PROCESS | PRIO_PGRP, 0) is the caller's own; a pid or the
        // whole user is not.
        assert_eq!(verdict(libc::SYS_setpriority, [0, 0]), ALLOW);
        assert_eq!(verdict(libc::SYS_setpriority, [1, 0]), ALLOW);
        assert_eq!(verdict(libc::SYS_setpriority, [0, 1234]), refused);
        assert_eq!(verdict(libc::SYS_setpriority, [PRIO_USER, 0]), refused);
        assert_eq!(verdict(libc::SYS_ioprio_set, [1, 0]), ALLOW);
        assert_eq!(verdict(libc::SYS_ioprio_set, [1, 1234]), refused);
        assert_eq!(verdict(libc::SYS_ioprio_set, [IOPRIO_WHO_USER, 0]), refused);
        // Anything else passes, whatever its arguments; the x32 ABI does not.
        assert_eq!(verdict(libc::SYS_kill, [1234, 9]), ALLOW);
        assert_eq!(verdict(libc::SYS_getpid, [0, 0]), ALLOW);
        assert_eq!(
            verdict(libc::SYS_prlimit64 | X32_BIT as i64, [0, 0]),
            ERRNO | libc::ENOSYS as u32
        );
        // Every jump of the program is forward and in range.
        let ops = program();
        for (i, op) in ops.iter().enumerate() {
            if let Op::IfEq(_, yes, no) | Op::IfSet(_, yes, no) = *op {
                assert!(i < yes && yes < ops.len() && i < no && no < ops.len());
            }
        }
        assert_eq!(assemble(&ops).len(), ops.len());
    }
}
