//! File writing for results. Whole files are replaced atomically (a temporary file
//! renamed over the old one), so a crash leaves the old or the new version, never a torn
//! one; `run.json` and `selection.json` also durably (fsync of the file and of its
//! folder), the other run-level files together (staged here, put in place by
//! `durable::put_in_place`), a finished task's through the group commit of `durable`.
//! Log lines are appended with one write each, so a killed runner never leaves half a
//! line.

use std::io::Write;
use std::path::{Path, PathBuf};

pub(super) use crate::resources::count_syncs;
use crate::secrets::{ScrubbingWriter, scrub_bytes};

/// Replaces `path` with `bytes` atomically and durably.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_atomic_with(path, |out| out.write_all(bytes))
}

/// Replaces `path`, atomically and durably, with what `fill` writes: a large file is
/// written as it is made, never held whole in memory.
fn write_atomic_with(
    path: &Path,
    fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let parent = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent)?;
    let file = atomic_write_file::AtomicWriteFile::open(path)?;
    let mut out = ScrubbingWriter::new(std::io::BufWriter::new(file));
    fill(&mut out)?;
    let file = out.finish()?.into_inner().map_err(|e| e.into_error())?;
    // The file, then (on Unix) its folder.
    count_syncs(if cfg!(unix) { 2 } else { 1 });
    file.commit()
}

/// Replaces `path` with `bytes` atomically (a temporary file renamed over it) but
/// without waiting for the disk: for a file that can be rebuilt from the others (a
/// page), one whose loss loses nothing (a task's `running` status), or one a later
/// barrier makes durable (see `durable`).
pub(crate) fn write_unsynced(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    stage(path, bytes)?.commit()
}

/// Writes `bytes` to `path` as a new file, not durably, when nothing is there yet (a
/// task's first attempt): for a file of a task that is not final yet (its final status
/// is put in place only once every file before it is on disk, and a crash before that
/// runs the task again). The file appears under its name whole or not at all, however
/// the runner ends (its folder keeps it when the task's next attempt starts): on Linux
/// it is written unnamed and then linked in, one system call more than writing it in
/// place and one fewer than a rename; elsewhere, or where the file system has no unnamed
/// files, it is staged and renamed. Anything already at `path` (an earlier result's page,
/// a link, a hard link to a copy kept elsewhere, a FIFO, a read-only file) is replaced
/// atomically, never written through.
pub(crate) fn write_new_or_replace(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    #[cfg(target_os = "linux")]
    if unnamed::write_new(path, bytes)? {
        return Ok(());
    }
    write_unsynced(path, bytes)
}

#[cfg(target_os = "linux")]
mod unnamed {
    use std::ffi::CString;
    use std::io::Write;
    use std::os::fd::AsRawFd;
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::OpenOptionsExt;
    use std::path::Path;

    use crate::secrets::scrub_bytes;

    /// Writes `bytes` into an unnamed file of `path`'s folder (`O_TMPFILE`), then links
    /// it in as `path`; false when it was not: something is at `path`, or this system
    /// cannot (no unnamed files on this file system, no `/proc`). An error writing the
    /// bytes is the caller's.
    pub(super) fn write_new(path: &Path, bytes: &[u8]) -> std::io::Result<bool> {
        let folder = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        let Ok(mut file) = std::fs::OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_TMPFILE)
            .open(folder)
        else {
            return Ok(false);
        };
        file.write_all(&scrub_bytes(bytes))?;
        let (Ok(from), Ok(to)) = (
            CString::new(format!("/proc/self/fd/{}", file.as_raw_fd())),
            CString::new(path.as_os_str().as_bytes()),
        ) else {
            return Ok(false);
        };
        // SAFETY: both are NUL-terminated paths that live across the call.
        let linked = unsafe {
            libc::linkat(
                libc::AT_FDCWD,
                from.as_ptr(),
                libc::AT_FDCWD,
                to.as_ptr(),
                libc::AT_SYMLINK_FOLLOW,
            )
        };
        Ok(linked == 0)
    }
}

