//! Task ids: the path of a task file relative to the folder given, without `.json`
//! (`word/insert_table`), or the file's own `id`. An id names a folder inside the run
//! dir, so only ids that are safe as relative paths are accepted.

use std::fmt;
use std::path::{Component, Path};

use compact_str::{CompactString, format_compact};
use serde::{Deserialize, Deserializer, Serialize};

/// Characters allowed in one segment of an id, besides ASCII letters and digits.
const SAFE_PUNCTUATION: &[char] = &['.', '_', '-'];
/// Longest segment accepted; file systems allow 255 bytes, we leave room for suffixes.
const MAX_SEGMENT: usize = 200;
/// Longest id accepted, so that a results path stays far below the system's limit.
const MAX_ID: usize = 1000;

/// A validated task id: `/`-separated segments of letters, digits, `.`, `_`, `-`,
/// none empty, none starting with a dot. Held inline up to 24 bytes (most ids): a large
/// batch holds each id a few times over.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub(crate) struct TaskId(CompactString);

/// Why a text is not a safe task id.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum IdError {
    /// Nothing left after trimming.
    #[error("the id is empty")]
    Empty,
    /// Starts with `/` or a drive letter.
    #[error("the id `{0}` is an absolute path")]
    Absolute(String),
    /// Contains an empty, `.` or `..` segment, or one starting with a dot.
    #[error(
        "the id `{id}` has the segment `{segment}`, which could leave the run folder or hide a file"
    )]
    BadSegment {
        /// The whole id.
        id: String,
        /// The offending segment.
        segment: String,
    },
    /// Contains a character that is unsafe in file names.
    #[error("the id `{id}` contains {shown}, which is not safe in a file name")]
    UnsafeChar {
        /// The whole id.
        id: String,
        /// The character, described for humans.
        shown: String,
    },
    /// A segment longer than file systems allow.
    #[error("the id `{0}` has a segment longer than {MAX_SEGMENT} characters")]
    TooLong(String),
    /// An id whose results path would be too long for the system.
    #[error("the id is {0} characters long; at most {MAX_ID} are accepted")]
    PathTooLong(usize),
}

impl TaskId {
    /// Validates an id given in a task file or built from a path.
    pub(crate) fn parse(text: &str) -> Result<Self, IdError> {
        let id = text.trim();
        if id.is_empty() {
            return Err(IdError::Empty);
        }
        if id.len() > MAX_ID {
            return Err(IdError::PathTooLong(id.len()));
        }
        if id.starts_with('/') || id.starts_with('\\') || id.chars().nth(1) == Some(':') {
            return Err(IdError::Absolute(id.to_string()));
        }
        for segment in id.split('/') {
            if segment.is_empty() || segment.starts_with('.') {
                return Err(IdError::BadSegment {
                    id: id.to_string(),
                    segment: segment.to_string(),
                });
            }
            if let Some(c) = segment.chars().find(|c| !is_safe(*c)) {
                return Err(IdError::UnsafeChar {
                    id: id.to_string(),
                    shown: describe_char(c),
                });
            }
            if segment.chars().count() > MAX_SEGMENT {
                return Err(IdError::TooLong(id.to_string()));
            }
        }
        Ok(Self(CompactString::from(id)))
    }

    /// The id of a task file at `relative` (to the folder given): its path without the
    /// `.json` extension, with `/` between folders.
    pub(crate) fn from_relative_path(relative: &Path) -> Result<Self, IdError> {
        Self::parse(&relative_id_text(relative))
    }

    /// A safe stand-in for an id that failed validation, so the bad file still gets a
    /// results folder: unsafe characters become `_`, bad segments are dropped.
    pub(crate) fn sanitized(text: &str) -> Self {
        let segments: Vec<String> = text
            .split(['/', '\\'])
            .filter(|s| !s.is_empty() && *s != "." && *s != "..")
            .map(|s| {
                let clean: String = s
                    .trim_start_matches('.')
                    .chars()
                    .map(|c| if is_safe(c) { c } else { '_' })
                    .take(MAX_SEGMENT)
                    .collect();
                if clean.is_empty() {
                    "_".to_string()
                } else {
                    clean
                }
            })
            .collect();
        let mut id = segments.join("/");
        if id.is_empty() {
            id.push('_');
        }
        if id.len() > MAX_ID {
            // Keep the tail, where the file's own name is; ASCII only by now.
            id = id[id.len() - MAX_ID..]
                .trim_start_matches(['/', '.'])
                .to_string();
        }
        Self(CompactString::from(id))
    }

    /// The id as text.
    pub(crate) fn as_str(&self) -> &str {
        &self.0
    }

