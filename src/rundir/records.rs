//! Reading a run dir back: whether a folder is a run dir, its `run.json`, and every task's stored record or recorded plan. Searches never
//! enter a task's workspace, temporary folder or earlier attempts.

use std::path::Path;
use std::sync::atomic::AtomicBool;

use super::layout::{PLAN_JSON, RUN_JSON, RunLayout, STATUS_JSON, TASK_SUBFOLDERS, TaskDir};
use super::selection::{Selection, read_selection};
use super::stored::{STORED_FILE_LIMIT, Unreadable, read_run_json};
use crate::record::TaskRecord;
use crate::regular_file::read_text;
use crate::task::{FoundFiles, TaskId};

/// A task record found in a run dir, with its folder.
#[derive(Clone, Debug)]
pub(crate) struct StoredTask {
    /// The record.
    pub(crate) record: TaskRecord,
    /// The task's results folder.
    pub(crate) dir: TaskDir,
}

/// True when `dir` is a ufo-batch run dir.
pub(crate) fn is_run_dir(dir: &Path) -> bool {
    read_run_json(dir).is_some()
}

/// The stored record of a task, if it has a readable one.
pub(crate) fn previous_record(layout: &RunLayout, id: &TaskId) -> Option<TaskRecord> {
    let text = read_text(&layout.task(id).status(), STORED_FILE_LIMIT).ok()?;
    parse_record(&text, id)
}

/// A task's stored record read with no link followed on the way from the run dir to
/// it: what is found (`None`: no readable record), or `Err(())` when a link is on the
/// way or this system cannot tell in one step (then [`RunLayout::unlink_task_path`]
/// and [`previous_record`] decide, a step at a time).
pub(crate) fn record_beneath(root: &RunRoot, id: &TaskId) -> Result<Option<TaskRecord>, ()> {
    #[cfg(target_os = "linux")]
    {
        let path =
            std::ffi::CString::new(format!("{}/{STATUS_JSON}", id.as_str())).map_err(|_| ())?;
        // The access time is left as it was when this process may ask that (the
        // record is its own): a resume then writes nothing for the records it reads.
        // Once refused for one record (another's), it is not asked again.
        let untouched = root.untouched.load(std::sync::atomic::Ordering::Relaxed);
        let mut fd = openat2_beneath(
            &root.file,
            &path,
            if untouched { libc::O_NOATIME } else { 0 },
        );
        if untouched
            && fd < 0
            && std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
        {
            root.untouched
                .store(false, std::sync::atomic::Ordering::Relaxed);
            fd = openat2_beneath(&root.file, &path, 0);
        }
        if fd < 0 {
            return match std::io::Error::last_os_error().raw_os_error() {
                // No folder, or no record in it.
                Some(libc::ENOENT | libc::ENOTDIR) => Ok(None),
                // A link on the way (ELOOP, EXDEV), an older kernel (ENOSYS), a
                // filter (EPERM): decided a step at a time.
                _ => Err(()),
            };
        }
        // SAFETY: a descriptor just returned by openat2, owned by nothing else.
        let file = unsafe { <std::fs::File as std::os::fd::FromRawFd>::from_raw_fd(fd as i32) };
        Ok(
            crate::regular_file::read_opened_text(file, STORED_FILE_LIMIT)
                .ok()
                .and_then(|text| parse_record(&text, id)),
        )
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (root, id);
        Err(())
    }
}

