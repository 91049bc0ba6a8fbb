//! Linux capabilities: dropping every one of them for good (what a confined command must
//! not keep even when the runner is root: reading any process's memory and environment,
//! signalling any process, overriding file permissions), and this thread's effective set
//! (the runner's privileges, set aside while it touches a task's files with the task's
//! rights, see `confined::TaskRights`). Shared by the `sandbox-exec` step, the jail's init
//! (`ufo-batch-jail`, which includes this file) and the runner.

/// The three capability sets of one thread, as `capget` and `capset` see them (version 3:
/// two 32-bit words per set).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct CapSets {
    data: [CapData; 2],
}

#[repr(C)]
struct Header {
    version: u32,
    pid: libc::c_int,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct CapData {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

/// `_LINUX_CAPABILITY_VERSION_3`.
const VERSION_3: u32 = 0x2008_0522;

impl CapSets {
    /// This thread's sets.
    pub(crate) fn of_this_thread() -> std::io::Result<Self> {
        let mut header = Header {
            version: VERSION_3,
            pid: 0,
        };
        let mut sets = Self::default();
        // SAFETY: capget writes the header and the two data words it is given.
        let ret = unsafe {
            libc::syscall(
                libc::SYS_capget,
                &mut header as *mut Header,
                sets.data.as_mut_ptr(),
            )
        };
        if ret < 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(sets)
    }

    /// True when the effective set holds any capability.
    pub(crate) fn any_effective(&self) -> bool {
        self.data.iter().any(|d| d.effective != 0)
    }

    /// The same sets with an empty effective set (the permitted set is kept, so the
    /// effective one can be restored).
    pub(crate) fn without_effective(mut self) -> Self {
        for d in &mut self.data {
            d.effective = 0;
        }
        self
    }

    /// Makes these this thread's sets. On Linux, credentials belong to a thread: other
    /// threads keep theirs.
    pub(crate) fn apply_to_this_thread(&self) -> std::io::Result<()> {
        let header = Header {
            version: VERSION_3,
            pid: 0,
        };
        // SAFETY: capset reads the header and the two data words it is given.
        let ret = unsafe {
            libc::syscall(
                libc::SYS_capset,
                &header as *const Header,
                self.data.as_ptr(),
            )
        };
        if ret < 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    }
}

/// Capabilities that cannot be dropped.
#[derive(Debug, thiserror::Error)]
#[error("cannot drop capabilities: {0}")]
pub(crate) struct DropError(#[source] std::io::Error);

/// No capability left: the bounding set emptied (so that no later `exec` regains one,
/// as root's would), the ambient set cleared, and the effective, permitted and
/// inheritable sets zeroed.
pub(crate) fn drop_all() -> Result<(), DropError> {
    for cap in 0..64 {
        // SAFETY: prctl only changes this process; EINVAL past the last capability.
        let ret = unsafe { libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0) };
        if ret < 0 {
            let e = std::io::Error::last_os_error();
            if e.raw_os_error() == Some(libc::EINVAL) {
                break;
            }
            return Err(DropError(e));
        }
    }
    // SAFETY: as above.
    unsafe {
        libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL,
            0,
            0,
            0,
        );
    }
    CapSets::default().apply_to_this_thread().map_err(DropError)
}
