//! `experience.yaml`, UFO's experience file (`ExperienceSummarizer.create_or_update_yaml`
//! in `ufo/experience/summarizer.py`): one mapping whose keys are `example0`,
//! `example1`, ... and whose values are records. Reading it is bounded (size, and the
//! YAML parser's own limit on alias expansion); a record that cannot be used is left
//! out with a reason. Appending keeps every byte already there (UFO's records and
//! comments stay as written), adds the new records under the next free keys, and
//! replaces the file atomically under a lock: tasks of this run and other runners
//! (shards) may save at once, and a runner killed at any point leaves the old file or
//! the new one, whole. A task already saved by this run is not saved again.

use std::fs::OpenOptions;
use std::path::{Path, PathBuf};

use super::record::{ExperienceRecord, Origin};
use crate::regular_file::FileAccessError;

/// The file's name in its folder (UFO's).
pub(crate) const FILE_NAME: &str = "experience.yaml";
/// The largest experience file read (10,000 records of a few KB fit many times over).
pub(crate) const MAX_FILE: u64 = 32 << 20;
/// The most records read from one file.
const MAX_RECORDS: usize = 100_000;

/// Why the experience file cannot be used.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ExperienceError {
    /// It cannot be read (a folder or a FIFO in its place, too large, not UTF-8, ...).
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: FileAccessError,
    },
    /// It is not YAML of UFO's shape.
    #[error("{path} is not an experience file: {message}")]
    Parse { path: PathBuf, message: String },
    /// It or its folder cannot be written.
    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// The records of a file, by key, in the file's order, and why others were left out.
#[derive(Debug, Default)]
pub(crate) struct Loaded {
    /// Usable records.
    pub(crate) records: Vec<(String, ExperienceRecord)>,
    /// `example7: it has no request text`, one per record left out.
    pub(crate) skipped: Vec<String>,
}

/// The entries of the YAML text `text`: its top-level mapping's keys and values (none
/// for an empty file), or why it is not one.
fn entries(text: &str) -> Result<Vec<(String, serde_norway::Value)>, String> {
    let value: serde_norway::Value = serde_norway::from_str(text).map_err(|e| e.to_string())?;
    let map = match value {
        serde_norway::Value::Null => return Ok(Vec::new()),
        serde_norway::Value::Mapping(map) => map,
        _ => return Err("its top level is not a mapping of example0, example1, ...".into()),
    };
    if map.len() > MAX_RECORDS {
        return Err(format!(
            "it holds {} records, more than the {MAX_RECORDS} read",
            map.len()
        ));
    }
    Ok(map
        .into_iter()
        .map(|(k, v)| {
            let key = match k {
                serde_norway::Value::String(s) => s,
                other => serde_norway::to_string(&other)
                    .unwrap_or_default()
                    .trim()
                    .to_string(),
            };
            (key, v)
        })
        .collect())
}

/// The text of `path`, empty when there is no file yet.
fn read_text(path: &Path) -> Result<String, ExperienceError> {
    match crate::regular_file::read_named_text(path, MAX_FILE) {
        Ok(text) => Ok(text),
        Err(FileAccessError::NotFound) => Ok(String::new()),
        Err(source) => Err(ExperienceError::Read {
            path: path.to_path_buf(),
            source,
        }),
    }
}

/// The records of the experience file at `path` (none when it does not exist).
pub(crate) fn read(path: &Path) -> Result<Loaded, ExperienceError> {
    let text = read_text(path)?;
    let parsed = entries(&text).map_err(|message| ExperienceError::Parse {
        path: path.to_path_buf(),
        message,
    })?;
    let mut loaded = Loaded::default();
    for (key, value) in parsed {
        match ExperienceRecord::from_yaml(value) {
            Ok(record) => loaded.records.push((key, record)),
            Err(why) => loaded.skipped.push(format!("{key}: {why}")),
        }
    }
    Ok(loaded)
}

/// What an append did.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Appended {
    /// The records were added under these keys.
    Saved(Vec<String>),
    /// The file already holds a record of this task from this run: nothing added.
    AlreadySaved,
}