/// `openat2` of `path` below `root` for reading, with no link followed on the way, with
/// more `flags`: the descriptor, or -1 and `errno`.
#[cfg(target_os = "linux")]
fn openat2_beneath(root: &std::fs::File, path: &std::ffi::CStr, flags: i32) -> libc::c_long {
    // SAFETY: open_how is plain data; zero is "no flags" for each of its fields.
    let mut how: libc::open_how = unsafe { std::mem::zeroed() };
    how.flags =
        (libc::O_RDONLY | libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_CLOEXEC | flags) as u64;
    how.resolve = libc::RESOLVE_NO_SYMLINKS | libc::RESOLVE_BENEATH;
    // SAFETY: openat2 reads the path and `how`, both alive for the call; the caller owns
    // the descriptor it returns.
    unsafe {
        libc::syscall(
            libc::SYS_openat2,
            std::os::fd::AsRawFd::as_raw_fd(root),
            path.as_ptr(),
            &how as *const libc::open_how,
            std::mem::size_of::<libc::open_how>(),
        )
    }
}

/// A run dir held open, for [`record_beneath`] to read below it.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
pub(crate) struct RunRoot {
    file: std::fs::File,
    /// Records are still read without updating their access time (see
    /// [`record_beneath`]).
    untouched: AtomicBool,
}

impl RunRoot {
    /// The run dir of `layout`, opened; `None` when it cannot be.
    pub(crate) fn open(layout: &RunLayout) -> Option<Self> {
        let file = std::fs::File::open(layout.root()).ok()?;
        Some(Self {
            file,
            untouched: AtomicBool::new(true),
        })
    }
}

/// The record in `text` when it is `id`'s.
fn parse_record(text: &str, id: &TaskId) -> Option<TaskRecord> {
    match serde_json::from_str::<TaskRecord>(text) {
        Ok(record) if &record.id == id => Some(record),
        Ok(_) => None,
        Err(e) => {
            tracing::warn!(task = %id, "ignoring an unreadable {STATUS_JSON}: {e}");
            None
        }
    }
}

/// Every task record stored under `run_dir`, sorted by id, and the files that could
/// not be read (with why).
pub(crate) fn load_records(run_dir: &Path) -> (Vec<StoredTask>, Vec<Unreadable>) {
    // Anything named `status.json` is read, so that a FIFO or a device in its place is
    // reported (read_text refuses it without blocking) rather than skipped.
    let paths: Vec<std::path::PathBuf> = result_files(run_dir)
        .flatten()
        .filter(|e| e.depth() > 0 && !e.file_type().is_dir() && e.file_name() == STATUS_JSON)
        .map(walkdir::DirEntry::into_path)
        .collect();
    let parsed = crate::parallel::map(&paths, |path| {
        read_text(path, STORED_FILE_LIMIT)
            .map_err(|e| e.to_string())
            .and_then(|text| serde_json::from_str::<TaskRecord>(&text).map_err(|e| e.to_string()))
    });
    let layout = RunLayout::new(run_dir);
    let mut found = Vec::new();
    let mut problems = Vec::new();
    for (path, parsed) in paths.iter().zip(parsed) {
        match parsed {
            // A record counts for the task whose folder it is in, and only there (a
            // copied folder must not count a task twice, or stand in for another).
            Ok(record) if layout.task(&record.id).status() != *path => problems.push(Unreadable {
                path: path.clone(),
                why: format!(
                    "it holds the record of task `{}`, whose folder is elsewhere; not counted",
                    record.id
                ),
            }),
            Ok(record) => found.push(StoredTask {
                record,
                dir: TaskDir::at(path.parent().unwrap_or(run_dir)),
            }),
            Err(why) => problems.push(Unreadable {
                path: path.clone(),
                why,
            }),
        }
    }
    found.sort_by(|a, b| a.record.id.cmp(&b.record.id));
    (found, problems)
}

/// The records of the tasks a run dir answers for (see [`Selection::holds`]): a folder
/// left from a task no longer in the batch (its file deleted, a lower `--repeat`) is
/// not counted. Also the files that could not be read (a `selection.json` among them:
/// then every record found is counted), and the selection.
pub(crate) fn load_batch(run_dir: &Path) -> (Vec<StoredTask>, Vec<Unreadable>, Option<Selection>) {
    let (mut stored, mut problems) = load_records(run_dir);
    let selection = read_selection(run_dir).unwrap_or_else(|bad| {
        problems.push(bad);
        None
    });
    if let Some(selection) = &selection {
        stored.retain(|t| selection.holds(&t.record.id));
    }
    (stored, problems, selection)
}