    /// The id with a suffix on its last segment (for de-duplicated stand-ins).
    pub(crate) fn with_suffix(&self, suffix: &str) -> Self {
        Self(format_compact!("{}{suffix}", self.0))
    }

    /// The id of repetition `n` of this task (`--repeat`): `ID/rep-n`.
    pub(crate) fn repetition(&self, n: u32) -> Self {
        Self::parse(&format!("{}/rep-{n}", self.0)).unwrap_or_else(|_| self.clone())
    }

    /// The task this id is a repetition of, when `repeat` says it is one (`x/rep-2` →
    /// `x`); itself otherwise.
    pub(crate) fn base(&self, repeat: Option<u32>) -> TaskId {
        match repeat {
            Some(_) => TaskId::parse(self.group()).unwrap_or_else(|_| self.clone()),
            None => self.clone(),
        }
    }

    /// The id's folder segments, outermost first.
    pub(crate) fn segments(&self) -> impl Iterator<Item = &str> {
        self.0.split('/')
    }

    /// The folder part of the id (`word` for `word/insert_table`), empty at top level.
    pub(crate) fn group(&self) -> &str {
        self.0.rsplit_once('/').map(|(g, _)| g).unwrap_or("")
    }
}

impl fmt::Display for TaskId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for TaskId {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        // Checked where the text is (no string of its own first): a run's rows are
        // read back many times over.
        struct Text;
        impl serde::de::Visitor<'_> for Text {
            type Value = TaskId;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a string")
            }
            fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<TaskId, E> {
                TaskId::parse(text).map_err(E::custom)
            }
        }
        d.deserialize_str(Text)
    }
}

/// The raw id text for a relative path, before validation.
pub(super) fn relative_id_text(relative: &Path) -> String {
    let without_ext = match relative.extension() {
        Some(ext) if ext.eq_ignore_ascii_case("json") => relative.with_extension(""),
        _ => relative.to_path_buf(),
    };
    without_ext
        .components()
        .filter_map(|c| match c {
            Component::Normal(s) => Some(s.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("/")
}

fn is_safe(c: char) -> bool {
    c.is_ascii_alphanumeric() || SAFE_PUNCTUATION.contains(&c)
}

fn describe_char(c: char) -> String {
    match c {
        ' ' => "a space".to_string(),
        '\\' => "a backslash".to_string(),
        c if c.is_control() => format!("the control character U+{:04X}", c as u32),
        c => format!("the character `{c}`"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_nested_safe_ids() {
        assert_eq!(
            TaskId::parse("word/insert_table").unwrap().as_str(),
            "word/insert_table"
        );
        assert_eq!(TaskId::parse("a-b.c_d").unwrap().group(), "");
        assert_eq!(TaskId::parse("x/y/z").unwrap().group(), "x/y");
    }

    #[test]
    fn rejects_escapes_and_unsafe_chars() {
        assert!(matches!(
            TaskId::parse("../etc"),
            Err(IdError::BadSegment { .. })
        ));
        assert!(matches!(
            TaskId::parse("a//b"),
            Err(IdError::BadSegment { .. })
        ));
        assert!(matches!(
            TaskId::parse(".hidden"),
            Err(IdError::BadSegment { .. })
        ));
        assert!(matches!(TaskId::parse("/abs"), Err(IdError::Absolute(_))));
        assert!(matches!(TaskId::parse("C:x"), Err(IdError::Absolute(_))));
        let err = TaskId::parse("my task").unwrap_err();
        assert_eq!(
            err.to_string(),
            "the id `my task` contains a space, which is not safe in a file name"
        );
        assert!(matches!(TaskId::parse(""), Err(IdError::Empty)));
        assert!(matches!(
            TaskId::parse(&"x".repeat(201)),
            Err(IdError::TooLong(_))
        ));
    }

    #[test]
    fn ids_from_paths_drop_json_extension() {
        let id = TaskId::from_relative_path(Path::new("word/insert_table.json")).unwrap();
        assert_eq!(id.as_str(), "word/insert_table");
        let id = TaskId::from_relative_path(Path::new("./a.JSON")).unwrap();
        assert_eq!(id.as_str(), "a");
    }

    #[test]
    fn sanitized_is_always_valid() {
        let long = "abc/".repeat(400);
        for raw in [
            "my task",
            "../../x",
            "..",
            "",
            "a/.b/c",
            "ü/ß",
            long.as_str(),
        ] {
            let id = TaskId::sanitized(raw);
            assert!(TaskId::parse(id.as_str()).is_ok(), "{raw:?} -> {id}");
        }
        assert_eq!(TaskId::sanitized("my task").as_str(), "my_task");
    }
}
