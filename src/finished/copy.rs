//! Copying a task's folder into a merged run dir: regular files and folders only, never
//! through a link, never opening what could block.

use std::path::Path;

/// Copies a folder tree: regular files and folders only. A symbolic link (a shard's
/// `output.md -> /etc/shadow`, or one a task left in its workspace) is not copied, lest a
/// later read of the merged folder follow it; nor is a FIFO, socket or device (opening it
/// could wait forever). `skipped` says what was left out, and what could not be copied
/// below the task's folder (a workspace deeper than paths may be long): the rest goes on.
pub(super) fn copy_dir(from: &Path, to: &Path, skipped: &mut Vec<String>) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        let target = to.join(entry.file_name());
        let copied = if kind.is_dir() {
            copy_dir(&entry.path(), &target, skipped).map(|()| true)
        } else if kind.is_file() {
            copy_regular(&entry.path(), &target)
        } else {
            Ok(false)
        };
        let copied = match copied {
            Ok(copied) => copied,
            Err(e) => {
                skipped.push(format!("{}: not copied ({e})", entry.path().display()));
                continue;
            }
        };
        if !copied {
            let what = if kind.is_symlink() {
                "a symbolic link"
            } else {
                "not a regular file: a FIFO, socket or device"
            };
            skipped.push(format!("{}: not copied ({what})", entry.path().display()));
        }
    }
    Ok(())
}

/// Copies the regular file at `from` to a new file at `to`, opening `from` without
/// following a link (one swapped in since it was listed); false when it is not a
/// regular file any more.
fn copy_regular(from: &Path, to: &Path) -> std::io::Result<bool> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(
        &mut options,
        libc::O_NOFOLLOW | libc::O_NONBLOCK,
    );
    let mut source = match options.open(from) {
        Ok(file) if file.metadata()?.is_file() => file,
        Ok(_) => return Ok(false),
        #[cfg(unix)]
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => return Ok(false),
        Err(e) => return Err(e),
    };
    // Whatever is there (a nested task's file copied with its parent task's folder) is
    // replaced by a new file, never written through.
    match std::fs::remove_file(to) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    let mut target = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(to)?;
    std::io::copy(&mut source, &mut target)?;
    Ok(true)
}
