//! The task's view of the file system, built by its init: read-only everywhere but the
//! writable folders (read-write, no devices, no setuid) and its own `/tmp`; its own
//! `/dev` with only harmless devices; its own `/proc`; in a desktop's jail, empty
//! folders over the machine's socket folders; with `--home`, the task's own folder as
//! `/home/user` (the machine's other `/home` folders as they were, the machine's
//! `/home` itself untouched).

use std::ffi::CString;
use std::os::fd::RawFd;

use crate::error::{SetupError, check};
use crate::options::Options;

/// Devices a task may use (bound from the machine's into the task's own `/dev`).
const DEVICES: &[&str] = &["null", "zero", "full", "random", "urandom", "tty"];

/// Folders of the machine that hold sockets, hidden behind empty ones in a desktop's
/// jail (`/var/run` is a link to `/run`).
const SOCKET_FOLDERS: &[&str] = &["/run", "/var/tmp"];

/// `mount_setattr(2)`'s attributes (not in every libc yet).
#[repr(C)]
struct MountAttr {
    attr_set: u64,
    attr_clr: u64,
    propagation: u64,
    userns_fd: u64,
}
const MOUNT_ATTR_RDONLY: u64 = 0x1;
const MOUNT_ATTR_NOSUID: u64 = 0x2;
const MOUNT_ATTR_NODEV: u64 = 0x4;
const AT_RECURSIVE: libc::c_uint = 0x8000;

/// Where `--home` puts the task's folder (OSWorld's tasks name their files there).
const USER_HOME: &str = "/home/user";

/// What covers a folder of the machine: a folder of the task's bound over it, or (none)
/// an empty one.
type Cover<'a> = (&'a str, Option<&'a str>);

/// Builds the view (see the module's documentation).
pub(crate) fn build(options: &Options) -> Result<(), SetupError> {
    mount(None, "/", None, libc::MS_REC | libc::MS_PRIVATE, None)?;
    for dir in &options.dirs {
        mount(Some(dir), dir, None, libc::MS_BIND | libc::MS_REC, None)?;
    }
    let mut writable: Vec<&str> = options.dirs.iter().map(String::as_str).collect();
    if options.home.is_some() {
        writable.push(USER_HOME);
    }
    // What covers folders of the machine: the task's folder over /tmp, empty ones over
    // the hidden folders (and, for a desktop, over the folders that hold sockets).
    let mut covers: Vec<Cover<'_>> = Vec::new();
    if let Some(tmp) = &options.tmp {
        covers.push(("/tmp", Some(tmp.as_str())));
        writable.push("/tmp");
    }
    if options.desktop {
        covers.extend(
            SOCKET_FOLDERS
                .iter()
                .filter(|f| std::path::Path::new(f).is_dir())
                .map(|f| (*f, None)),
        );
    }
    covers.extend(options.hidden.iter().map(|h| (h.as_str(), None)));
    let in_sight: Vec<String> = options.dirs.iter().chain(&options.kept).cloned().collect();
    let kept = keep_covered(&in_sight, &covers)?;
    cover(covers)?;
    private_dev()?;
    for (dir, fd) in kept {
        std::fs::create_dir_all(dir).map_err(|source| SetupError::Make {
            path: dir.to_string(),
            source,
        })?;
        let from = format!("/proc/self/fd/{fd}");
        mount(Some(&from), dir, None, libc::MS_BIND | libc::MS_REC, None)?;
        // SAFETY: the descriptor is ours and no longer needed.
        unsafe { libc::close(fd) };
    }
    if let Some(home) = &options.home {
        user_home(home)?;
    }
    set_attributes("/", true, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID, 0)?;
    for dir in writable.into_iter().chain(["/dev/shm"]) {
        set_attributes(
            dir,
            false,
            MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV,
            MOUNT_ATTR_RDONLY,
        )?;
    }
    mount(
        Some("proc"),
        "/proc",
        Some("proc"),
        libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
        None,
    )?;
    std::env::set_current_dir("/").map_err(SetupError::EnterRoot)
}

