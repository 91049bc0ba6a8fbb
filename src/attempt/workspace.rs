//! Preparing a task's workspace for an attempt: the previous attempt's workspace is
//! kept under `attempts/N/`, a fresh one is made, the task's `files` are written, the
//! task's object is copied in (and kept beside its `plan.json`), and the task's private
//! temporary folder is emptied. What the task file names is written and read through
//! `confined` (beneath its folder, no links, the task's rights); a failure there is the
//! task file's, not the machine's.

use std::collections::BTreeMap;
use std::path::Path;

use crate::confined::Confined;
use crate::regular_file::FileAccessError;
use crate::relpath::RelPath;
use crate::rundir::layout::FILES;
use crate::task::{MAX_OBJECT, Task};

/// Why a workspace could not be made ready, and whose failure that is.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub(super) enum PrepareError {
    /// The task file asks for what cannot be done (a `files` key that cannot be written,
    /// an object that cannot be read): a retry would fail the same way.
    #[error("{0}")]
    TaskFile(String),
    /// The machine could not do it (a folder that cannot be made, a full disk): a retry
    /// may succeed.
    #[error("{0}")]
    Machine(String),
}

impl PrepareError {
    /// The task file's failure, or the machine's when the system says so.
    fn of_task_file(e: &FileAccessError, what: String) -> Self {
        if e.is_machines() {
            Self::Machine(what)
        } else {
            Self::TaskFile(what)
        }
    }
}

/// Makes `workspace` fresh for the next attempt, and `tmp` an empty folder. When
/// earlier attempts ran, the old workspace moves to `archive/<previous_attempts>/workspace`
/// so it can be inspected. (One job on a preparer thread for all of it: a file operation
/// each would cost a thread hand-off.) The error says which folder could not be made,
/// or which of the task's files could not be written, and why.
pub(super) async fn prepare(
    workspace: &Path,
    tmp: &Path,
    archive: &Path,
    previous_attempts: u32,
    files: &BTreeMap<String, String>,
) -> Result<(), PrepareError> {
    let (workspace, tmp, archive, files) = (
        workspace.to_owned(),
        tmp.to_owned(),
        archive.to_owned(),
        files.clone(),
    );
    let made = super::preparers::run(move || {
        fresh_workspace(&workspace, &archive, previous_attempts).map_err(|e| {
            PrepareError::Machine(format!(
                "cannot prepare the workspace {}: {e}",
                workspace.display()
            ))
        })?;
        write_files(&workspace, &files)?;
        fresh_dir(&tmp).map_err(|e| {
            PrepareError::Machine(format!(
                "cannot prepare the temporary folder {}: {e}",
                tmp.display()
            ))
        })
    })
    .await;
    made.unwrap_or_else(|e| {
        Err(PrepareError::Machine(format!(
            "cannot prepare the task's folders: {e}"
        )))
    })
}

fn fresh_workspace(
    workspace: &Path,
    archive: &Path,
    previous_attempts: u32,
) -> std::io::Result<()> {
    if !create_new_dir(workspace)? {
        if previous_attempts > 0 {
            let kept = archive.join(previous_attempts.to_string());
            std::fs::create_dir_all(&kept)?;
            let target = kept.join("workspace");
            if std::fs::exists(&target)? {
                std::fs::remove_dir_all(&target)?;
            }
            std::fs::rename(workspace, &target)?;
        } else {
            std::fs::remove_dir_all(workspace)?;
        }
        std::fs::create_dir(workspace)?;
    }
    Ok(())
}

/// Writes the task's `files` into its fresh workspace.
fn write_files(workspace: &Path, files: &BTreeMap<String, String>) -> Result<(), PrepareError> {
    if files.is_empty() {
        return Ok(());
    }
    let ws = Confined::open(workspace).map_err(|e| {
        PrepareError::Machine(format!(
            "cannot open the workspace {}: {e}",
            workspace.display()
        ))
    })?;
    for (key, content) in files {
        let written = RelPath::parse(key, false)
            .map_err(FileAccessError::Path)
            .and_then(|rel| ws.write(&rel, content.as_bytes(), false));
        if let Err(e) = written {
            let what = format!(
                "the task's `files` entry {:?} cannot be written: {e}",
                crate::text::shorten(key, 80)
            );
            return Err(PrepareError::of_task_file(&e, what));
        }
    }
    Ok(())
}

/// An empty folder at `dir` (whatever was there is removed).
fn fresh_dir(dir: &Path) -> std::io::Result<()> {
    if !create_new_dir(dir)? {
        std::fs::remove_dir_all(dir)?;
        std::fs::create_dir(dir)?;
    }
    Ok(())
}

/// Makes the folder `dir` (and its parents); false when something was there already,
/// left as it was. (Trying first costs one system call for a new folder, the usual
/// case, where looking first costs two.)
fn create_new_dir(dir: &Path) -> std::io::Result<bool> {
    match std::fs::create_dir(dir) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(false),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if let Some(parent) = dir.parent() {
                std::fs::create_dir_all(parent)?;
            }
            std::fs::create_dir(dir).map(|()| true)
        }
        Err(e) => Err(e),
    }
}

