//! File writing for results. Whole files are replaced atomically and durably (temp
//! file, fsync, rename, fsync of the folder), so a crash or a power cut leaves the old
//! or the new version, never a torn one. Log lines are appended with one write each, so
//! a killed runner never leaves half a line.

use std::io::Write;
use std::path::Path;

use crate::secrets::scrub_bytes;

/// Replaces `path` with `bytes` atomically and durably.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let parent = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent)?;
    let mut file = atomic_write_file::AtomicWriteFile::open(path)?;
    file.write_all(&scrub_bytes(bytes))?;
    file.commit()
}

/// Replaces `path`, a file that can be rebuilt from the others (a page), with `bytes`:
/// atomically (a temporary file renamed over it) but without waiting for the disk, so
/// it costs a task no fsync. After a power cut it may be missing; `report` rebuilds it.
pub(crate) fn write_derived(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let name = path
        .file_name()
        .ok_or_else(|| std::io::Error::other("no file name"))?
        .to_string_lossy();
    let temp = path.with_file_name(format!(".{name}.{:08x}", fastrand::u32(..)));
    let written =
        std::fs::write(&temp, scrub_bytes(bytes)).and_then(|()| std::fs::rename(&temp, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    written
}

/// Replaces `path` with `value` as pretty JSON, atomically.
pub(crate) fn write_json(path: &Path, value: &impl serde::Serialize) -> std::io::Result<()> {
    let mut bytes = serde_json::to_vec_pretty(value).map_err(std::io::Error::other)?;
    bytes.push(b'\n');
    write_atomic(path, &bytes)
}

/// Removes temporary files that a write killed half-way left in `dir` (`.NAME.xxxxxx`
/// next to a result file NAME). Returns how many were removed.
pub(crate) fn remove_stale_temps(dir: &Path, names: &[&str]) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    let mut removed = 0;
    for entry in entries.flatten() {
        let file = entry.file_name().to_string_lossy().into_owned();
        let stale = names
            .iter()
            .any(|n| file.starts_with(&format!(".{n}.")) && file.len() > n.len() + 2);
        if stale
            && entry.file_type().is_ok_and(|t| t.is_file())
            && std::fs::remove_file(entry.path()).is_ok()
        {
            removed += 1;
        }
    }
    removed
}

/// Appends one line (a newline is added) in a single write.
pub(crate) fn append_line(path: &Path, line: &str) -> std::io::Result<()> {
    let line = scrub_bytes(line.as_bytes());
    let mut buf = Vec::with_capacity(line.len() + 1);
    buf.extend_from_slice(&line);
    buf.push(b'\n');
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
        let mut left: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(left, [".hidden", ".status.json", "status.json"]);
    }
}
