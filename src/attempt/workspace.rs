//! Preparing a task's workspace for an attempt: the previous attempt's workspace is
//! kept under `attempts/N/`, a fresh one is made, the task's `files` are written, and the
//! task's private temporary folder is emptied.

use std::collections::BTreeMap;
use std::path::Path;

/// Makes `workspace` fresh for the next attempt, and `tmp` an empty folder. When
/// earlier attempts ran, the old workspace moves to `archive/<previous_attempts>/workspace`
/// so it can be inspected. (One job on a preparer thread for all of it: a file operation
/// each would cost a thread hand-off.) The error says which folder could not be made,
/// and why.
pub(super) async fn prepare(
    workspace: &Path,
    tmp: &Path,
    archive: &Path,
    previous_attempts: u32,
    files: &BTreeMap<String, String>,
) -> Result<(), String> {
    let (workspace, tmp, archive, files) = (
        workspace.to_owned(),
        tmp.to_owned(),
        archive.to_owned(),
        files.clone(),
    );
    let made = super::preparers::run(move || {
        prepare_now(&workspace, &archive, previous_attempts, &files)
            .map_err(|e| format!("cannot prepare the workspace {}: {e}", workspace.display()))?;
        fresh_dir(&tmp)
            .map_err(|e| format!("cannot prepare the temporary folder {}: {e}", tmp.display()))
    })
    .await;
    made.unwrap_or_else(|e| Err(format!("cannot prepare the task's folders: {e}")))
}

fn prepare_now(
    workspace: &Path,
    archive: &Path,
    previous_attempts: u32,
    files: &BTreeMap<String, String>,
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
    for (relative, content) in files {
        // Validated at load time; normalising again keeps this function safe on its own.
        let relative = crate::relpath::normalize_relative(relative, false)
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e.to_string()))?;
        let path = workspace.join(relative);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(&path, content)?;
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
/// the workspace under its own name; returns where from.
pub(super) async fn copy_object(
    task: &crate::task::Task,
    workspace: &Path,
) -> Result<Option<std::path::PathBuf>, String> {
    let Some(from) = &task.object_file else {
        return Ok(None);
    };
    let name = from.file_name().unwrap_or(from.as_os_str());
    let to = workspace.join(name);
    let (source, target) = (from.clone(), to.clone());
    let copied = tokio::task::spawn_blocking(move || {
        let file = crate::regular_file::read_bounded(&source, MAX_OBJECT, Some(MAX_OBJECT))
            .map_err(|e| e.to_string())?;
        std::fs::write(&target, file.bytes).map_err(|e| e.to_string())
    })
    .await
    .map_err(|e| e.to_string())
    .and_then(|r| r);
    match copied {
        Ok(()) => Ok(Some(from.clone())),
        Err(e) => Err(format!(
            "cannot copy the task's object {} into the workspace: {e}",
            from.display()
        )),
    }
}

/// The largest object file copied into a workspace.
const MAX_OBJECT: u64 = 1 << 30;

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
}