/// Adds `records`, all of the task `origin` names, to the experience file at `path`,
/// unless it already holds one of that task from that run. Blocking: it waits for the
/// file's lock (`path` + `.lock`), held by another task or runner saving.
pub(crate) fn append(
    path: &Path,
    origin: &Origin,
    records: &[ExperienceRecord],
) -> Result<Appended, ExperienceError> {
    let write_error = |source| ExperienceError::Write {
        path: path.to_path_buf(),
        source,
    };
    let lock_path = lock_path(path);
    let lock = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .map_err(write_error)?;
    lock.lock().map_err(write_error)?;
    // A writer killed half-way (`kill -9`) left its temporary file; the lock says no
    // writer is at work now.
    if let (Some(dir), Some(name)) = (path.parent(), path.file_name()) {
        let dir = if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            dir
        };
        crate::rundir::remove_stale_temps(dir, &[&name.to_string_lossy()]);
    }
    let text = read_text(path)?;
    let existing = entries(&text).map_err(|message| ExperienceError::Parse {
        path: path.to_path_buf(),
        message: format!("{message}; nothing was added to it"),
    })?;
    let saved_before = existing.iter().any(|(_, v)| {
        let field = |k: &str| v.get(k).and_then(serde_norway::Value::as_str);
        field("run") == Some(origin.run.as_str()) && field("task_id") == Some(&origin.task_id)
    });
    if saved_before {
        return Ok(Appended::AlreadySaved);
    }
    let mut keys: Vec<String> = Vec::with_capacity(records.len());
    let mut added = serde_norway::Mapping::new();
    // UFO numbers from the count of records (`len(existing_data)`); a key taken
    // (records removed by hand) moves on to the next free one.
    let mut n = existing.len();
    for record in records {
        let mut key = format!("example{n}");
        while existing.iter().any(|(k, _)| *k == key) || keys.contains(&key) {
            n += 1;
            key = format!("example{n}");
        }
        n += 1;
        let value = serde_norway::to_value(record)
            .map_err(|e| write_error(std::io::Error::other(e.to_string())))?;
        added.insert(serde_norway::Value::String(key.clone()), value);
        keys.push(key);
    }
    let block = serde_norway::to_string(&added)
        .map_err(|e| write_error(std::io::Error::other(e.to_string())))?;
    let mut out = text;
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    out.push_str(&block);
    // The bytes there kept as they are, when the new block can simply follow them (a
    // file in block style, UFO's); otherwise (flow style, a document end marker) the
    // whole mapping is written out again.
    if entries(&out).map(|e| e.len()).ok() != Some(existing.len() + keys.len()) {
        let mut all: serde_norway::Mapping = existing
            .into_iter()
            .map(|(k, v)| (serde_norway::Value::String(k), v))
            .collect();
        all.extend(added);
        out = serde_norway::to_string(&all)
            .map_err(|e| write_error(std::io::Error::other(e.to_string())))?;
    }
    crate::rundir::write_atomic(path, out.as_bytes()).map_err(write_error)?;
    drop(lock);
    Ok(Appended::Saved(keys))
}

/// The lock file beside the experience file at `path`.
fn lock_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".lock");
    path.with_file_name(name)
}

#[cfg(test)]
mod tests {
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
        }
    }

    #[test]
    fn appends_after_ufo_records_keeping_their_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE_NAME);
        let ufo = "# UFO's\nexample0:\n  example: {Function: click_input}\n  Tips: ''\n  request: Open it\n  Sub-task: Open it\n  app_list:\n  - WINWORD.EXE\n";
        std::fs::write(&path, ufo).unwrap();
        let origin = record("x").origin.unwrap();
        let added = append(&path, &origin, &[record("Sum a column")]).unwrap();
        assert_eq!(added, Appended::Saved(vec!["example1".into()]));
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.starts_with(ufo), "{text}");
        let loaded = read(&path).unwrap();
        assert_eq!(loaded.records.len(), 2);
        assert_eq!(loaded.records[1].1, record("Sum a column"));
        assert_eq!(
            append(&path, &origin, &[record("again")]).unwrap(),
            Appended::AlreadySaved
        );
    }

    #[test]
    fn a_flow_style_file_is_written_out_again() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE_NAME);
        std::fs::write(&path, "{example0: {request: a, example: {}}}").unwrap();
        let origin = record("x").origin.unwrap();
        append(&path, &origin, &[record("b"), record("c")]).unwrap();
        let loaded = read(&path).unwrap();
        let keys: Vec<&str> = loaded.records.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["example0", "example1", "example2"]);
    }

    #[test]
    fn a_list_or_broken_yaml_is_refused_and_left_as_it_was() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE_NAME);
        std::fs::write(&path, "- a\n- b\n").unwrap();
        let e = read(&path).unwrap_err().to_string();
        assert!(e.contains("top level is not a mapping"), "{e}");
        let origin = record("x").origin.unwrap();
        let e = append(&path, &origin, &[record("b")])
            .unwrap_err()
            .to_string();
        assert!(e.contains("nothing was added"), "{e}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "- a\n- b\n");
    }
}
