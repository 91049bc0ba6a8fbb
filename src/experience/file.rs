//! Reading `experience.yaml`, UFO's experience file (`ExperienceSummarizer.
//! create_or_update_yaml` in `ufo/experience/summarizer.py`): one mapping whose keys are
//! `example0`, `example1`, ... and whose values are records. Reading is bounded: the
//! file's size, its nesting (checked before the parser sees it: deep flow nesting takes
//! the parser quadratic time), the records read, and the YAML parser's own limit on
//! alias expansion. A record that cannot be used is left out with a reason.

use std::path::{Path, PathBuf};

use super::record::ExperienceRecord;
use crate::regular_file::FileAccessError;

/// The file's name in its folder (UFO's).
pub(crate) const FILE_NAME: &str = "experience.yaml";
/// The largest experience file read (10,000 records of a few KB fit many times over).
pub(crate) const MAX_FILE: u64 = 32 << 20;
/// The most records read from one file.
const MAX_RECORDS: usize = 100_000;
/// The deepest nesting of flow collections (`[`, `{`) read; UFO's records nest 3 deep.
const MAX_DEPTH: usize = 64;
/// The most lines and flow items read: the nodes a parse may build (a file of 100,000
/// records of UFO's shape has about 2 million lines; a parse holds each node's event
/// and value, some hundreds of bytes).
const MAX_ITEMS: usize = 2_000_000;
/// Characters of a key quoted in a reason.
const KEY_SHOWN: usize = 40;

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
    /// It is not YAML of UFO's shape; `then` says what was not done because of it.
    #[error("{path} is not an experience file: {source}{then}")]
    Parse {
        path: PathBuf,
        source: NotExperience,
        then: &'static str,
    },
    /// It or its folder cannot be written.
    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The folder cannot hold experience.
    #[error("{0}")]
    Refused(String),
}

/// The records of a file, by key, in the file's order, and why others were left out.
#[derive(Debug, Default)]
pub(crate) struct Loaded {
    /// Usable records.
    pub(crate) records: Vec<(String, ExperienceRecord)>,
    /// `example7: it has no request text`, one per record left out.
    pub(crate) skipped: Vec<String>,
}

/// `key` as a reason quotes it (a file named by mistake is not printed whole).
pub(crate) fn shown_key(key: &str) -> String {
    crate::text::shorten(key, KEY_SHOWN)
}

/// What a parse of a text would build, counted before it is parsed: the deepest
/// nesting of its flow collections and the nodes it can hold at most.
#[derive(Debug, PartialEq, Eq)]
struct Shape {
    /// The deepest nesting of `[` and `{`.
    depth: usize,
    /// Lines, and items of flow collections: no more nodes than these.
    items: usize,
}

/// The shape of `text`, outside quotes and comments (a bracket or a comma in a plain
/// scalar counts too: a little more than the truth, never less).
fn shape(text: &str) -> Shape {
    let (mut depth, mut deepest, mut items) = (0usize, 0usize, 0usize);
    let (mut single, mut double, mut comment, mut escaped) = (false, false, false, false);
    let mut previous = '\n';
    for c in text.chars() {
        // A line ends at LF, CRLF, or a CR alone.
        if c == '\r' || (c == '\n' && previous != '\r') {
            items += 1;
        }
        if comment {
            comment = c != '\n';
        } else if double {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                double = false;
            }
        } else if single {
            single = c != '\'';
        } else {
            match c {
                '#' if previous.is_whitespace() => comment = true,
                '"' => double = true,
                '\'' => single = true,
                '[' | '{' => {
                    depth += 1;
                    deepest = deepest.max(depth);
                }
                ']' | '}' => depth = depth.saturating_sub(1),
                ',' if depth > 0 => items += 1,
                _ => {}
            }
        }
        previous = c;
    }
    Shape {
        depth: deepest,
        items,
    }
}

