//! Reading files by path that a user or the runner itself placed (task files, configs, a
//! run folder's records, screenshots): regular files only, never more than a bound, and
//! never blocking. A FIFO, a socket or a device node where a file should be is refused
//! before a byte moves (opening a FIFO could wait forever, reading `/dev/zero` would never
//! end), and a file larger than the bound is read only up to it. Files a task, a plan or a
//! model names are opened through `confined` instead (beneath their folder, no links, the
//! task's rights), with the same checks and errors.

use std::fs::{File, OpenOptions};
use std::io::Read;
use std::path::Path;

/// Why a file was refused or could not be read or written.
#[derive(Debug, thiserror::Error)]
pub(crate) enum FileAccessError {
    /// The path does not exist.
    #[error("it does not exist")]
    NotFound,
    /// A FIFO, socket, device or folder where a regular file should be.
    #[error("it is {0}, not a regular file")]
    NotRegular(&'static str),
    /// Larger than the caller accepts.
    #[error("it is {size} bytes, more than the {limit} bytes accepted")]
    TooLarge {
        /// Its size.
        size: u64,
        /// The bound.
        limit: u64,
    },
    /// A symbolic link where the file is, or on its path: never followed in a folder a
    /// task writes (see `confined`).
    #[error("it is a symbolic link, or one is on its path; links are not followed")]
    Link,
    /// A name on its path is a file, not a folder.
    #[error("a name on its path is not a folder")]
    NotAFolderOnTheWay,
    /// Something else where a folder should be.
    #[error("it is {0}, not a folder")]
    NotAFolder(&'static str),
    /// A regular file with other hard links, which could be outside the folder.
    #[error("it has other hard links; files with more than one name are not written")]
    #[cfg_attr(not(unix), allow(dead_code))]
    HardLinked,
    /// A path whose text is refused (absolute, `..` above the start, a NUL, a name too
    /// long).
    #[error(transparent)]
    Path(#[from] crate::relpath::PathError),
    /// Anything else the system said.
    #[error("{0}")]
    Io(std::io::Error),
}

impl FileAccessError {
    /// True when the machine, not the path or what is there, is why (a full or read-only
    /// disk, an I/O error, no memory or file handles left): trying again may succeed.
    pub(crate) fn is_machines(&self) -> bool {
        use std::io::ErrorKind;
        let Self::Io(e) = self else {
            return false;
        };
        #[cfg(unix)]
        if matches!(
            e.raw_os_error(),
            Some(libc::EIO | libc::EMFILE | libc::ENFILE | libc::ENOMEM)
        ) {
            return true;
        }
        matches!(
            e.kind(),
            ErrorKind::StorageFull
                | ErrorKind::QuotaExceeded
                | ErrorKind::ReadOnlyFilesystem
                | ErrorKind::OutOfMemory
                | ErrorKind::Interrupted
                | ErrorKind::WouldBlock
        )
    }
}

impl From<std::io::Error> for FileAccessError {
    fn from(e: std::io::Error) -> Self {
        match e.kind() {
            std::io::ErrorKind::NotFound => Self::NotFound,
            _ => Self::Io(e),
        }
    }
}

/// A file read up to a bound.
#[derive(Debug)]
pub(crate) struct Bounded {
    /// The bytes read (at most the bound).
    pub(crate) bytes: Vec<u8>,
    /// The file's size.
    pub(crate) size: u64,
}

impl Bounded {
    /// True when the file is larger than what was read.
    pub(crate) fn truncated(&self) -> bool {
        self.size > self.bytes.len() as u64
    }
}

/// Reads at most `keep` bytes of the regular file at `path`, up to the size it has when it
/// is opened. With `refuse_above`, a file larger than that is refused rather than cut.
pub(crate) fn read_bounded(
    path: &Path,
    keep: u64,
    refuse_above: Option<u64>,
) -> Result<Bounded, FileAccessError> {
    check_kind(&std::fs::metadata(path)?)?;
    let (file, size) = open_regular(path, OpenOptions::new().read(true), 0)?;
    read_open(file, size, keep, refuse_above)
}

/// Opens the regular file at `path` for reading, without changing its access time when
/// this process may ask that (its owner): reading a run folder back (a million
/// `status.json` on a resume) then writes nothing to the disk. Another's file is read
/// with its access time updated as usual.
/// `extra_flags` are more `open` flags (Unix).
fn open_to_read_untouched(path: &Path, extra_flags: i32) -> Result<(File, u64), FileAccessError> {
    #[cfg(target_os = "linux")]
    match open_regular(
        path,
        OpenOptions::new().read(true),
        libc::O_NOATIME | extra_flags,
    ) {
        Err(FileAccessError::Io(e)) if e.raw_os_error() == Some(libc::EPERM) => {}
        opened => return opened,
    }
    open_regular(path, OpenOptions::new().read(true), extra_flags)
}

/// Reads at most `keep` bytes of `file`, open and checked regular, of `size` bytes.
pub(crate) fn read_open(
    file: File,
    size: u64,
    keep: u64,
    refuse_above: Option<u64>,
) -> Result<Bounded, FileAccessError> {
    if let Some(limit) = refuse_above.filter(|l| size > *l) {
        return Err(FileAccessError::TooLarge { size, limit });
    }
    // Read to the size the open file gave, not on to the end: no last read to see the
    // end (a system call a file, and a batch reads two files a task), and a file that
    // grows meanwhile is read as it was.
    let want = size.min(keep);
    let mut bytes = Vec::with_capacity(want as usize);
    file.take(want).read_to_end(&mut bytes)?;
    Ok(Bounded { bytes, size })
}

/// The text of the regular file at `path`, refused when larger than `limit` bytes or not
/// UTF-8: for the files of a run folder that the runner reads back (`status.json`,
/// `response.log`), where anything may have been put in their place.
/// A link in its place is refused, not followed: no file of a run folder is one, and a
/// run folder handed over from elsewhere must not make the runner read what it points at.
pub(crate) fn read_text(path: &Path, limit: u64) -> Result<String, FileAccessError> {
    utf8(read_stored(path, limit)?)
}

/// The bytes of a run folder's regular file at `path` (a screenshot copied into an
/// export), refused as [`read_text`] refuses a file: a link in its place, anything but a
/// regular file, more than `limit` bytes.
pub(crate) fn read_stored(path: &Path, limit: u64) -> Result<Bounded, FileAccessError> {
    #[cfg(unix)]
    let no_link = libc::O_NOFOLLOW;
    #[cfg(not(unix))]
    let no_link = {
        if std::fs::symlink_metadata(path)?.file_type().is_symlink() {
            return Err(FileAccessError::Link);
        }
        0
    };
    let (file, size) = open_to_read_untouched(path, no_link)?;
    read_open(file, size, limit, Some(limit))
}

/// The text of a file a user names (a config file, which may well be a link), refused as
/// [`read_text`] refuses a file but for a link, which is followed.
pub(crate) fn read_named_text(path: &Path, limit: u64) -> Result<String, FileAccessError> {
    let (file, size) = open_to_read_untouched(path, 0)?;
    utf8(read_open(file, size, limit, Some(limit))?)
}

/// The text of `file`, already open (without blocking, as [`read_text`] opens it),
/// refused as [`read_text`] refuses a file.
#[cfg(target_os = "linux")]
pub(crate) fn read_opened_text(file: File, limit: u64) -> Result<String, FileAccessError> {
    let meta = file.metadata()?;
    check_kind(&meta)?;
    utf8(read_open(file, meta.len(), limit, Some(limit))?)
}

/// What was read, as text.
fn utf8(read: Bounded) -> Result<String, FileAccessError> {
    String::from_utf8(read.bytes)
        .map_err(|e| FileAccessError::Io(std::io::Error::new(std::io::ErrorKind::InvalidData, e)))
}

/// Opens `path` without blocking (a FIFO with no writer would block an open for
/// reading) and checks, on the open file, that it is regular; gives its size too.
/// `O_NONBLOCK` stays set: it makes no difference to a regular file (clearing it cost
/// two system calls a file, and every task file is read twice).
/// `extra_flags` are more `open` flags (Unix).
fn open_regular(
    path: &Path,
    options: &mut OpenOptions,
    #[cfg_attr(not(unix), allow(unused_variables))] extra_flags: i32,
) -> Result<(File, u64), FileAccessError> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY | extra_flags);
    }
    let file = options.open(path).map_err(|e| match e.raw_os_error() {
        // A FIFO opened for writing without a reader.
        #[cfg(unix)]
        Some(libc::ENXIO) => FileAccessError::NotRegular("a FIFO or a device"),
        // A link opened with `O_NOFOLLOW`.
        #[cfg(unix)]
        Some(libc::ELOOP) => FileAccessError::Link,
        _ => FileAccessError::from(e),
    })?;
    let meta = file.metadata()?;
    check_kind(&meta)?;
    Ok((file, meta.len()))
}