/// Writes what `fill` writes, as it is made, to a temporary file beside `path` (its
/// folder made if need be), not yet in its place: for files put in place together by
/// [`super::durable::put_in_place`].
pub(crate) fn stage_with(
    path: &Path,
    fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> std::io::Result<Staged> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)?;
    }
    let (staged, file) = Staged::create(path)?;
    let mut out = ScrubbingWriter::new(std::io::BufWriter::new(file));
    fill(&mut out)?;
    out.finish()?;
    Ok(staged)
}

/// `value` as pretty JSON with a final newline, staged for `path` (see [`stage_with`]).
pub(crate) fn stage_json(path: &Path, value: &impl serde::Serialize) -> std::io::Result<Staged> {
    stage_with(path, |out| fill_json(out, value))
}

/// A file's content written to a temporary file beside it, not yet in its place;
/// removed if dropped before [`Staged::commit`].
pub(crate) struct Staged {
    temp: PathBuf,
    path: PathBuf,
    committed: bool,
}

/// Writes `bytes` for `path` to a temporary file beside it (`.NAME.xxxxxxxx`); the
/// folder must exist.
pub(crate) fn stage(path: &Path, bytes: &[u8]) -> std::io::Result<Staged> {
    let (staged, mut file) = Staged::create(path)?;
    file.write_all(&scrub_bytes(bytes))?;
    Ok(staged)
}

impl Staged {
    /// A new temporary file beside `path` (`.NAME.xxxxxxxx`), open for writing. Anything
    /// already at that name (a link planted there) is refused, never written through nor
    /// removed.
    fn create(path: &Path) -> std::io::Result<(Self, std::fs::File)> {
        let name = path
            .file_name()
            .ok_or_else(|| std::io::Error::other("no file name"))?
            .to_string_lossy();
        let temp = path.with_file_name(format!(".{name}.{:08x}", fastrand::u32(..)));
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temp)?;
        let staged = Staged {
            temp,
            path: path.to_path_buf(),
            committed: false,
        };
        Ok((staged, file))
    }

    /// The temporary file.
    pub(crate) fn temp(&self) -> &Path {
        &self.temp
    }

    /// Where it goes.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Puts the file in its place.
    pub(crate) fn commit(mut self) -> std::io::Result<()> {
        std::fs::rename(&self.temp, &self.path)?;
        self.committed = true;
        Ok(())
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        if !self.committed {
            let _ = std::fs::remove_file(&self.temp);
        }
    }
}

/// `value` as pretty JSON with a final newline.
pub(crate) fn json_bytes(value: &impl serde::Serialize) -> std::io::Result<Vec<u8>> {
    let mut bytes = serde_json::to_vec_pretty(value).map_err(std::io::Error::other)?;
    bytes.push(b'\n');
    Ok(bytes)
}

/// Replaces `path` with `value` as pretty JSON, atomically (written as it is made).
pub(crate) fn write_json(path: &Path, value: &impl serde::Serialize) -> std::io::Result<()> {
    write_atomic_with(path, |out| fill_json(out, value))
}

/// Writes `value` to `out` as pretty JSON with a final newline.
fn fill_json(out: &mut dyn Write, value: &impl serde::Serialize) -> std::io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, value).map_err(std::io::Error::other)?;
    out.write_all(b"\n")
}

/// Removes temporary files that a write killed half-way left in `dir` (`.NAME.xxxxxx`
/// next to a result file NAME). Returns how many were removed.
pub(crate) fn remove_stale_temps(dir: &Path, names: &[&str]) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    let mut removed = 0;
    for entry in entries.flatten() {
        if is_stale_temp(&entry.file_name().to_string_lossy(), names) && remove_stale_temp(&entry) {
            removed += 1;
        }
    }
    removed
}

