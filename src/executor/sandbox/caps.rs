//! Dropping every capability of this process for good (Linux): what a confined command
//! must not keep even when the runner is root (reading any process's memory and
//! environment, signalling any process, overriding file permissions). Shared by the
//! `sandbox-exec` step and the jail's init (`ufo-batch-jail`, which includes this file).

/// No capability left: the bounding set emptied (so that no later `exec` regains one,
/// as root's would), the ambient set cleared, and the effective, permitted and
/// inheritable sets zeroed.
pub(crate) fn drop_all() -> Result<(), String> {
    let failed = |what: &str| format!("{what}: {}", std::io::Error::last_os_error());
    for cap in 0..64 {
        // SAFETY: prctl only changes this process; EINVAL past the last capability.
        let ret = unsafe { libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0) };
        if ret < 0 {
            if std::io::Error::last_os_error().raw_os_error() == Some(libc::EINVAL) {
                break;
            }
            return Err(failed("cannot drop capabilities"));
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
    #[repr(C)]
    struct Header {
        version: u32,
        pid: libc::c_int,
    }
    #[repr(C)]
    #[derive(Clone, Copy)]
    struct Data {
        effective: u32,
        permitted: u32,
        inheritable: u32,
    }
    let header = Header {
        version: 0x2008_0522, // _LINUX_CAPABILITY_VERSION_3
        pid: 0,
    };
    let data = [Data {
        effective: 0,
        permitted: 0,
        inheritable: 0,
    }; 2];
    // SAFETY: capset reads the header and the two data words it is given.
    let ret = unsafe { libc::syscall(libc::SYS_capset, &header as *const Header, data.as_ptr()) };
    if ret < 0 {
        return Err(failed("cannot drop capabilities"));
    }
    Ok(())
}
