//! One runner per run dir. Two runners on one run folder (a resubmitted job beside an
//! orphaned one, two terminals) would interleave and break each other's tasks, so a run
//! holds an exclusive lock on a file beside its run dir for as long as it runs. The
//! lock is the operating system's: it goes away with the process however that ends, so
//! a lock left by a dead runner never blocks.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, Write};
use std::path::PathBuf;

use super::error::RunDirError;
use super::layout::RunLayout;

/// The lock of a run dir, held until dropped.
#[derive(Debug)]
pub(crate) struct RunLock {
    /// The open lock file; closing it releases the lock.
    _file: File,
}

impl RunLock {
    /// Takes the lock of the run dir at `layout`, or says which process holds it.
    pub(crate) fn acquire(layout: &RunLayout) -> Result<Self, RunDirError> {
        let path = layout.lock_file();
        let io = |source| RunDirError::Io {
            path: path.display().to_string(),
            source,
        };
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(io)?;
        }
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(io)?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                return Err(RunDirError::Locked {
                    dir: layout.root().to_path_buf(),
                    holder: holder(&mut file),
                });
            }
            Err(TryLockError::Error(e)) => return Err(io(e)),
        }
        let pid = std::process::id().to_string();
        file.set_len(0)
            .and_then(|()| file.rewind())
            .and_then(|()| file.write_all(pid.as_bytes()))
            .map_err(io)?;
        Ok(Self { _file: file })
    }
}

impl RunLock {
    /// For reading a run dir (`merge`, `compare`): refuses one a runner works in, and
    /// keeps a runner from starting in it until dropped. Nothing is written: a run dir
    /// with no lock file, or one that cannot be opened (a read-only copy), has no
    /// runner to wait for.
    pub(crate) fn reading(layout: &RunLayout) -> Result<Option<Self>, RunDirError> {
        let Ok(mut file) = File::open(layout.lock_file()) else {
            return Ok(None);
        };
        match file.try_lock_shared() {
            Ok(()) => Ok(Some(Self { _file: file })),
            Err(TryLockError::WouldBlock) => Err(RunDirError::Locked {
                dir: layout.root().to_path_buf(),
                holder: holder(&mut file),
            }),
            Err(TryLockError::Error(_)) => Ok(None),
        }
    }
}

/// Who holds the lock, as its lock file says.
fn holder(file: &mut File) -> String {
    let mut text = String::new();
    let _ = file.read_to_string(&mut text);
    match text.trim().parse::<u32>() {
        Ok(pid) => format!("process {pid}"),
        Err(_) => "another process".to_string(),
    }
}

impl RunLayout {
    /// The lock file of the run dir: a hidden sibling, so that it stays put when
    /// `--fresh` moves the run dir aside.
    pub(crate) fn lock_file(&self) -> PathBuf {
        let parent = self
            .root()
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(std::path::Path::new("."));
        parent.join(format!(".{}.lock", self.name()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_holder_is_refused_and_a_released_lock_is_free() {
        let dir = tempfile::tempdir().unwrap();
        let layout = RunLayout::new(dir.path().join("run"));
        let first = RunLock::acquire(&layout).unwrap();
        let e = RunLock::acquire(&layout).unwrap_err().to_string();
        assert!(
            e.contains(&format!("process {}", std::process::id())),
            "{e}"
        );
        drop(first);
        RunLock::acquire(&layout).unwrap();
    }
}
