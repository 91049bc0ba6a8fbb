//! File writing for results: whole files are replaced atomically (temp file, fsync,
//! rename, fsync of the folder), so a crash leaves the old or the new version, never a
//! torn one; log lines are appended with one write each, so a killed runner never
//! leaves half a line behind.

use std::io::Write;
use std::path::Path;

/// Replaces `path` with `bytes` atomically and durably.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let mut file = atomic_write_file::AtomicWriteFile::open(path)?;
    file.write_all(bytes)?;
    file.commit()
}

/// Replaces `path` with `value` as pretty JSON, atomically.
pub fn write_json(path: &Path, value: &impl serde::Serialize) -> std::io::Result<()> {
    let mut bytes = serde_json::to_vec_pretty(value).map_err(std::io::Error::other)?;
    bytes.push(b'\n');
    write_atomic(path, &bytes)
}

/// Appends one line (a newline is added) in a single write.
pub fn append_line(path: &Path, line: &str) -> std::io::Result<()> {
    let mut buf = Vec::with_capacity(line.len() + 1);
    buf.extend_from_slice(line.as_bytes());
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
}
