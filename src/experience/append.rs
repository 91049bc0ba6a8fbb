//! Adding records to `experience.yaml`. Every byte already there is kept (UFO's records
//! and comments stay as written) and the new records follow under the next free keys;
//! the file is replaced atomically (a temporary file of ours, synced, renamed over it)
//! under a lock file beside it: tasks of this run and other runners (shards) may save at
//! once, and a runner killed at any point leaves the old file or the new one, whole. A
//! task a run of the same name already saved is not saved again. The lock and the
//! temporary files are opened without following links and without blocking (a FIFO in
//! their place is refused), and only temporary files named as ours are ever removed.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use super::file::{ExperienceError, entries, read_text};
use super::record::{ExperienceRecord, Origin};

/// What an append did.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Appended {
    /// The records were added under these keys.
    Saved(Vec<String>),
    /// The file already holds this task from a run of the same name: nothing added.
    AlreadySaved,
}

/// The lock file beside the experience file at `path`.
fn lock_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".lock");
    path.with_file_name(name)
}

/// How our temporary files beside `path` begin.
fn temp_prefix(path: &Path) -> String {
    format!(
        ".{}.ufo-batch-",
        path.file_name().unwrap_or_default().to_string_lossy()
    )
}

/// The folder of `path`.
fn folder_of(path: &Path) -> &Path {
    path.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// Opens (making it) the lock file of `path`: a regular file, not a link, without
/// waiting for anything (a FIFO there would hold the open).
fn open_lock(path: &Path) -> std::io::Result<File> {
    let lock = lock_path(path);
    let not_regular = || std::io::Error::other(format!("{} is not a regular file", lock.display()));
    if std::fs::symlink_metadata(&lock).is_ok_and(|m| !m.is_file()) {
        return Err(not_regular());
    }
    let mut options = OpenOptions::new();
    options.create(true).truncate(false).write(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW);
    }
    let file = options.open(&lock)?;
    if !file.metadata()?.is_file() {
        return Err(not_regular());
    }
    Ok(file)
}

/// Checks, before a run starts, that records can be saved to `path`: its folder takes
/// a lock and a new file, and `path` is absent or a regular file (a link would be
/// replaced by a file, not followed).
pub(crate) fn check_writable(path: &Path) -> Result<(), ExperienceError> {
    let refused = |source| ExperienceError::Write {
        path: path.to_path_buf(),
        source,
    };
    if let Ok(meta) = std::fs::symlink_metadata(path)
        && !meta.is_file()
    {
        let what = if meta.file_type().is_symlink() {
            "a link (saving would replace it with a file): give the folder it points into"
        } else if meta.is_dir() {
            "it is a folder, not a regular file"
        } else {
            "it is not a regular file"
        };
        return Err(refused(std::io::Error::other(what)));
    }
    open_lock(path).map_err(refused)?;
    let probe = tempfile::Builder::new()
        .prefix(&temp_prefix(path))
        .tempfile_in(folder_of(path))
        .map_err(refused)?;
    probe.close().map_err(refused)
}

/// Replaces `path` with `text` (secrets masked): written to a temporary file of ours
/// beside it, synced, renamed over it, the folder synced. The file keeps its mode (a
/// 0600 file stays private); a new one is readable as UFO's own file is.
fn replace(path: &Path, text: &str) -> std::io::Result<()> {
    let folder = folder_of(path);
    let mut temp = tempfile::Builder::new()
        .prefix(&temp_prefix(path))
        .tempfile_in(folder)?;
    temp.write_all(crate::secrets::scrub(text).as_bytes())?;
    temp.as_file().sync_all()?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        // Not the temporary file's owner-only mode: the file's own, or UFO's 0644.
        let mode = std::fs::symlink_metadata(path)
            .ok()
            .filter(std::fs::Metadata::is_file)
            .map_or(0o644, |m| m.permissions().mode() & 0o7777);
        temp.as_file()
            .set_permissions(std::fs::Permissions::from_mode(mode))?;
    }
    temp.persist(path).map_err(|e| e.error)?;
    #[cfg(unix)]
    File::open(folder)?.sync_all()?;
    Ok(())
}

