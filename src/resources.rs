//! What the runner process itself has used (CPU time, peak memory, the disk syncs it
//! asked for), for `run.json` and benchmarks (commands' own usage is not included), and
//! the process-wide settings that bound it (open files, the allocator's arenas).

use std::sync::atomic::{AtomicU64, Ordering};

use serde::Serialize;

/// The runner's own resource usage so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub(crate) struct Resources {
    /// User plus system CPU seconds of the runner process.
    pub(crate) cpu_s: f64,
    /// Peak resident memory of the runner process, in KiB.
    pub(crate) peak_rss_kb: u64,
    /// Syncs of files, folders or file systems the runner asked for (each `fsync` or
    /// `syncfs`).
    pub(crate) disk_syncs: u64,
}

impl Resources {
    /// Reads them now, where the platform tells.
    #[cfg(unix)]
    pub(crate) fn now() -> Option<Self> {
        // SAFETY: getrusage only fills the struct it is given.
        let usage = unsafe {
            let mut usage: libc::rusage = std::mem::zeroed();
            (libc::getrusage(libc::RUSAGE_SELF, &mut usage) == 0).then_some(usage)
        }?;
        let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
        Some(Self {
            cpu_s: secs(usage.ru_utime) + secs(usage.ru_stime),
            peak_rss_kb: peak_rss_kb().unwrap_or(usage.ru_maxrss as u64),
            disk_syncs: disk_syncs(),
        })
    }

    /// Not available here.
    #[cfg(not(unix))]
    pub(crate) fn now() -> Option<Self> {
        None
    }
}

/// The runner's own peak resident memory since it started (Linux: `VmHWM`, which, unlike
/// `getrusage`'s `ru_maxrss`, does not count what the process that started the runner had
/// resident when it forked, before `exec`).
#[cfg(unix)]
fn peak_rss_kb() -> Option<u64> {
    #[cfg(target_os = "linux")]
    {
        let status = std::fs::read_to_string("/proc/self/status").ok()?;
        let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
        line.split_whitespace().nth(1)?.parse().ok()
    }
    #[cfg(not(target_os = "linux"))]
    None
}

/// Raises the open-file limit to the most allowed: each running command holds pipes,
/// and the common default of 1024 runs out around `--jobs 256`.
#[cfg(unix)]
pub(crate) fn raise_open_file_limit() {
    // SAFETY: getrlimit/setrlimit only read and write the struct given.
    unsafe {
        let mut limit: libc::rlimit = std::mem::zeroed();
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0 && limit.rlim_cur < limit.rlim_max
        {
            limit.rlim_cur = limit.rlim_max;
            libc::setrlimit(libc::RLIMIT_NOFILE, &limit);
        }
    }
}

/// Nothing to raise here.
#[cfg(not(unix))]
pub(crate) fn raise_open_file_limit() {}

/// Two allocator arenas at most, for every thread (glibc makes up to eight per CPU):
/// memory one thread frees is then reused by the others instead of lying in an arena
/// of its own. Over 50,000 tasks this lowers the runner's peak by an eighth and its
/// time too, as the threads rarely allocate at the same moment. A `MALLOC_ARENA_MAX`
/// in the environment wins.
pub(crate) fn limit_allocator_arenas() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    if std::env::var_os("MALLOC_ARENA_MAX").is_none() {
        // SAFETY: mallopt only sets a tuning parameter of the allocator.
        unsafe {
            libc::mallopt(libc::M_ARENA_MAX, 2);
        }
    }
}

/// Hands memory the allocator holds free back to the system: after loading a large
/// batch, the loader threads' parse buffers lie freed between what is kept, and would
/// otherwise stay resident for the whole run.
pub(crate) fn release_free_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns free pages of the allocator's own heaps.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Syncs of files, folders or file systems the runner has asked for (for `run.json`
/// and benchmarks).
static DISK_SYNCS: AtomicU64 = AtomicU64::new(0);

/// Counts `n` syncs.
pub(crate) fn count_syncs(n: u64) {
    DISK_SYNCS.fetch_add(n, Ordering::Relaxed);
}

/// Syncs asked for so far by this process.
pub(crate) fn disk_syncs() -> u64 {
    DISK_SYNCS.load(Ordering::Relaxed)
}