/// Copies the task's object file (found when the task loaded, see `task::object`) into
/// the workspace under its own name, keeping a copy in the task's folder (`files/NAME`,
/// which its `plan.json` names); returns where from.
pub(super) async fn copy_object(
    task: &Task,
    task_dir: &Path,
    workspace: &Path,
) -> Result<Option<std::path::PathBuf>, PrepareError> {
    let Some(object) = task.object_file.clone() else {
        return Ok(None);
    };
    let (task_dir, workspace) = (task_dir.to_owned(), workspace.to_owned());
    let from = object.path();
    let copied = super::preparers::run(move || copy_now(&object, &task_dir, &workspace)).await;
    match copied {
        Ok(Ok(())) => Ok(Some(from)),
        Ok(Err(e)) => Err(e),
        Err(e) => Err(PrepareError::Machine(format!(
            "cannot copy the task's object {}: {e}",
            from.display()
        ))),
    }
}

fn copy_now(
    object: &crate::task::ObjectFile,
    task_dir: &Path,
    workspace: &Path,
) -> Result<(), PrepareError> {
    let name = RelPath::root().join_name(object.name());
    let kept = RelPath::root()
        .join_name(FILES.as_ref())
        .join_name(object.name());
    let (source, _) = object.open().map_err(|e| {
        let what = format!(
            "cannot read the task's object {}: {e}",
            object.path().display()
        );
        match e {
            FileAccessError::Io(_) if e.is_machines() => PrepareError::Machine(what),
            _ => PrepareError::TaskFile(what),
        }
    })?;
    let machine = |e: FileAccessError| {
        PrepareError::Machine(format!(
            "cannot copy the task's object {} into the task's folder: {e}",
            object.path().display()
        ))
    };
    let task_folder = Confined::open(task_dir).map_err(machine)?;
    // A replay of this very folder gives the kept copy as its own object: kept as it is
    // (writing it would empty the source first).
    let kept_already = task_folder
        .open_file(&kept)
        .is_ok_and(|(copy, _)| same_file(&source, &copy));
    let written = if kept_already {
        Ok(0)
    } else {
        task_folder.write_from(&kept, source, MAX_OBJECT)
    };
    match written {
        Err(e @ FileAccessError::TooLarge { .. }) => {
            return Err(PrepareError::TaskFile(format!(
                "the task's object {} is too large: {e}",
                object.path().display()
            )));
        }
        other => other.map_err(machine)?,
    };
    let (copy, _) = task_folder.open_file(&kept).map_err(machine)?;
    Confined::open(workspace)
        .and_then(|ws| ws.write_from(&name, copy, MAX_OBJECT))
        .map_err(machine)?;
    Ok(())
}

/// Whether two open files are the same file.
fn same_file(a: &std::fs::File, b: &std::fs::File) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        match (a.metadata(), b.metadata()) {
            (Ok(x), Ok(y)) => x.dev() == y.dev() && x.ino() == y.ino(),
            _ => false,
        }
    }
    #[cfg(not(unix))]
    {
        let _ = (a, b);
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn keeps_the_previous_workspace_and_writes_files() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("workspace");
        let archive = dir.path().join("attempts");
        let files = BTreeMap::from([("data/in.csv".to_string(), "a,1\n".to_string())]);
        let tmp = dir.path().join("tmp");
        prepare(&ws, &tmp, &archive, 0, &files).await.unwrap();
        assert!(tmp.is_dir());
        assert_eq!(
            std::fs::read_to_string(ws.join("data/in.csv")).unwrap(),
            "a,1\n"
        );
        std::fs::write(ws.join("out.txt"), "first").unwrap();
        std::fs::write(tmp.join("left"), "x").unwrap();
        prepare(&ws, &tmp, &archive, 1, &files).await.unwrap();
        assert_eq!(std::fs::read_dir(&tmp).unwrap().count(), 0);
        assert!(!ws.join("out.txt").exists());
        assert_eq!(
            std::fs::read_to_string(archive.join("1/workspace/out.txt")).unwrap(),
            "first"
        );
    }

    /// `files` that cannot all be written (a file where another needs a folder, a name
    /// too long, a NUL) are the task file's fault, not the machine's.
    #[tokio::test]
    async fn files_that_cannot_be_written_are_the_task_files_fault() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("workspace");
        let (tmp, archive) = (dir.path().join("tmp"), dir.path().join("attempts"));
        for (files, want) in [
            (
                vec![("a", "x"), ("a/b", "y")],
                "the task's `files` entry \"a/b\" cannot be written: a name on its path is not a folder",
            ),
            (
                vec![("n\0ul", "x")],
                "the task's `files` entry \"n\\0ul\" cannot be written: `n\\0ul` holds a NUL character, which no file name can",
            ),
        ] {
            let files = files
                .into_iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            let e = prepare(&ws, &tmp, &archive, 0, &files).await.unwrap_err();
            assert_eq!(e, PrepareError::TaskFile(want.to_string()));
        }
    }
}
