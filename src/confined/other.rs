//! Opening beneath a folder where there is no `openat` (Windows). Each name on the way is
//! looked at without following it and refused when it is a link (a symbolic link or a
//! junction: a reparse point), and the file itself is opened without following a reparse
//! point and looked at again on the open handle. What this cannot close, unlike the Unix
//! walk: a folder on the way swapped for a junction between the look and the open.

use std::ffi::{OsStr, OsString};
use std::fs::{File, OpenOptions};
use std::os::windows::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use super::{Kind, Open};
use crate::regular_file::FileAccessError;
use crate::relpath::RelPath;

/// `FILE_FLAG_OPEN_REPARSE_POINT`: open a link itself, not what it points at.
const OPEN_REPARSE_POINT: u32 = 0x0020_0000;

/// The folder paths are opened beneath.
pub(super) struct Root(PathBuf);

impl Root {
    /// The folder at `path` (a path the runner chose).
    pub(super) fn open(path: &Path) -> Result<Self, FileAccessError> {
        let meta = std::fs::metadata(path)?;
        if !meta.is_dir() {
            return Err(FileAccessError::NotAFolderOnTheWay);
        }
        Ok(Self(path.to_path_buf()))
    }

    /// Opens `rel` as `how` says.
    pub(super) fn open_at(&self, rel: &RelPath, how: Open) -> Result<File, FileAccessError> {
        self.check_folders(rel)?;
        let mut options = OpenOptions::new();
        let flags = OPEN_REPARSE_POINT;
        match how {
            Open::Read => {
                options.read(true);
            }
            Open::Write { append } => {
                options.write(true).create(true).append(append);
            }
        }
        options.custom_flags(flags);
        let file = options.open(self.0.join(rel.as_path()))?;
        if file.metadata()?.file_type().is_symlink() {
            return Err(FileAccessError::Link);
        }
        Ok(file)
    }

    /// Makes the folder `rel` and those above it, as needed.
    pub(super) fn make_dirs(&self, rel: &RelPath) -> Result<(), FileAccessError> {
        let mut at = self.0.clone();
        for name in rel.names() {
            at.push(name);
            match std::fs::create_dir(&at) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(e.into()),
            }
            folder_at(&at)?;
        }
        Ok(())
    }

    /// What is at `rel`, not following a link there; `None` when nothing is.
    pub(super) fn kind_at(&self, rel: &RelPath) -> Result<Option<(Kind, u64)>, FileAccessError> {
        match self.check_folders(rel) {
            Err(FileAccessError::NotFound) => return Ok(None),
            other => other?,
        }
        match std::fs::symlink_metadata(self.0.join(rel.as_path())) {
            Ok(meta) => Ok(Some((kind_of(&meta), meta.len()))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// Refuses `rel` when a folder on its way is a link or not a folder.
    fn check_folders(&self, rel: &RelPath) -> Result<(), FileAccessError> {
        let Some((parent, _)) = rel.split_last() else {
            return Ok(());
        };
        let mut at = self.0.clone();
        for name in parent.names() {
            at.push(name);
            folder_at(&at)?;
        }
        Ok(())
    }

    /// Removes the file `rel` (a link itself, never its target).
    pub(super) fn remove_at(&self, rel: &RelPath) -> Result<(), FileAccessError> {
        self.check_folders(rel)?;
        match std::fs::remove_file(self.0.join(rel.as_path())) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e.into()),
            _ => Ok(()),
        }
    }

    /// The folder at `rel`, to list.
    pub(super) fn folder(&self, rel: &RelPath) -> Result<Folder, FileAccessError> {
        self.check_folders(rel)?;
        let path = self.0.join(rel.as_path());
        folder_at(&path)?;
        Ok(Folder(path))
    }
}

/// An open folder, to list (by its path: there is no `openat` here).
pub(super) struct Folder(PathBuf);

impl Folder {
    /// The names in it.
    pub(super) fn names(
        &self,
    ) -> Result<impl Iterator<Item = Result<OsString, FileAccessError>>, FileAccessError> {
        Ok(std::fs::read_dir(&self.0)?.map(|e| Ok(e?.file_name())))
    }

    /// What `name` in it is (not following a link).
    pub(super) fn stat(&self, name: &OsStr) -> Result<Option<(Kind, u64)>, FileAccessError> {
        match std::fs::symlink_metadata(self.0.join(name)) {
            Ok(meta) => Ok(Some((kind_of(&meta), meta.len()))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// The folder `name` in it, not through a link.
    pub(super) fn child(&self, name: &OsStr) -> Result<Folder, FileAccessError> {
        match self.stat(name)? {
            Some((Kind::Dir, _)) => Ok(Folder(self.0.join(name))),
            Some((Kind::Link, _)) => Err(FileAccessError::Link),
            Some(_) => Err(FileAccessError::NotAFolderOnTheWay),
            None => Err(FileAccessError::NotFound),
        }
    }
}

/// `Ok` when `at` is a folder, not a link to one.
fn folder_at(at: &Path) -> Result<(), FileAccessError> {
    let meta = std::fs::symlink_metadata(at)?;
    if meta.file_type().is_symlink() {
        return Err(FileAccessError::Link);
    }
    if !meta.is_dir() {
        return Err(FileAccessError::NotAFolderOnTheWay);
    }
    Ok(())
}

fn kind_of(meta: &std::fs::Metadata) -> Kind {
    let t = meta.file_type();
    if t.is_symlink() {
        Kind::Link
    } else if t.is_dir() {
        Kind::Dir
    } else if t.is_file() {
        Kind::File
    } else {
        Kind::Other
    }
}
