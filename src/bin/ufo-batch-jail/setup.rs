//! The jail's namespaces and file system view. The process the runner starts enters new
//! user, mount, IPC and PID namespaces and forks the task's init (PID 1 of the new PID
//! namespace), then only waits for it; the init builds the file system view, hardens
//! itself (`harden`) and serves (`serve`).

use std::ffi::CString;
use std::os::fd::RawFd;
use std::process::ExitCode;

use crate::protocol::{Event, frame, send_with_fds};

/// The control socket: the jail's standard input.
pub(crate) const CONTROL: RawFd = 0;

/// Devices a task may use (bound from the machine's into the task's own `/dev`).
const DEVICES: &[&str] = &["null", "zero", "full", "random", "urandom", "tty"];

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

/// What the runner asked for: `--rw DIR` (a folder the task may write, any number),
/// `--tmp DIR` (a folder seen as `/tmp`), `--hide DIR` (a folder seen empty, any
/// number), `--desktop` (a desktop's jail: Unix sockets allowed, the machine's socket
/// folders hidden, a network namespace of its own).
pub(crate) struct Options {
    /// The writable folders, resolved (the `--tmp` folder among them).
    pub(crate) dirs: Vec<String>,
    /// The folder seen as `/tmp`.
    tmp: Option<String>,
    /// A desktop's jail.
    pub(crate) desktop: bool,
    /// Folders covered by empty ones (`--hide DIR`).
    hidden: Vec<String>,
}

/// Folders of the machine that hold sockets, hidden behind empty ones in a desktop's
/// jail (`/var/run` is a link to `/run`).
const SOCKET_FOLDERS: &[&str] = &["/run", "/var/tmp"];

fn options(args: Vec<String>) -> Result<Options, String> {
    let real = |dir: &str| {
        std::fs::canonicalize(dir)
            .map(|p| p.to_string_lossy().into_owned())
            .map_err(|e| format!("the folder {dir} cannot be used: {e}"))
    };
    let mut options = Options {
        dirs: Vec::new(),
        tmp: None,
        desktop: false,
        hidden: Vec::new(),
    };
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--desktop" => options.desktop = true,
            "--hide" => {
                let Some(dir) = args.next() else {
                    return Err("--hide needs a folder".to_string());
                };
                // A folder that is not there has nothing to hide; `/` and the folders
                // that hold the system (a HOME of `/`) are never hidden.
                let system = |d: &str| {
                    ["/usr", "/etc", "/lib", "/bin"]
                        .iter()
                        .any(|s| *s == d || s.starts_with(&format!("{}/", d.trim_end_matches('/'))))
                };
                if let Ok(dir) = real(&dir)
                    && !system(&dir)
                {
                    options.hidden.push(dir);
                }
            }
            "--rw" | "--tmp" => {
                let Some(dir) = args.next() else {
                    return Err(format!("{arg} needs a folder"));
                };
                let dir = real(&dir)?;
                if arg == "--tmp" {
                    options.tmp = Some(dir.clone());
                }
                options.dirs.push(dir);
            }
            _ => {
                return Err(format!(
                    "unknown argument {arg:?} (usage: ufo-batch-jail [--rw DIR]... [--tmp DIR] [--hide DIR]... [--desktop])"
                ));
            }
        }
    }
    Ok(options)
}

/// Sends an event on the control socket (the runner may be gone: then nobody listens).
pub(crate) fn tell(event: &Event) {
    let bytes = frame(&event.encode());
    let mut sent = 0;
    while sent < bytes.len() {
        match send_with_fds(CONTROL, &bytes[sent..], &[]) {
            Ok(0) | Err(_) => return,
            Ok(n) => sent += n,
        }
    }
}

/// Says why the jail cannot be made, and ends.
fn fatal(message: String) -> ExitCode {
    tell(&Event::Fatal { message });
    ExitCode::from(1)
}

/// The last system error, said after `what`.
pub(crate) fn os_error(what: &str) -> String {
    format!("{what}: {}", std::io::Error::last_os_error())
}

/// Checks a system call's return value.
pub(crate) fn check(ret: libc::c_long, what: &str) -> Result<(), String> {
    if ret < 0 { Err(os_error(what)) } else { Ok(()) }
}

/// Becomes the jail `args` (the binary's arguments) describe; returns when it ends.
pub(crate) fn main(args: Vec<String>) -> ExitCode {
    let options = match options(args) {
        Ok(o) => o,
        Err(e) => return fatal(e),
    };
    // SAFETY: plain system calls on this single-threaded process.
    let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
    // A desktop gets a network namespace of its own: abstract Unix sockets (an X
    // server's, a session bus's) are per network namespace, so no other desktop and
    // nothing of the machine's can be reached that way, whatever the kernel's Landlock.
    let mut flags =
        libc::CLONE_NEWUSER | libc::CLONE_NEWNS | libc::CLONE_NEWIPC | libc::CLONE_NEWPID;
    if options.desktop {
        flags |= libc::CLONE_NEWNET;
    }
    // SAFETY: unshare only changes this process's namespaces.
    if let Err(e) = check(
        unsafe { libc::unshare(flags) } as libc::c_long,
        "cannot create namespaces",
    ) {
        return fatal(e);
    }
    let maps = [
        ("/proc/self/setgroups", "deny".to_string()),
        ("/proc/self/uid_map", format!("0 {uid} 1")),
        ("/proc/self/gid_map", format!("0 {gid} 1")),
    ];
    for (file, text) in maps {
        if let Err(e) = std::fs::write(file, text) {
            return fatal(format!("cannot write {file}: {e}"));
        }
    }
    // SAFETY: fork in a single-threaded process; the child continues in plain Rust.
    match unsafe { libc::fork() } {
        -1 => fatal(os_error("cannot start the task's init")),
        0 => match init(&options) {
            Ok(never) => match never {},
            Err(e) => fatal(e),
        },
        child => outer(child),
    }
}