/// Removes the temporary files of ours a writer killed half-way left beside `path`.
fn remove_stale_temps(path: &Path) {
    let prefix = temp_prefix(path);
    let Ok(entries) = std::fs::read_dir(folder_of(path)) else {
        return;
    };
    for entry in entries.flatten() {
        if entry.file_name().to_string_lossy().starts_with(&prefix)
            && entry.file_type().is_ok_and(|t| t.is_file())
        {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// True when the existing records hold one of the task `origin` names with the request
/// of `first` (a task of another project with the same run name and id is another).
fn saved_before(
    existing: &[(String, serde_norway::Value)],
    origin: &Origin,
    first: Option<&ExperienceRecord>,
) -> bool {
    existing.iter().any(|(_, v)| {
        let field = |k: &str| v.get(k).and_then(serde_norway::Value::as_str);
        field("run") == Some(origin.run.as_str())
            && field("task_id") == Some(&origin.task_id)
            && first.is_none_or(|r| field("request") == Some(r.request.as_str()))
    })
}

/// True when new block-style entries can simply follow `text`: every line that starts
/// at the margin is a blank, a comment or a block mapping key (no flow collection, no
/// document marker, no sequence at the top).
fn takes_a_block_after(text: &str) -> bool {
    text.lines().all(|line| {
        let first = line.chars().next();
        match first {
            None => true,
            Some(c) if c.is_whitespace() || c == '#' => true,
            Some('[' | '{' | '-' | '.' | '%' | '&' | '*' | '!' | '?' | '|' | '>') => false,
            Some(_) => line.contains(": ") || line.ends_with(':'),
        }
    })
}

/// Takes the lock `file`, waiting for another task or runner that holds it until
/// `until`.
fn lock_until(file: &File, until: std::time::Instant) -> std::io::Result<()> {
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(()),
            Err(std::fs::TryLockError::Error(e)) => return Err(e),
            Err(std::fs::TryLockError::WouldBlock) => {}
        }
        let now = std::time::Instant::now();
        if now >= until {
            return Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                "its lock stayed held by another writer for as long as the task could wait; nothing was added",
            ));
        }
        std::thread::sleep((until - now).min(std::time::Duration::from_millis(25)));
    }
}

/// Adds `records`, all of the task `origin` names, to the experience file at `path`,
/// unless it already holds that task from a run of the same name. Blocking: it waits
/// for the file's lock, held by another task or runner saving, until `until`.
pub(crate) fn append(
    path: &Path,
    origin: &Origin,
    records: &[ExperienceRecord],
    until: std::time::Instant,
) -> Result<Appended, ExperienceError> {
    let write_error = |source| ExperienceError::Write {
        path: path.to_path_buf(),
        source,
    };
    let lock = open_lock(path).map_err(write_error)?;
    lock_until(&lock, until).map_err(write_error)?;
    // A writer killed half-way left its temporary file; the lock says none is at work.
    remove_stale_temps(path);
    let text = read_text(path)?;
    let existing = entries(&text).map_err(|source| ExperienceError::Parse {
        path: path.to_path_buf(),
        source,
        then: "; nothing was added to it",
    })?;
    if saved_before(&existing, origin, records.first()) {
        return Ok(Appended::AlreadySaved);
    }
    let mut keys: Vec<String> = Vec::with_capacity(records.len());
    let mut added = serde_norway::Mapping::new();
    // UFO numbers from the count of records (`len(existing_data)`); a key taken
    // (records removed by hand) moves on to the next free one.
    let taken: std::collections::HashSet<&str> = existing.iter().map(|(k, _)| k.as_str()).collect();
    let mut n = existing.len();
    let yaml_error = |e: serde_norway::Error| write_error(std::io::Error::other(e.to_string()));
    for record in records {
        while taken.contains(format!("example{n}").as_str()) {
            n += 1;
        }
        let key = format!("example{n}");
        n += 1;
        let value = serde_norway::to_value(record).map_err(yaml_error)?;
        added.insert(serde_norway::Value::String(key.clone()), value);
        keys.push(key);
    }
    let out = if takes_a_block_after(&text) {
        let mut out = text;
        if !out.is_empty() && !out.ends_with('\n') {
            out.push('\n');
        }
        out.push_str(&serde_norway::to_string(&added).map_err(yaml_error)?);
        out
    } else {
        // Flow style, a document marker: the whole mapping is written out again.
        let mut all: serde_norway::Mapping = existing
            .into_iter()
            .map(|(k, v)| (serde_norway::Value::String(k), v))
            .collect();
        all.extend(added);
        serde_norway::to_string(&all).map_err(yaml_error)?
    };
    replace(path, &out).map_err(write_error)?;
    drop(lock);
    Ok(Appended::Saved(keys))
}

#[cfg(test)]
mod tests {
    use super::super::file::{FILE_NAME, read};
    use super::*;
    use serde_json::json;