/// The `plan.json` of every task of an earlier run (`ufo-batch run results/RUN/`), with
/// the task's folder as its id.
pub(crate) fn recorded_plans(run_dir: &Path) -> Result<FoundFiles, walkdir::Error> {
    let mut found = FoundFiles::default();
    for entry in result_files(run_dir) {
        let entry = entry?;
        // Whatever is named plan.json but a folder: a FIFO or a broken link in its place
        // is a task that cannot load (an error of its own), never one left out.
        if !entry.file_type().is_dir() && entry.file_name() == PLAN_JSON {
            let linked = entry.path_is_symlink();
            found.add(run_dir, entry.path()).by_folder().linked = linked;
        }
    }
    Ok(found)
}

/// Every entry under `run_dir` in name order, except what lies in a task folder's
/// workspace, temporary folder or earlier attempts.
fn result_files(run_dir: &Path) -> impl Iterator<Item = walkdir::Result<walkdir::DirEntry>> {
    walkdir::WalkDir::new(run_dir)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| {
            let in_task_dir = e
                .path()
                .parent()
                .is_some_and(|p| p.join(STATUS_JSON).is_file());
            let name = e.file_name().to_string_lossy();
            // Another run dir inside this one (a merge made into a shard's folder) is
            // not part of it.
            let nested_run =
                e.depth() > 0 && e.file_type().is_dir() && e.path().join(RUN_JSON).is_file();
            let task_subfolder = in_task_dir && TASK_SUBFOLDERS.contains(&name.as_ref());
            !(task_subfolder || nested_run)
        })
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    /// A record is read in one step where nothing on the way is a link; a link on the
    /// way, a missing folder and a FIFO in the record's place are each told apart.
    #[test]
    fn a_record_is_read_beneath_the_run_dir_and_a_link_on_the_way_is_told() {
        let dir = tempfile::tempdir().unwrap();
        let layout = RunLayout::new(dir.path());
        let id = |s| TaskId::parse(s).unwrap();
        let record = crate::testutil::record("g/kept");
        let folder = layout.task(&id("g/kept"));
        std::fs::create_dir_all(folder.path()).unwrap();
        std::fs::write(folder.status(), serde_json::to_vec(&record).unwrap()).unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(outside.path().join("t")).unwrap();
        std::fs::write(
            outside.path().join("t").join(STATUS_JSON),
            serde_json::to_vec(&crate::testutil::record("l/t")).unwrap(),
        )
        .unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join("l")).unwrap();
        let fifo = layout.task(&id("g/fifo"));
        std::fs::create_dir_all(fifo.path()).unwrap();
        let path =
            std::ffi::CString::new(fifo.status().into_os_string().into_encoded_bytes()).unwrap();
        // SAFETY: a valid path for the call.
        assert_eq!(unsafe { libc::mkfifo(path.as_ptr(), 0o600) }, 0);

        // Read before it was last changed: an ordinary read would update its access time.
        let long_ago = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1 << 30);
        crate::testutil::set_accessed(&folder.status(), long_ago);

        let root = RunRoot::open(&layout).unwrap();
        let read = record_beneath(&root, &id("g/kept")).unwrap().unwrap();
        assert_eq!(read.id, record.id);
        let accessed = std::fs::metadata(folder.status())
            .unwrap()
            .accessed()
            .unwrap();
        assert_eq!(
            accessed, long_ago,
            "reading a record leaves its access time"
        );
        assert!(matches!(record_beneath(&root, &id("g/none")), Ok(None)));
        assert!(matches!(record_beneath(&root, &id("g/fifo")), Ok(None)));
        assert!(
            record_beneath(&root, &id("l/t")).is_err(),
            "a link on the way"
        );
    }
}
