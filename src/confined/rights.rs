//! The task's rights on this thread. A runner started as root holds capabilities its
//! tasks do not (a jail's or a `sandbox-exec` step's commands run with none): above all
//! `CAP_DAC_OVERRIDE` and `CAP_DAC_READ_SEARCH`, which read any file whatever its mode.
//! While a guard lives, the thread's effective set is empty, so whatever it opens is
//! opened as the task would open it; when the guard ends the set comes back. On Linux
//! capabilities belong to a thread, so the runner's other threads are untouched. A runner
//! with no capabilities (any ordinary user) pays nothing.

use crate::regular_file::FileAccessError;

/// While it lives, this thread has the task's rights.
#[must_use = "the rights last only as long as the guard"]
pub(crate) struct TaskRights {
    /// The sets to put back (none when nothing was set aside).
    #[cfg(target_os = "linux")]
    restore: Option<crate::caps::CapSets>,
}

impl TaskRights {
    /// Sets the runner's privileges aside on this thread. `Err` when they could not be:
    /// the file is then not opened at all.
    pub(crate) fn enter() -> Result<Self, FileAccessError> {
        #[cfg(target_os = "linux")]
        {
            use crate::caps::CapSets;
            static PRIVILEGED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
            let privileged = *PRIVILEGED
                .get_or_init(|| CapSets::of_this_thread().is_ok_and(|s| s.any_effective()));
            if !privileged {
                return Ok(Self { restore: None });
            }
            let sets = CapSets::of_this_thread()?;
            if !sets.any_effective() {
                // Set aside already, by a guard further up this thread.
                return Ok(Self { restore: None });
            }
            sets.without_effective().apply_to_this_thread()?;
            Ok(Self {
                restore: Some(sets),
            })
        }
        #[cfg(not(target_os = "linux"))]
        Ok(Self {})
    }
}

impl Drop for TaskRights {
    fn drop(&mut self) {
        // Putting back what the permitted set holds cannot fail; if it ever did, the
        // thread would go on with fewer rights, never more.
        #[cfg(target_os = "linux")]
        if let Some(sets) = self.restore.take() {
            let _ = sets.apply_to_this_thread();
        }
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    /// As root, a file of another user with mode 600 is out of reach while the guard
    /// lives, and in reach again after; other threads keep their rights meanwhile.
    #[test]
    fn a_root_thread_reads_only_what_a_task_could() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("private");
        std::fs::write(&path, "secret").unwrap();
        if !crate::caps::CapSets::of_this_thread()
            .unwrap()
            .any_effective()
        {
            // An ordinary user has no rights to set aside: the guard changes nothing.
            let _rights = TaskRights::enter().unwrap();
            assert_eq!(std::fs::read_to_string(&path).unwrap(), "secret");
            return;
        }
        let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
        // SAFETY: chown and chmod on a file this test made.
        unsafe {
            assert_eq!(libc::chown(c.as_ptr(), 65534, 65534), 0);
            assert_eq!(libc::chmod(c.as_ptr(), 0o600), 0);
        }
        // A thread that exists already (a new one would inherit this thread's rights).
        let (ask, asked) = std::sync::mpsc::channel::<()>();
        let other = path.clone();
        let elsewhere = std::thread::spawn(move || {
            asked.recv().unwrap();
            std::fs::read(other).is_ok()
        });
        {
            let _rights = TaskRights::enter().unwrap();
            let e = std::fs::read(&path).unwrap_err();
            assert_eq!(e.kind(), std::io::ErrorKind::PermissionDenied);
            ask.send(()).unwrap();
            assert!(elsewhere.join().unwrap(), "another thread keeps its rights");
        }
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "secret");
    }
}
