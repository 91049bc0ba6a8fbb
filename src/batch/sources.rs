//! Where a batch's task files come from: the files and folders given, and for a run dir
//! of an earlier run, the recorded plans of its tasks (a replay).

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use crate::rundir::layout::RESERVED_NAMES;
use crate::rundir::{is_run_dir, recorded_plans};
use crate::task::{FoundFile, Identified, LoadError, LoadedTasks, Task, discover, load_files_as};
use crate::tool::ToolSpec;

/// Every task file under `paths`, loaded and checked against `tools`, keeping of each
/// valid task what `keep` makes of it; bad files are kept as invalid tasks. `exclude` is
/// the results root, never searched for task files.
pub(crate) fn load_tasks_as<T: Identified + Send>(
    paths: &[PathBuf],
    exclude: Option<&Path>,
    tools: &[ToolSpec],
    keep: impl Fn(Task) -> T + Sync + Send,
) -> Result<LoadedTasks<T>, LoadError> {
    let files = find_task_files(paths, exclude)?;
    Ok(load_files_as(&files, tools, RESERVED_NAMES, keep))
}

/// The task files under `paths`, in the order given, each path's sorted by path. A file
/// found under two of the paths given (`plans plans/csv`) is one task, found first.
fn find_task_files(paths: &[PathBuf], exclude: Option<&Path>) -> Result<Vec<FoundFile>, LoadError> {
    let mut found = Vec::new();
    for root in paths {
        let meta = std::fs::metadata(root).map_err(|_| LoadError::Missing(root.clone()))?;
        if meta.is_dir() && is_run_dir(root) {
            found.extend(recorded_plans(root).map_err(|e| LoadError::walk(root, e))?);
        } else {
            found.extend(discover(root, exclude)?);
        }
    }
    let mut seen = HashSet::new();
    found.retain(|f| seen.insert(f.path.canonicalize().unwrap_or_else(|_| f.path.clone())));
    if found.is_empty() {
        return Err(LoadError::Empty(paths.to_vec()));
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_and_empty_paths_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        let err = find_task_files(&[dir.path().join("nope")], None).unwrap_err();
        assert!(err.to_string().starts_with("no such file or folder"));
        let err = find_task_files(&[dir.path().to_path_buf()], None).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("no task files (*.json) found under")
        );
    }
}
