//! Opening beneath a folder handle on Unix. On Linux one `openat2` with
//! `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS` does it; where the
//! kernel has no `openat2` (before 5.6, or a seccomp profile that refuses it), and on
//! other Unix systems, the path is walked one name at a time, each folder opened from the
//! one before with `O_NOFOLLOW`. Either way no symbolic link is followed at any step, and a
//! link swapped in while the path is opened makes the open fail: there is nothing to race.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use rustix::fs::{AtFlags, Mode, OFlags};
use rustix::io::Errno;

use super::{Kind, Open};
use crate::regular_file::FileAccessError;
use crate::relpath::RelPath;

/// A handle on the folder paths are opened beneath.
pub(super) struct Root(OwnedFd);

impl Root {
    /// Opens the folder at `path` (a path the runner chose, followed as given).
    pub(super) fn open(path: &Path) -> Result<Self, FileAccessError> {
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
        rustix::fs::open(path, flags, Mode::empty())
            .map(Self)
            .map_err(|e| error(e.into()))
    }

    /// Opens `rel` as `how` says.
    pub(super) fn open_at(&self, rel: &RelPath, how: Open) -> Result<File, FileAccessError> {
        let (flags, mode) = match how {
            Open::Read => (
                OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY,
                Mode::empty(),
            ),
            Open::Write { append } => {
                let append = if append {
                    OFlags::APPEND
                } else {
                    OFlags::empty()
                };
                (
                    OFlags::WRONLY | OFlags::CREATE | OFlags::NONBLOCK | OFlags::NOCTTY | append,
                    Mode::from_raw_mode(0o666),
                )
            }
        };
        let flags = flags | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        open_beneath(self.0.as_fd(), rel, flags, mode)
            .map(File::from)
            .map_err(|e| error(e.into()))
    }

    /// Makes the folder `rel` and those above it, as needed.
    pub(super) fn make_dirs(&self, rel: &RelPath) -> Result<(), FileAccessError> {
        let mut held: Option<OwnedFd> = None;
        for name in rel.names() {
            let at = held.as_ref().map_or(self.0.as_fd(), |fd| fd.as_fd());
            match rustix::fs::mkdirat(at, name, Mode::from_raw_mode(0o777)) {
                Ok(()) | Err(Errno::EXIST) => {}
                // As the system says it (EMLINK here is a folder full of folders).
                Err(e) => return Err(FileAccessError::from(std::io::Error::from(e))),
            }
            let next = open_folder(at, name).map_err(|e| error(e.into()))?;
            held = Some(next);
        }
        Ok(())
    }

    /// What is at `rel`, not following a link there; `None` when nothing is.
    pub(super) fn kind_at(&self, rel: &RelPath) -> Result<Option<(Kind, u64)>, FileAccessError> {
        let Some((parent, name)) = rel.split_last() else {
            let stat = rustix::fs::fstat(&self.0).map_err(|e| error(e.into()))?;
            return Ok(Some((kind_of(stat.st_mode as _), stat.st_size as u64)));
        };
        let folder = match open_beneath(self.0.as_fd(), &parent, folder_flags(), Mode::empty()) {
            Ok(fd) => Folder(fd),
            Err(Errno::NOENT) => return Ok(None),
            Err(e) => return Err(error(e.into())),
        };
        folder.stat(name)
    }

    /// Opens `rel` by the walk that stands in for `openat2`.
    #[cfg(test)]
    pub(super) fn walk_for_tests(&self, rel: &RelPath) -> std::io::Result<OwnedFd> {
        let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        walk(self.0.as_fd(), rel, rel.as_path(), flags, Mode::empty()).map_err(Into::into)
    }

    /// Removes the file `rel` (a link itself, never its target).
    pub(super) fn remove_at(&self, rel: &RelPath) -> Result<(), FileAccessError> {
        let Some((parent, name)) = rel.split_last() else {
            return Err(FileAccessError::NotRegular("a folder"));
        };
        let folder = match open_beneath(self.0.as_fd(), &parent, folder_flags(), Mode::empty()) {
            Ok(fd) => fd,
            Err(Errno::NOENT) => return Ok(()),
            Err(e) => return Err(error(e.into())),
        };
        match rustix::fs::unlinkat(&folder, name, AtFlags::empty()) {
            Ok(()) | Err(Errno::NOENT) => Ok(()),
            Err(e) => Err(FileAccessError::from(std::io::Error::from(e))),
        }
    }

    /// The folder at `rel`, to list.
    pub(super) fn folder(&self, rel: &RelPath) -> Result<Folder, FileAccessError> {
        open_beneath(self.0.as_fd(), rel, folder_flags(), Mode::empty())
            .map(Folder)
            .map_err(|e| error(e.into()))
    }
}

/// An open folder, to list.
pub(super) struct Folder(OwnedFd);

impl Folder {
    /// The names in it (not `.` and `..`).
    pub(super) fn names(
        &self,
    ) -> Result<impl Iterator<Item = Result<OsString, FileAccessError>>, FileAccessError> {
        let dir = rustix::fs::Dir::read_from(&self.0).map_err(|e| error(e.into()))?;
        Ok(dir.filter_map(|entry| match entry {
            Ok(entry) => {
                let name = entry.file_name().to_bytes();
                (name != b"." && name != b"..").then(|| Ok(OsStr::from_bytes(name).to_os_string()))
            }
            Err(e) => Some(Err(error(e.into()))),
        }))
    }

    /// What `name` in it is (not following a link).
    pub(super) fn stat(&self, name: &OsStr) -> Result<Option<(Kind, u64)>, FileAccessError> {
        match rustix::fs::statat(&self.0, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(stat) => Ok(Some((kind_of(stat.st_mode as _), stat.st_size as u64))),
            Err(Errno::NOENT) => Ok(None),
            Err(e) => Err(error(e.into())),
        }
    }

