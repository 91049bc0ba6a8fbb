//! Which of the runner's threads go first when the CPUs are busy. The threads that
//! keep the record (the reporter, the file writers, the committer) run at a lower
//! priority than the ones that run tasks: when many tasks start or end together, the
//! next task's step (its folders, its LLM call) goes first, and the bookkeeping of the
//! ones that ended fills the gaps, which a run has plenty of while it waits for a model
//! or a command. Nothing is starved: a lower priority is a smaller share, and the pool
//! stops starting tasks when too many results wait to be written.

/// How much lower: Linux's `nice` 10 gets about a tenth of a contended CPU against a
/// thread at 0.
#[cfg(target_os = "linux")]
const NICE: libc::c_int = 10;

/// Lowers the calling thread's priority for the rest of its life. Best effort: where it
/// cannot be lowered, the thread runs as before.
pub(crate) fn lower_this_thread() {
    #[cfg(target_os = "linux")]
    // SAFETY: plain system calls about the calling thread itself. On Linux the `nice` of
    // `PRIO_PROCESS` with a thread id is that thread's alone.
    unsafe {
        let tid = libc::gettid();
        let _ = libc::setpriority(libc::PRIO_PROCESS, tid as libc::id_t, NICE);
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

#[cfg(all(test, target_os = "linux"))]
mod tests {
    #[test]
    fn a_lowered_thread_runs_at_a_lower_priority_and_others_do_not() {
        let own = || {
            // SAFETY: reads the calling thread's own priority.
            unsafe {
                *libc::__errno_location() = 0;
                libc::getpriority(libc::PRIO_PROCESS, libc::gettid() as libc::id_t)
            }
        };
        let before = own();
        let lowered = std::thread::spawn(move || {
            super::lower_this_thread();
            own()
        })
        .join()
        .unwrap();
        assert_eq!(lowered, (before + super::NICE).min(19));
        assert_eq!(own(), before, "only the thread that asked is lowered");
    }
}
