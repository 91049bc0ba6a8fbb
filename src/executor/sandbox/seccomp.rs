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

#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
use super::bpf::{ALLOW, ARCH, ARCH_AT, ERRNO, NR, Op, X32_BIT, arg};
use super::error::ConfineError;

/// `setpriority`'s `which` for a whole user, and `ioprio_set`'s.
const PRIO_USER: u32 = 2;
const IOPRIO_WHO_USER: u32 = 3;

/// Installs the filter on this process (and so on everything it execs and starts). Needs
/// `no_new_privs`, which Landlock has set.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
pub(crate) fn refuse_other_processes() -> Result<(), ConfineError> {
    Ok(super::bpf::install(&program())?)
}

/// No filter where this build knows no seccomp architecture.
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
pub(crate) fn refuse_other_processes() -> Result<(), ConfineError> {
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
        assert_eq!(super::super::bpf::assemble(&ops).len(), ops.len());
    }
}