/// Why a text is not an experience file.
#[derive(Debug, thiserror::Error)]
pub(crate) enum NotExperience {
    /// Flow collections nested deeper than [`MAX_DEPTH`] (the parser is slow there).
    #[error("it nests {0} levels of [ and {{, more than the {MAX_DEPTH} read")]
    TooDeep(usize),
    /// More lines and flow items than [`MAX_ITEMS`] (parsed, each takes many times its
    /// bytes).
    #[error("it holds {0} lines and list items, more than the {MAX_ITEMS} read")]
    TooLarge(usize),
    /// Not YAML.
    #[error("{0}")]
    Yaml(serde_norway::Error),
    /// YAML, but not a mapping of records.
    #[error("its top level is not a mapping of example0, example1, ...")]
    NotAMapping,
    /// More records than [`MAX_RECORDS`].
    #[error("it holds {0} records, more than the {MAX_RECORDS} read")]
    TooMany(usize),
    /// A record's key that is not text (shown, shortened).
    #[error("a key is not text: {0}")]
    KeyNotText(String),
}

/// The entries of the YAML text `text`: its top-level mapping's keys and values (none
/// for an empty file), or why it is not one.
pub(crate) fn entries(text: &str) -> Result<Vec<(String, serde_norway::Value)>, NotExperience> {
    let shape = shape(text);
    if shape.depth > MAX_DEPTH {
        return Err(NotExperience::TooDeep(shape.depth));
    }
    if shape.items > MAX_ITEMS {
        return Err(NotExperience::TooLarge(shape.items));
    }
    let value: serde_norway::Value = serde_norway::from_str(text).map_err(NotExperience::Yaml)?;
    let map = match value {
        serde_norway::Value::Null => return Ok(Vec::new()),
        serde_norway::Value::Mapping(map) => map,
        _ => return Err(NotExperience::NotAMapping),
    };
    if map.len() > MAX_RECORDS {
        return Err(NotExperience::TooMany(map.len()));
    }
    map.into_iter()
        .map(|(k, v)| match k {
            serde_norway::Value::String(s) => Ok((s, v)),
            other => Err(NotExperience::KeyNotText(shown_key(
                serde_norway::to_string(&other).unwrap_or_default().trim(),
            ))),
        })
        .collect()
}

/// The text of `path`, empty when there is no file yet.
pub(crate) fn read_text(path: &Path) -> Result<String, ExperienceError> {
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
    let parsed = entries(&text).map_err(|source| ExperienceError::Parse {
        path: path.to_path_buf(),
        source,
        then: "",
    })?;
    let mut loaded = Loaded::default();
    for (key, value) in parsed {
        match ExperienceRecord::from_yaml(value) {
            Ok(record) => loaded.records.push((key, record)),
            Err(why) => loaded.skipped.push(format!("{}: {why}", shown_key(&key))),
        }
    }
    Ok(loaded)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_list_or_deep_nesting_or_a_key_that_is_not_text_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE_NAME);
        std::fs::write(&path, "- a\n- b\n").unwrap();
        let e = read(&path).unwrap_err().to_string();
        assert!(e.contains("top level is not a mapping"), "{e}");
        std::fs::write(&path, format!("example0: {}", "[".repeat(400_000))).unwrap();
        let e = read(&path).unwrap_err().to_string();
        assert!(e.contains("nests 400000 levels"), "{e}");
        std::fs::write(&path, "[1, 2]: x\n").unwrap();
        let e = read(&path).unwrap_err().to_string();
        assert!(e.contains("a key is not text: - 1"), "{e}");
    }

    #[test]
    fn brackets_in_quotes_and_comments_are_not_nesting() {
        assert_eq!(
            shape("a: '[[[[' # {{{{\nb: \"]]\\\"[[\"\nc: [1, {d: 2}]"),
            Shape { depth: 2, items: 3 }
        );
    }

    #[test]
    fn a_file_of_millions_of_items_is_refused_before_it_is_parsed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE_NAME);
        // One flow list of 3 million items, 6 MB: refused, not parsed.
        let items = vec!["1"; 3_000_000].join(",");
        std::fs::write(
            &path,
            format!("example0: {{request: a, example: {{}}, list: [{items}]}}\n"),
        )
        .unwrap();
        let e = read(&path).unwrap_err().to_string();
        assert!(
            e.contains("holds 3000002 lines and list items, more than the 2000000 read"),
            "{e}"
        );
        // And the same as block lines.
        let lines = "- 1\n".repeat(2_100_000);
        std::fs::write(&path, format!("example0:\n  request: a\n  list:\n{lines}")).unwrap();
        let e = read(&path).unwrap_err().to_string();
        assert!(
            e.contains("lines and list items, more than the 2000000 read"),
            "{e}"
        );
    }
}