/// True when `file` is named as a temporary file of one of `names` (`.NAME.xxxxxx`).
pub(crate) fn is_stale_temp(file: &str, names: &[&str]) -> bool {
    names.iter().any(|n| {
        file.strip_prefix('.')
            .and_then(|rest| rest.strip_prefix(n))
            .and_then(|rest| rest.strip_prefix('.'))
            .is_some_and(|suffix| !suffix.is_empty())
    })
}

/// Removes `entry`, a stale temporary file found in a folder, if it is a file; says
/// whether it did.
pub(crate) fn remove_stale_temp(entry: &std::fs::DirEntry) -> bool {
    entry.file_type().is_ok_and(|t| t.is_file()) && std::fs::remove_file(entry.path()).is_ok()
}

/// Appends one line (a newline is added) in a single write.
pub(crate) fn append_line(path: &Path, line: &str) -> std::io::Result<()> {
    append_lines(path, &[line])
}

/// Appends lines (a newline added to each) in a single write.
pub(crate) fn append_lines<S: AsRef<str>>(path: &Path, lines: &[S]) -> std::io::Result<()> {
    let mut buf = Vec::new();
    for line in lines {
        buf.extend_from_slice(&scrub_bytes(line.as_ref().as_bytes()));
        buf.push(b'\n');
    }
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?;
    file.write_all(&buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_and_appends() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("sub/status.json");
        write_json(&p, &serde_json::json!({"a": 1})).unwrap();
        write_json(&p, &serde_json::json!({"a": 2})).unwrap();
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
        assert_eq!(v["a"], 2);
        let log = dir.path().join("x.log");
        append_line(&log, "one").unwrap();
        append_line(&log, "two").unwrap();
        assert_eq!(std::fs::read_to_string(log).unwrap(), "one\ntwo\n");
        // No temp files left behind.
        assert_eq!(
            std::fs::read_dir(dir.path().join("sub")).unwrap().count(),
            1
        );
    }

    /// A new page is written as it is; whatever is already there (a page, a link, a
    /// hard link, a read-only file) is replaced, never written through.
    #[cfg(unix)]
    #[test]
    fn a_new_file_is_written_and_anything_there_is_replaced_not_written_through() {
        let dir = tempfile::tempdir().unwrap();
        let page = dir.path().join("task.html");
        write_new_or_replace(&page, b"a longer first version").unwrap();
        write_new_or_replace(&page, b"second").unwrap();
        assert_eq!(std::fs::read_to_string(&page).unwrap(), "second");
        let elsewhere = dir.path().join("elsewhere");
        std::fs::write(&elsewhere, "kept").unwrap();
        let linked = dir.path().join("output.md");
        std::os::unix::fs::symlink(&elsewhere, &linked).unwrap();
        write_new_or_replace(&linked, b"page").unwrap();
        assert!(!std::fs::symlink_metadata(&linked).unwrap().is_symlink());
        assert_eq!(std::fs::read_to_string(&linked).unwrap(), "page");
        let hard = dir.path().join("plan.json");
        std::fs::hard_link(&elsewhere, &hard).unwrap();
        write_new_or_replace(&hard, b"plan").unwrap();
        assert_eq!(std::fs::read_to_string(&hard).unwrap(), "plan");
        assert_eq!(std::fs::read_to_string(&elsewhere).unwrap(), "kept");
        // Nothing else was left in the folder (no temporary file, named or not).
        let mut names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        assert_eq!(names, ["elsewhere", "output.md", "plan.json", "task.html"]);
    }

    #[test]
    fn stale_temps_are_removed_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        for name in [
            ".status.json.Ab12Cd",
            ".output.md.tmp123",
            ".status.json",
            "status.json",
            ".hidden",
        ] {
            std::fs::write(dir.path().join(name), "x").unwrap();
        }
        assert_eq!(
            remove_stale_temps(dir.path(), &["status.json", "output.md"]),
            2
        );
        assert_eq!(
            crate::testutil::names_in(dir.path()),
            [".hidden", ".status.json", "status.json"]
        );
    }
}