/// Regular files pass; anything else is named.
pub(crate) fn check_kind(meta: &std::fs::Metadata) -> Result<(), FileAccessError> {
    let kind = meta.file_type();
    if kind.is_file() {
        return Ok(());
    }
    if kind.is_dir() {
        return Err(FileAccessError::NotRegular("a folder"));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_fifo() {
            return Err(FileAccessError::NotRegular("a FIFO"));
        }
        if kind.is_socket() {
            return Err(FileAccessError::NotRegular("a socket"));
        }
        if kind.is_char_device() || kind.is_block_device() {
            return Err(FileAccessError::NotRegular("a device"));
        }
    }
    Err(FileAccessError::NotRegular("not a file"))
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn regular_files_are_read_within_the_bound() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.txt");
        std::fs::write(&p, "hello world").unwrap();
        let b = read_bounded(&p, 5, None).unwrap();
        assert_eq!(
            (b.bytes.as_slice(), b.size, b.truncated()),
            (&b"hello"[..], 11, true)
        );
        assert!(matches!(
            read_bounded(&p, 100, Some(4)),
            Err(FileAccessError::TooLarge { size: 11, limit: 4 })
        ));
        assert!(matches!(
            read_bounded(&dir.path().join("nope"), 5, None),
            Err(FileAccessError::NotFound)
        ));
    }

    /// Reading a run folder's file back writes nothing: its access time stays as it was
    /// (this process owns it), where an ordinary read would update it, the file having
    /// changed since it was last read.
    #[test]
    #[cfg(target_os = "linux")]
    fn text_read_back_leaves_the_access_time() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("status.json");
        std::fs::write(&p, "{}").unwrap();
        let long_ago = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1 << 30);
        crate::testutil::set_accessed(&p, long_ago);
        assert_eq!(read_text(&p, 100).unwrap(), "{}");
        let accessed = std::fs::metadata(&p).unwrap().accessed().unwrap();
        assert_eq!(accessed, long_ago);
    }

    #[test]
    fn fifos_devices_and_folders_are_refused_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo on a fresh path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let e = read_bounded(&fifo, 10, None).unwrap_err();
        assert_eq!(e.to_string(), "it is a FIFO, not a regular file");
        let e = read_bounded(Path::new("/dev/zero"), 10, None).unwrap_err();
        assert_eq!(e.to_string(), "it is a device, not a regular file");
        let e = read_bounded(dir.path(), 10, None).unwrap_err();
        assert_eq!(e.to_string(), "it is a folder, not a regular file");
    }
}
