//! The log every program of a desktop writes to: opened for appending (never through a
//! link), and its last lines, for a message.

use std::os::fd::OwnedFd;
use std::path::Path;

use super::ProcessError;

/// The log, opened for appending: never through a link (the runner alone writes the
/// task folder, but a link there must not send a program's output elsewhere).
pub(super) fn log_file(path: &Path) -> Result<(OwnedFd, OwnedFd), ProcessError> {
    use std::os::unix::fs::OpenOptionsExt;
    let failed = |source| ProcessError::Log {
        path: path.to_path_buf(),
        source,
    };
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
        .map_err(failed)?;
    let again = file.try_clone().map_err(failed)?;
    Ok((OwnedFd::from(file), OwnedFd::from(again)))
}

/// The last lines of the log (of its last 4 KiB, a regular file's only), for a message.
pub(in crate::desktop::linux) fn tail(path: &Path) -> String {
    use std::io::{Read, Seek, SeekFrom};
    use std::os::unix::fs::OpenOptionsExt;
    const LAST: u64 = 4096;
    let Ok(mut file) = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
    else {
        return String::new();
    };
    let Ok(meta) = file.metadata() else {
        return String::new();
    };
    if !meta.is_file() {
        return String::new();
    }
    let _ = file.seek(SeekFrom::Start(meta.len().saturating_sub(LAST)));
    let mut bytes = Vec::new();
    let _ = file.take(LAST).read_to_end(&mut bytes);
    let text = String::from_utf8_lossy(&bytes);
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let start = lines.len().saturating_sub(5);
    if lines.is_empty() {
        String::new()
    } else {
        format!(": {}", lines[start..].join(" | "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::desktop::error::DesktopError;
    use crate::tool::{Blame, Blamed};

    #[test]
    fn a_log_that_cannot_be_opened_says_why_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("no-such-folder").join("desktop.log");
        let err = log_file(&path).unwrap_err();
        let failure = DesktopError::from(err).failure();
        assert_eq!(failure.blame, Blame::Environment);
        assert_eq!(
            failure.message,
            format!(
                "cannot open {}: No such file or directory (os error 2)",
                path.display()
            )
        );
    }
}