    fn record(request: &str) -> ExperienceRecord {
        ExperienceRecord {
            example: ExperienceRecord::example_from(
                json!({"Function": "execute_command"}).as_object().unwrap(),
            ),
            tips: "- check the header".into(),
            request: request.into(),
            subtask: request.into(),
            app_list: vec!["shell".into()],
            origin: Some(Origin {
                task_id: "t".into(),
                run: "r".into(),
                model: "m".into(),
            }),
            verdict: Some("passed".into()),
        }
    }

    /// A lock wait no test reaches.
    fn soon() -> std::time::Instant {
        std::time::Instant::now() + std::time::Duration::from_secs(30)
    }

    #[cfg(unix)]
    #[test]
    fn a_private_file_stays_private_and_a_held_lock_is_waited_for_only_until_the_bound() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE_NAME);
        std::fs::write(&path, "").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        let origin = record("x").origin.unwrap();
        append(&path, &origin, &[record("a")], soon()).unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        // Another writer holds the lock: the wait ends at the bound, as a write error
        // that says why, and the file is as it was.
        let before = std::fs::read_to_string(&path).unwrap();
        let held = open_lock(&path).unwrap();
        held.lock().unwrap();
        let until = std::time::Instant::now() + std::time::Duration::from_millis(50);
        let e = append(&path, &origin, &[record("b")], until).unwrap_err();
        assert!(
            matches!(&e, ExperienceError::Write { source, .. } if source.kind() == std::io::ErrorKind::TimedOut),
            "{e}"
        );
        assert!(e.to_string().contains("held by another writer"), "{e}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), before);
        drop(held);
        append(&path, &origin, &[record("b")], soon()).unwrap();
    }

    #[test]
    fn appends_after_ufo_records_keeping_their_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE_NAME);
        let ufo = "# UFO's\nexample0:\n  example: {Function: click_input}\n  Tips: ''\n  request: Open it\n  Sub-task: Open it\n  app_list:\n  - WINWORD.EXE\n";
        std::fs::write(&path, ufo).unwrap();
        std::fs::write(dir.path().join(".experience.yaml.backup"), "mine").unwrap();
        std::fs::write(
            dir.path().join(".experience.yaml.ufo-batch-Ab12Cd"),
            "stale",
        )
        .unwrap();
        let origin = record("x").origin.unwrap();
        let added = append(&path, &origin, &[record("Sum a column")], soon()).unwrap();
        assert_eq!(added, Appended::Saved(vec!["example1".into()]));
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.starts_with(ufo), "{text}");
        let loaded = read(&path).unwrap();
        assert_eq!(loaded.records.len(), 2);
        assert_eq!(loaded.records[1].1, record("Sum a column"));
        assert_eq!(
            append(&path, &origin, &[record("Sum a column")], soon()).unwrap(),
            Appended::AlreadySaved
        );
        // Another task of the same run name and id, with another request, is saved.
        assert_eq!(
            append(&path, &origin, &[record("Another request")], soon()).unwrap(),
            Appended::Saved(vec!["example2".into()])
        );
        // The user's own hidden file stays; our stale temporary file is gone.
        let mut names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(
            names,
            [
                ".experience.yaml.backup",
                "experience.yaml",
                "experience.yaml.lock"
            ]
        );
    }

    #[test]
    fn a_flow_style_file_is_written_out_again() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE_NAME);
        std::fs::write(
            &path,
            "{example0: {request: a, example: {}, app_list: [shell]}}",
        )
        .unwrap();
        let origin = record("x").origin.unwrap();
        append(&path, &origin, &[record("b"), record("c")], soon()).unwrap();
        let loaded = read(&path).unwrap();
        let keys: Vec<&str> = loaded.records.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["example0", "example1", "example2"]);
    }

    #[test]
    fn broken_yaml_is_refused_and_left_as_it_was() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE_NAME);
        std::fs::write(&path, "- a\n- b\n").unwrap();
        let origin = record("x").origin.unwrap();
        let e = append(&path, &origin, &[record("b")], soon())
            .unwrap_err()
            .to_string();
        assert!(e.contains("nothing was added"), "{e}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "- a\n- b\n");
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_as_the_lock_or_a_link_as_the_file_is_refused_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE_NAME);
        let fifo = std::ffi::CString::new(lock_path(&path).to_str().unwrap()).unwrap();
        // SAFETY: mkfifo on a path of our own temporary folder.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
        let e = check_writable(&path).unwrap_err().to_string();
        assert!(e.contains("is not a regular file"), "{e}");
        std::fs::remove_file(lock_path(&path)).unwrap();
        std::os::unix::fs::symlink("/etc/hostname", &path).unwrap();
        let e = check_writable(&path).unwrap_err().to_string();
        assert!(e.contains("a link"), "{e}");
    }
}
