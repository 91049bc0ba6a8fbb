//! Where a batch's task files come from: the files and folders given, and for a run dir
//! of an earlier run, the recorded plans of its tasks (a replay).

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use crate::rundir::layout::RESERVED_NAMES;
use crate::rundir::{is_run_dir, recorded_plans};
use std::sync::Arc;

use crate::task::{
    FilePlace, FoundFiles, Identified, LoadError, LoadedTasks, Task, discover, load_files_as,
};
use crate::tool::ToolSpec;

/// Every task file under `paths`, loaded and checked against `tools`, keeping of each
/// valid task what `keep` makes of it; bad files are kept as invalid tasks. `exclude` is
/// the results root, never searched for task files.
pub(crate) fn load_tasks_as<T: Identified + Send>(
    paths: &[PathBuf],
    exclude: Option<&Path>,
    tools: Arc<[ToolSpec]>,
    keep: impl Fn(Task, FilePlace) -> T + Sync + Send,
) -> Result<LoadedTasks<T>, LoadError> {
    let files = find_task_files(paths, exclude)?;
    Ok(load_files_as(files, tools, RESERVED_NAMES, keep))
}

/// The task files under `paths`, in the order given, each path's sorted by path. A file
/// found under two of the paths given (`plans plans/csv`) is one task, found first.
fn find_task_files(paths: &[PathBuf], exclude: Option<&Path>) -> Result<FoundFiles, LoadError> {
    let mut found = FoundFiles::default();
    for root in paths {
        let meta = std::fs::metadata(root).map_err(|_| LoadError::Missing(root.clone()))?;
        let here = if meta.is_dir() && is_run_dir(root) {
            recorded_plans(root).map_err(|e| LoadError::walk(root, e))?
        } else {
            discover(root, exclude)?
        };
        // The first path's files are the list itself (a copy of a large batch's list was
        // the loader's peak).
        found.append(here);
    }
    found.shrink_to_fit();
    // One folder's walk finds each path once: only a link can lead to a file found
    // already (resolving every path costs a system call per path component).
    if paths.len() > 1 || found.any_linked() {
        let mut seen = HashSet::new();
        found.retain(|path, _| seen.insert(path.canonicalize().unwrap_or_else(|_| path.into())));
    }
    if found.is_empty() {
        return Err(LoadError::Empty(paths.to_vec()));
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(found: &FoundFiles) -> Vec<String> {
        found.relatives()
    }

    #[test]
    fn a_file_found_twice_is_one_task_found_first() {
        let dir = tempfile::tempdir().unwrap();
        let sub = dir.path().join("csv");
        std::fs::create_dir(&sub).unwrap();
        std::fs::write(dir.path().join("a.json"), "{}").unwrap();
        std::fs::write(sub.join("b.json"), "{}").unwrap();
        let found = find_task_files(&[dir.path().to_path_buf(), sub.clone()], None).unwrap();
        assert_eq!(ids(&found), ["a.json", "csv/b.json"]);
        // Within one folder only a link can lead to a file found already.
        let found = find_task_files(&[dir.path().to_path_buf()], None).unwrap();
        assert_eq!(ids(&found), ["a.json", "csv/b.json"]);
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(dir.path().join("a.json"), sub.join("alias.json")).unwrap();
            let found = find_task_files(&[dir.path().to_path_buf()], None).unwrap();
            assert_eq!(ids(&found), ["a.json", "csv/b.json"]);
        }
    }

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
