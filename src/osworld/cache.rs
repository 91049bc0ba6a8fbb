//! OSWorld's cache, as each attempt gets it: the user's cache folder (`<task id>/<file>`,
//! OSWorld's layout) is only read; an attempt has its own copy on its desktop, with the
//! files of one phase at a time (the setup's inputs before the agent starts, the
//! evaluator's gold files once it has finished, so that none is in reach while it
//! works). OSWorld's getters write what they fetch into the same folder: the attempt's
//! own copy keeps concurrent runs of one task apart.

use std::path::{Path, PathBuf};

use crate::confined::Confined;
use crate::relpath::RelPath;
use crate::task::osworld::{CacheFile, Phase};
use crate::tool::{Blame, Failure};

/// The largest file copied from the cache (OSWorld's largest inputs are videos).
const MAX_FILE: u64 = 4 << 30;

/// Where a task's file of the cache is: `cache/<task id>/<name>`.
pub(crate) fn place(cache: &Path, task_id: &str, name: &str) -> PathBuf {
    cache.join(task_id).join(name)
}

/// Whether the cache holds the file (a regular one, reached without links).
pub(crate) fn holds(cache: &Path, task_id: &str, name: &str) -> bool {
    let Ok(folder) = Confined::open(&cache.join(task_id)) else {
        return false;
    };
    let Ok(rel) = RelPath::parse(name, false) else {
        return false;
    };
    folder.open_file(&rel).is_ok()
}

/// Copies the files of `phase` from the user's cache (`cache/<task id>/`) into the
/// attempt's copy (`copy/<task id>/`); says how many bytes.
pub(crate) fn copy_phase(
    cache: &Path,
    copy: &Path,
    task_id: &str,
    files: &[CacheFile],
    phase: Phase,
) -> Result<u64, Failure> {
    let wanted: Vec<&CacheFile> = files.iter().filter(|f| f.phase == phase).collect();
    let target = copy.join(task_id);
    std::fs::create_dir_all(&target)
        .map_err(|e| Failure::environment(format!("cannot make {}: {e}", target.display())))?;
    if wanted.is_empty() {
        return Ok(0);
    }
    let machine = |what: String| Failure::environment(what);
    let from = Confined::open(&cache.join(task_id)).map_err(|e| {
        machine(format!(
            "cannot open OSWorld's cache folder {}: {e}",
            cache.join(task_id).display()
        ))
    })?;
    let to = Confined::open(&target)
        .map_err(|e| machine(format!("cannot open {}: {e}", target.display())))?;
    let mut bytes = 0;
    for file in wanted {
        let rel = RelPath::parse(&file.name, false).map_err(|e| {
            Failure::new(
                Blame::TaskFile,
                format!("{} cannot be in the cache: {e}", file.what),
            )
        })?;
        let (source, _) = from.open_file(&rel).map_err(|e| {
            machine(format!(
                "no cached file for {} ({}: {e})",
                file.what,
                place(cache, task_id, &file.name).display()
            ))
        })?;
        bytes += to.write_from(&rel, source, MAX_FILE).map_err(|e| {
            machine(format!(
                "cannot copy {} into the attempt's cache: {e}",
                file.what
            ))
        })?;
    }
    Ok(bytes)
}