/// Writable folders under a cover would vanish with it (the task's own `/dev` covers the
/// machine's, and a run folder in `/dev/shm` with it): a handle on each, to bind them
/// again at their paths once everything is covered.
fn keep_covered<'a>(
    dirs: &'a [String],
    covers: &[Cover<'_>],
) -> Result<Vec<(&'a str, RawFd)>, SetupError> {
    let under = |dir: &str, cover: &str| {
        dir.strip_prefix(cover.trim_end_matches('/'))
            .is_some_and(|rest| rest.starts_with('/'))
    };
    let mut kept = Vec::new();
    for dir in dirs
        .iter()
        .filter(|d| under(d, "/dev") || covers.iter().any(|(c, _)| under(d, c)))
    {
        let path = cstring(dir)?;
        // SAFETY: opens a path for reference only, closed by the caller.
        let fd = unsafe { libc::open(path.as_ptr(), libc::O_PATH | libc::O_CLOEXEC) };
        check(fd as libc::c_long).map_err(|source| SetupError::Open {
            dir: dir.clone(),
            source,
        })?;
        kept.push((dir.as_str(), fd));
    }
    Ok(kept)
}

/// Mounts each cover over its folder.
fn cover(covers: Vec<Cover<'_>>) -> Result<(), SetupError> {
    for (target, source) in covers {
        if !std::path::Path::new(target).is_dir() {
            // A hidden folder under an earlier cover (the task's /tmp): made there. (Every
            // other target exists: options and the list above keep only folders that do.)
            std::fs::create_dir_all(target).map_err(|source| SetupError::Make {
                path: target.to_string(),
                source,
            })?;
        }
        match source {
            Some(from) => mount(Some(from), target, None, libc::MS_BIND | libc::MS_REC, None)?,
            None => mount(
                Some("tmpfs"),
                target,
                Some("tmpfs"),
                libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
                Some("mode=0755,size=1m"),
            )?,
        }
    }
    Ok(())
}

/// The task's folder `home` as `/home/user`: a fresh `/home` over the machine's (which is
/// never written), holding the machine's other entries bound back as they were (a user's
/// home, a link) and the task's folder as `user`.
fn user_home(home: &str) -> Result<(), SetupError> {
    let made = |path: &str| {
        let path = path.to_string();
        move |source| SetupError::Make { path, source }
    };
    let open = |path: &str| -> Result<RawFd, SetupError> {
        let c = cstring(path)?;
        // SAFETY: opens a path for reference only, closed below.
        let fd = unsafe {
            libc::open(
                c.as_ptr(),
                libc::O_PATH | libc::O_NOFOLLOW | libc::O_CLOEXEC,
            )
        };
        check(fd as libc::c_long).map_err(|source| SetupError::Open {
            dir: path.to_string(),
            source,
        })?;
        Ok(fd)
    };
    enum Entry {
        Folder(RawFd),
        File(RawFd),
        Link(std::path::PathBuf),
    }
    let mut entries = Vec::new();
    let listing = std::fs::read_dir("/home").map_err(made("/home"))?;
    for entry in listing.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name == "user" {
            continue;
        }
        let path = format!("/home/{name}");
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        let kept = if kind.is_symlink() {
            Entry::Link(std::fs::read_link(&path).map_err(made(&path))?)
        } else if kind.is_dir() {
            Entry::Folder(open(&path)?)
        } else {
            Entry::File(open(&path)?)
        };
        entries.push((path, kept));
    }
    let task = open(home)?;
    mount(
        Some("tmpfs"),
        "/home",
        Some("tmpfs"),
        libc::MS_NOSUID | libc::MS_NODEV,
        Some("mode=0755,size=1m"),
    )?;
    let bind = |fd: RawFd, target: &str| {
        let from = format!("/proc/self/fd/{fd}");
        let bound = mount(
            Some(&from),
            target,
            None,
            libc::MS_BIND | libc::MS_REC,
            None,
        );
        // SAFETY: the descriptor is ours and no longer needed.
        unsafe { libc::close(fd) };
        bound
    };
    for (path, entry) in entries {
        match entry {
            Entry::Folder(fd) => {
                std::fs::create_dir(&path).map_err(made(&path))?;
                bind(fd, &path)?;
            }
            Entry::File(fd) => {
                std::fs::File::create(&path).map_err(made(&path))?;
                bind(fd, &path)?;
            }
            Entry::Link(to) => std::os::unix::fs::symlink(to, &path).map_err(made(&path))?,
        }
    }
    std::fs::create_dir(USER_HOME).map_err(made(USER_HOME))?;
    bind(task, USER_HOME)
}

