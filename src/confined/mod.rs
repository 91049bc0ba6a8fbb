//! Files that a task, a task file, a plan or a model names, touched only beneath the
//! folder they belong to (a task's workspace, a project's `files/`) and with the task's
//! rights. Every path is opened from a handle on that folder, one step at a time,
//! refusing symbolic links and `..` at every step (Linux: `openat2` with
//! `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS`; elsewhere on Unix a walk with `O_NOFOLLOW`), so
//! there is no gap between a check and an open for a link swapped in to fill; and with
//! the runner's privileges set aside on the thread doing it (`TaskRights`), so a runner
//! started as root reads nothing its tasks could not. Reads are bounded; listings and
//! walks are capped.
//!
//! The runner's own files (a run folder's records) are `regular_file`'s; what a path's
//! text may be is `relpath`'s.

mod listing;
#[cfg(not(unix))]
mod other;
mod rights;
#[cfg(unix)]
mod unix;

use std::fs::File;
use std::io::{Read, Write};
use std::path::Path;

pub(crate) use rights::TaskRights;

#[cfg(not(unix))]
use other::Root;
#[cfg(unix)]
use unix::Root;

use crate::regular_file::{Bounded, FileAccessError, check_kind, read_open};
use crate::relpath::RelPath;

/// What a path names, not following a link.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Kind {
    /// A regular file.
    File,
    /// A folder.
    Dir,
    /// A symbolic link (never followed).
    Link,
    /// A named pipe.
    #[cfg_attr(not(unix), allow(dead_code))]
    Fifo,
    /// A Unix socket.
    #[cfg_attr(not(unix), allow(dead_code))]
    Socket,
    /// A device node.
    #[cfg_attr(not(unix), allow(dead_code))]
    Device,
    /// Anything else.
    Other,
}

impl Kind {
    /// What it is, in words (`a FIFO`).
    pub(crate) fn described(self) -> &'static str {
        match self {
            Kind::File => "a file",
            Kind::Dir => "a folder",
            Kind::Link => "a symbolic link",
            Kind::Fifo => "a FIFO",
            Kind::Socket => "a socket",
            Kind::Device => "a device",
            Kind::Other => "not a file",
        }
    }

    /// Its name in a listing (`list_dir`'s `type`).
    pub(crate) fn name(self) -> &'static str {
        match self {
            Kind::File => "file",
            Kind::Dir => "dir",
            Kind::Link => "symlink",
            Kind::Fifo => "fifo",
            Kind::Socket => "socket",
            Kind::Device => "device",
            Kind::Other => "other",
        }
    }
}

/// How a file is opened.
#[derive(Clone, Copy, Debug)]
enum Open {
    /// To read.
    Read,
    /// To write, made when missing.
    Write {
        /// At the end, keeping what is there.
        append: bool,
    },
}

/// A folder whose paths are opened only beneath it, with a task's rights.
pub(crate) struct Confined {
    root: Root,
}

impl Confined {
    /// A handle on the folder at `root` (a path the runner or its user chose: a task's
    /// workspace, a task file's folder), opened with the runner's rights: what is below
    /// it is opened with the task's.
    pub(crate) fn open(root: &Path) -> Result<Self, FileAccessError> {
        Ok(Self {
            root: Root::open(root)?,
        })
    }

    /// The regular file at `rel`, open to read, and its size.
    pub(crate) fn open_file(&self, rel: &RelPath) -> Result<(File, u64), FileAccessError> {
        let _rights = TaskRights::enter()?;
        let file = self.root.open_at(rel, Open::Read)?;
        let meta = file.metadata()?;
        check_kind(&meta)?;
        Ok((file, meta.len()))
    }

    /// At most `keep` bytes of the regular file at `rel`; with `refuse_above`, a file
    /// larger than that is refused rather than cut.
    pub(crate) fn read(
        &self,
        rel: &RelPath,
        keep: u64,
        refuse_above: Option<u64>,
    ) -> Result<Bounded, FileAccessError> {
        let (file, size) = self.open_file(rel)?;
        read_open(file, size, keep, refuse_above)
    }

    /// Writes `content` to the regular file at `rel` (made, with the folders above it,
    /// when missing), replacing or appending. Anything but a regular file there is
    /// refused untouched, and so is a file with other hard links (it could be one
    /// outside).
    pub(crate) fn write(
        &self,
        rel: &RelPath,
        content: &[u8],
        append: bool,
    ) -> Result<(), FileAccessError> {
        let mut file = self.create(rel, append)?;
        file.write_all(content)?;
        Ok(())
    }

    /// Writes what `from` gives, at most `limit` bytes, to the regular file at `rel`
    /// (made as [`Self::write`] makes it); `Err` when `from` has more.
    pub(crate) fn write_from(
        &self,
        rel: &RelPath,
        from: impl Read,
        limit: u64,
    ) -> Result<u64, FileAccessError> {
        let mut file = self.create(rel, false)?;
        let copied = std::io::copy(&mut from.take(limit + 1), &mut file)?;
        if copied > limit {
            return Err(FileAccessError::TooLarge {
                size: copied,
                limit,
            });
        }
        Ok(copied)
    }

    /// The regular file at `rel`, open to write: emptied unless `append`.
    fn create(&self, rel: &RelPath, append: bool) -> Result<File, FileAccessError> {
        let _rights = TaskRights::enter()?;
        if let Some((parent, _)) = rel.split_last()
            && !parent.is_root()
        {
            self.root.make_dirs(&parent)?;
        }
        let file = self.root.open_at(rel, Open::Write { append })?;
        let meta = file.metadata()?;
        check_kind(&meta)?;
        #[cfg(unix)]
        if std::os::unix::fs::MetadataExt::nlink(&meta) > 1 {
            return Err(FileAccessError::HardLinked);
        }
        if !append {
            file.set_len(0)?;
        }
        Ok(file)
    }

    /// Makes the folder `rel` and those above it, as needed.
    pub(crate) fn make_dirs(&self, rel: &RelPath) -> Result<(), FileAccessError> {
        let _rights = TaskRights::enter()?;
        self.root.make_dirs(rel)
    }

    /// What `rel` names (a link there is a [`Kind::Link`], not followed); `None` when
    /// nothing is there.
    pub(crate) fn kind(&self, rel: &RelPath) -> Result<Option<Kind>, FileAccessError> {
        let _rights = TaskRights::enter()?;
        Ok(self.root.kind_at(rel)?.map(|(kind, _)| kind))
    }

    /// Removes the file at `rel` (not what a link there leads to); nothing there is fine.
    pub(crate) fn remove(&self, rel: &RelPath) -> Result<(), FileAccessError> {
        let _rights = TaskRights::enter()?;
        self.root.remove_at(rel)
    }

    /// `Ok` when `rel` is a folder reached through no link.
    pub(crate) fn check_folder(&self, rel: &RelPath) -> Result<(), FileAccessError> {
        let _rights = TaskRights::enter()?;
        self.root.folder(rel).map(drop)
    }
}

#[cfg(all(test, unix))]
mod tests;