    /// The folder `name` in it, not through a link.
    pub(super) fn child(&self, name: &OsStr) -> Result<Folder, FileAccessError> {
        open_folder(self.0.as_fd(), name)
            .map(Folder)
            .map_err(|e| error(e.into()))
    }
}

/// Flags that open a folder on the way, never through a link. (Not `O_PATH`: with
/// `O_NOFOLLOW` it opens a link itself, and the link would then be told apart from a
/// file only by another look.)
fn folder_flags() -> OFlags {
    OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC
}

/// Opens the folder `name` of `at`, not through a link: `ELOOP` for a link (where
/// `O_DIRECTORY` would say `ENOTDIR` first).
fn open_folder(at: BorrowedFd<'_>, name: &OsStr) -> Result<OwnedFd, Errno> {
    match rustix::fs::openat(at, name, folder_flags(), Mode::empty()) {
        Err(Errno::NOTDIR) => match rustix::fs::statat(at, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(stat)
                if rustix::fs::FileType::from_raw_mode(stat.st_mode as _)
                    == rustix::fs::FileType::Symlink =>
            {
                Err(Errno::LOOP)
            }
            _ => Err(Errno::NOTDIR),
        },
        other => other,
    }
}

/// Opens `rel` beneath `root`, following no link.
fn open_beneath(
    root: BorrowedFd<'_>,
    rel: &RelPath,
    flags: OFlags,
    mode: Mode,
) -> Result<OwnedFd, Errno> {
    let path: &Path = if rel.is_root() {
        Path::new(".")
    } else {
        rel.as_path()
    };
    #[cfg(target_os = "linux")]
    if let Some(opened) = linux::open(root, path, flags, mode) {
        return opened;
    }
    walk(root, rel, path, flags, mode)
}

/// Opens `rel` one name at a time, each folder from the one before, never through a link.
fn walk(
    root: BorrowedFd<'_>,
    rel: &RelPath,
    path: &Path,
    flags: OFlags,
    mode: Mode,
) -> Result<OwnedFd, Errno> {
    let Some((parent, name)) = rel.split_last() else {
        return rustix::fs::openat(root, path, flags, mode);
    };
    let mut held: Option<OwnedFd> = None;
    for folder in parent.names() {
        let at = held.as_ref().map_or(root, |fd| fd.as_fd());
        held = Some(open_folder(at, folder)?);
    }
    let at = held.as_ref().map_or(root, |fd| fd.as_fd());
    if flags == folder_flags() {
        return open_folder(at, name);
    }
    rustix::fs::openat(at, name, flags, mode)
}

#[cfg(target_os = "linux")]
mod linux {
    use std::os::fd::{BorrowedFd, OwnedFd};
    use std::path::Path;
    use std::sync::atomic::{AtomicBool, Ordering};

    use rustix::fs::{Mode, OFlags, ResolveFlags};
    use rustix::io::Errno;

    /// Set once the kernel said it has no `openat2`.
    static MISSING: AtomicBool = AtomicBool::new(false);

    /// `openat2` beneath `root` with no link followed; `None` where it cannot answer
    /// (then the path is walked instead).
    pub(super) fn open(
        root: BorrowedFd<'_>,
        path: &Path,
        flags: OFlags,
        mode: Mode,
    ) -> Option<Result<OwnedFd, Errno>> {
        if MISSING.load(Ordering::Relaxed) {
            return None;
        }
        let resolve =
            ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS;
        // No link is followed anyway; with `O_NOFOLLOW` a link at the end would be opened
        // as such and `O_DIRECTORY` say `ENOTDIR`, where without it the kernel says `ELOOP`.
        let flags = flags - OFlags::NOFOLLOW;
        // EAGAIN: a rename elsewhere raced the lookup; the kernel asks to try again.
        for _ in 0..4 {
            match rustix::fs::openat2(root, path, flags, mode, resolve) {
                Err(Errno::AGAIN) => continue,
                Err(Errno::NOSYS) => {
                    MISSING.store(true, Ordering::Relaxed);
                    return None;
                }
                // A seccomp profile that refuses the call (or an immutable file, which
                // the walk then reports the same way).
                Err(Errno::PERM) => return None,
                other => return Some(other),
            }
        }
        None
    }
}

/// The kind of a file from its mode.
fn kind_of(mode: u32) -> Kind {
    match rustix::fs::FileType::from_raw_mode(mode) {
        rustix::fs::FileType::RegularFile => Kind::File,
        rustix::fs::FileType::Directory => Kind::Dir,
        rustix::fs::FileType::Symlink => Kind::Link,
        rustix::fs::FileType::Fifo => Kind::Fifo,
        rustix::fs::FileType::Socket => Kind::Socket,
        rustix::fs::FileType::CharacterDevice | rustix::fs::FileType::BlockDevice => Kind::Device,
        _ => Kind::Other,
    }
}

/// What the system said, as the file tools say it: a link on the way (`ELOOP`, and
/// `EXDEV`, which a path that leaves the folder would give) is refused as such.
fn error(e: std::io::Error) -> FileAccessError {
    match e.raw_os_error() {
        Some(libc::ELOOP) | Some(libc::EXDEV) | Some(libc::EMLINK) => FileAccessError::Link,
        Some(libc::ENOTDIR) => FileAccessError::NotAFolderOnTheWay,
        // A FIFO opened for writing with no reader.
        Some(libc::ENXIO) => FileAccessError::NotRegular("a FIFO or a device"),
        _ => FileAccessError::from(e),
    }
}
