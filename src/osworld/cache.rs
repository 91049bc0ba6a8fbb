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

/// The file `name` of task `task_id`, as a path beneath the cache folder.
fn rel_of(task_id: &str, name: &str) -> Option<RelPath> {
    RelPath::parse(&format!("{task_id}/{name}"), false)
        .ok()
        .filter(|rel| rel.as_path().starts_with(task_id))
}

/// Whether the cache holds the file (a regular one, reached beneath the cache folder
/// without links, its task's folder included).
pub(crate) fn holds(cache: &Path, task_id: &str, name: &str) -> bool {
    let (Ok(folder), Some(rel)) = (Confined::open(cache), rel_of(task_id, name)) else {
        return false;
    };
    folder.open_file(&rel).is_ok()
}

/// Copies the files of `phase` from the user's cache (`cache/<task id>/`) into the
/// attempt's OSWorld folder `room` (`room/cache/<task id>/`), neither side's links
/// followed (a desktop's programs may have made some); says how many bytes.
fn copy_phase(
    cache: &Path,
    room: &Path,
    task_id: &str,
    files: &[CacheFile],
    phase: Phase,
) -> Result<u64, Failure> {
    let machine = |what: String| Failure::environment(what);
    let to = Confined::open(room)
        .map_err(|e| machine(format!("cannot open {}: {e}", room.display())))?;
    let folder = RelPath::parse(&format!("{COPY}/{task_id}"), false)
        .map_err(|e| Failure::new(Blame::TaskFile, format!("the task id {task_id:?}: {e}")))?;
    to.make_dirs(&folder).map_err(|e| {
        machine(format!(
            "cannot make {}: {e}",
            room.join(folder.as_path()).display()
        ))
    })?;
    let wanted: Vec<&CacheFile> = files.iter().filter(|f| f.phase == phase).collect();
    if wanted.is_empty() {
        return Ok(0);
    }
    let from = Confined::open(cache).map_err(|e| {
        machine(format!(
            "cannot open OSWorld's cache folder {}: {e}",
            cache.display()
        ))
    })?;
    let mut bytes = 0;
    for file in wanted {
        let bad = |e: String| {
            Failure::new(
                Blame::TaskFile,
                format!("{} cannot be in the cache: {e}", file.what),
            )
        };
        let rel = rel_of(task_id, &file.name).ok_or_else(|| bad(file.name.clone()))?;
        let (source, _) = from.open_file(&rel).map_err(|e| {
            machine(format!(
                "no cached file for {} ({}: {e})",
                file.what,
                place(cache, task_id, &file.name).display()
            ))
        })?;
        let target = RelPath::parse(&format!("{COPY}/{}", rel.as_path().display()), false)
            .map_err(|e| bad(e.to_string()))?;
        if let Some(parent) = target.as_path().parent()
            && let Ok(parent) = RelPath::parse(&parent.to_string_lossy(), true)
        {
            to.make_dirs(&parent)
                .map_err(|e| machine(format!("cannot make the attempt's cache: {e}")))?;
        }
        bytes += to.write_from(&target, source, MAX_FILE).map_err(|e| {
            machine(format!(
                "cannot copy {} into the attempt's cache: {e}",
                file.what
            ))
        })?;
    }
    Ok(bytes)
}

/// [`copy_phase`] on a thread that may block (a cached file may be gigabytes).
pub(crate) async fn copy_phase_apart(
    cache: &Path,
    room: &Path,
    task_id: &str,
    files: &[CacheFile],
    phase: Phase,
) -> Result<u64, Failure> {
    let (cache, room, task_id, files) = (
        cache.to_path_buf(),
        room.to_path_buf(),
        task_id.to_string(),
        files.to_vec(),
    );
    tokio::task::spawn_blocking(move || copy_phase(&cache, &room, &task_id, &files, phase))
        .await
        .map_err(|e| Failure::environment(format!("copying OSWorld's cache stopped: {e}")))?
}

/// The attempt's copy of the cache, in its OSWorld folder.
pub(crate) const COPY: &str = "cache";