/// A fresh `/dev` holding only the devices of [`DEVICES`] (bound from the machine's),
/// `/dev/shm`, and the usual links: no disk, no kernel log, no terminal of the runner.
fn private_dev() -> Result<(), SetupError> {
    let made = |path: &str| {
        let path = path.to_string();
        move |source| SetupError::Make { path, source }
    };
    let mut kept = Vec::new();
    for name in DEVICES {
        let path = cstring(&format!("/dev/{name}"))?;
        // SAFETY: opens a path for reference only (O_PATH), closed by the kernel on exec.
        let fd = unsafe { libc::open(path.as_ptr(), libc::O_PATH | libc::O_CLOEXEC) };
        if fd >= 0 {
            kept.push((*name, fd));
        }
    }
    mount(
        Some("tmpfs"),
        "/dev",
        Some("tmpfs"),
        libc::MS_NOSUID | libc::MS_NOEXEC,
        Some("mode=0755,size=1m"),
    )?;
    for (name, fd) in kept {
        let target = format!("/dev/{name}");
        std::fs::File::create(&target).map_err(made(&target))?;
        mount(
            Some(&format!("/proc/self/fd/{fd}")),
            &target,
            None,
            libc::MS_BIND,
            None,
        )?;
        // SAFETY: the descriptor is ours and no longer needed.
        unsafe { libc::close(fd) };
    }
    std::fs::create_dir("/dev/shm").map_err(made("/dev/shm"))?;
    mount(
        Some("tmpfs"),
        "/dev/shm",
        Some("tmpfs"),
        libc::MS_NOSUID | libc::MS_NODEV,
        Some("mode=1777,size=64m"),
    )?;
    for (link, to) in [
        ("/dev/fd", "/proc/self/fd"),
        ("/dev/stdin", "/proc/self/fd/0"),
        ("/dev/stdout", "/proc/self/fd/1"),
        ("/dev/stderr", "/proc/self/fd/2"),
    ] {
        std::os::unix::fs::symlink(to, link).map_err(made(link))?;
    }
    Ok(())
}

fn cstring(s: &str) -> Result<CString, SetupError> {
    CString::new(s).map_err(|_| SetupError::Nul(s.to_string()))
}

fn mount(
    source: Option<&str>,
    target: &str,
    fstype: Option<&str>,
    flags: libc::c_ulong,
    data: Option<&str>,
) -> Result<(), SetupError> {
    let source = source.map(cstring).transpose()?;
    let target_c = cstring(target)?;
    let fstype = fstype.map(cstring).transpose()?;
    let data = data.map(cstring).transpose()?;
    let ptr = |c: &Option<CString>| c.as_ref().map_or(std::ptr::null(), |c| c.as_ptr());
    // SAFETY: every pointer is a valid C string or null, as mount(2) accepts.
    let ret = unsafe {
        libc::mount(
            ptr(&source),
            target_c.as_ptr(),
            ptr(&fstype),
            flags,
            ptr(&data) as *const libc::c_void,
        )
    };
    check(ret as libc::c_long).map_err(|source| SetupError::Mount {
        target: target.to_string(),
        source,
    })
}

fn set_attributes(path: &str, recursive: bool, set: u64, clear: u64) -> Result<(), SetupError> {
    let path_c = cstring(path)?;
    let attr = MountAttr {
        attr_set: set,
        attr_clr: clear,
        propagation: 0,
        userns_fd: 0,
    };
    let flags = if recursive { AT_RECURSIVE } else { 0 };
    // SAFETY: mount_setattr reads the struct it is given.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            libc::AT_FDCWD,
            path_c.as_ptr(),
            flags,
            &attr as *const MountAttr,
            std::mem::size_of::<MountAttr>(),
        )
    };
    check(ret).map_err(|source| SetupError::Attributes {
        path: path.to_string(),
        source,
    })
}