/// The process the runner started: waits for the init and ends with it. Signals a
/// scheduler sends to every process of a job do not end it: only the runner decides
/// when a task's jail ends.
fn outer(child: libc::pid_t) -> ExitCode {
    // SAFETY: closing our copy of the socket and ignoring signals only affect this process.
    unsafe {
        libc::close(CONTROL);
        for signal in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP, libc::SIGQUIT] {
            libc::signal(signal, libc::SIG_IGN);
        }
    }
    let mut status = 0;
    loop {
        // SAFETY: waits for our own child.
        let r = unsafe { libc::waitpid(child, &mut status, 0) };
        if r == child
            || (r < 0 && std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR))
        {
            break;
        }
    }
    ExitCode::from(if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status) as u8
    } else {
        1
    })
}

/// The task's init: PID 1 of the new PID namespace.
fn init(options: &Options) -> Result<std::convert::Infallible, String> {
    // SAFETY: prctl and setsid only change this process.
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
        libc::setsid();
    }
    build_view(options)?;
    crate::harden::harden(options)?;
    tell(&Event::Ready);
    crate::serve::serve()
}

fn cstring(s: &str) -> Result<CString, String> {
    CString::new(s).map_err(|_| format!("{s:?} holds a NUL byte"))
}

fn mount(
    source: Option<&str>,
    target: &str,
    fstype: Option<&str>,
    flags: libc::c_ulong,
    data: Option<&str>,
) -> Result<(), String> {
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
    check(ret as libc::c_long, &format!("cannot mount {target}"))
}

fn set_attributes(path: &str, recursive: bool, set: u64, clear: u64) -> Result<(), String> {
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
    check(ret, &format!("cannot set the mount attributes of {path}"))
}

/// The task's view of the file system: read-only everywhere but the writable folders
/// (read-write, no devices, no setuid) and its own `/tmp`; its own `/dev` with only
/// harmless devices; its own `/proc`; in a desktop's jail, empty folders over the
/// machine's socket folders.
fn build_view(options: &Options) -> Result<(), String> {
    mount(None, "/", None, libc::MS_REC | libc::MS_PRIVATE, None)?;
    for dir in &options.dirs {
        mount(Some(dir), dir, None, libc::MS_BIND | libc::MS_REC, None)?;
    }
    let mut writable: Vec<&str> = options.dirs.iter().map(String::as_str).collect();
    // What covers folders of the machine: the task's folder over /tmp, empty ones over
    // the hidden folders (and, for a desktop, over the folders that hold sockets).
    let mut covers: Vec<(&str, Option<&str>)> = Vec::new();
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
    // Writable folders under a cover would vanish with it (the task's own `/dev`
    // covers the machine's, and a run folder in `/dev/shm` with it): keep a handle on
    // each, and bind them again at their paths once everything is covered.
    let under = |dir: &str, cover: &str| {
        dir.strip_prefix(cover.trim_end_matches('/'))
            .is_some_and(|rest| rest.starts_with('/'))
    };
    let mut kept = Vec::new();
    for dir in options
        .dirs
        .iter()
        .filter(|d| under(d, "/dev") || covers.iter().any(|(c, _)| under(d, c)))
    {
        let path = cstring(dir)?;
        // SAFETY: opens a path for reference only, closed below.
        let fd = unsafe { libc::open(path.as_ptr(), libc::O_PATH | libc::O_CLOEXEC) };
        check(fd as libc::c_long, &format!("cannot open {dir}"))?;
        kept.push((dir, fd));
    }
    for (target, source) in covers {
        if !std::path::Path::new(target).is_dir() {
            // A hidden folder under an earlier cover (the task's /tmp): made there. (Every
            // other target exists: options and the list above keep only folders that do.)
            std::fs::create_dir_all(target).map_err(|e| format!("cannot make {target}: {e}"))?;
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
    private_dev()?;
    for (dir, fd) in kept {
        std::fs::create_dir_all(dir).map_err(|e| format!("cannot make {dir}: {e}"))?;
        let from = format!("/proc/self/fd/{fd}");
        mount(Some(&from), dir, None, libc::MS_BIND | libc::MS_REC, None)?;
        // SAFETY: the descriptor is ours and no longer needed.
        unsafe { libc::close(fd) };
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
    std::env::set_current_dir("/").map_err(|e| format!("cannot enter /: {e}"))
}

/// A fresh `/dev` holding only the devices of [`DEVICES`] (bound from the machine's),
/// `/dev/shm`, and the usual links: no disk, no kernel log, no terminal of the runner.
fn private_dev() -> Result<(), String> {
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
        std::fs::File::create(&target).map_err(|e| format!("cannot make {target}: {e}"))?;
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
    std::fs::create_dir("/dev/shm").map_err(|e| format!("cannot make /dev/shm: {e}"))?;
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
        std::os::unix::fs::symlink(to, link).map_err(|e| format!("cannot make {link}: {e}"))?;
    }
    Ok(())
}
