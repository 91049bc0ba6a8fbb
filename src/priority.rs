//! Which of the runner's threads go first when the CPUs are busy. The threads that
//! keep the record (the reporter, the file writers, the committer) run at a lower
//! priority than the ones that run tasks: when many tasks start or end together, the
//! next task's step (its folders, its LLM call) goes first, and the bookkeeping of the
//! ones that ended fills the gaps, which a run has plenty of while it waits for a model
//! or a command. The priority is the system's: against commands that keep every CPU
//! busy, the record falls behind them, and then the pool starts no new task while more
//! than twice its sessions' results wait to be written (so the commands' work goes
//! first, and the record catches up as they end). Nothing is starved: a lower priority
//! is a smaller share.

/// How much lower: Linux's `nice` 5 more than the runner's own (a thread at +5 gets
/// about a quarter of a CPU it contends for with one at 0). 10 and 19 measured no better
/// for a wave of starting tasks.
#[cfg(target_os = "linux")]
const NICE: libc::c_int = 5;

/// Lowers the calling thread's priority for the rest of its life. Best effort: where it
/// cannot be lowered, the thread runs as before.
pub(crate) fn lower_this_thread() {
    #[cfg(target_os = "linux")]
    {
        // On Linux, `PRIO_PROCESS` with 0 is the calling thread alone.
        let now = this_thread_nice();
        // SAFETY: a plain system call about the calling thread itself.
        unsafe {
            let _ = libc::setpriority(libc::PRIO_PROCESS, 0, (now + NICE).min(19));
        }
    }
    #[cfg(windows)]
    {
        use windows::Win32::System::Threading::{
            GetCurrentThread, SetThreadPriority, THREAD_PRIORITY_BELOW_NORMAL,
        };
        // SAFETY: the pseudo handle of the calling thread needs no closing.
        unsafe {
            let _ = SetThreadPriority(GetCurrentThread(), THREAD_PRIORITY_BELOW_NORMAL);
        }
    }
}

/// The calling thread's `nice` (0 where it cannot be read).
#[cfg(target_os = "linux")]
fn this_thread_nice() -> libc::c_int {
    // SAFETY: reads the calling thread's own priority; -1 is a valid answer, so errno
    // tells an error apart.
    unsafe {
        *libc::__errno_location() = 0;
        let nice = libc::getpriority(libc::PRIO_PROCESS, 0);
        if nice == -1 && *libc::__errno_location() != 0 {
            0
        } else {
            nice
        }
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::{NICE, lower_this_thread, this_thread_nice};

    #[test]
    fn a_lowered_thread_runs_below_the_runner_and_others_do_not() {
        let before = this_thread_nice();
        let lowered = std::thread::spawn(|| {
            lower_this_thread();
            this_thread_nice()
        })
        .join()
        .unwrap();
        assert_eq!(lowered, (before + NICE).min(19));
        assert_eq!(
            this_thread_nice(),
            before,
            "only the thread that asked is lowered"
        );
    }
}
