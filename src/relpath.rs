//! Relative paths that a task file, a recorded plan or a model gives: the one place that
//! decides whether a path's text stays below the folder it is relative to. It looks at the
//! text only (no absolute part, no `..` above the start, no NUL, no name too long for a
//! file system); what is on the disk (symbolic links) is `confined`'s concern, which opens
//! a [`RelPath`] step by step beneath its folder.

use std::path::{Component, Path, PathBuf};

/// The longest name of one file or folder that file systems take (Linux's `NAME_MAX`,
/// in bytes; NTFS's 255 UTF-16 units are at least as many).
const NAME_MAX: usize = 255;

/// The longest relative path taken, in bytes: with the workspace's own path before it, a
/// longer one would pass the system's `PATH_MAX` (4096) for some tools and calls.
pub(crate) const PATH_LIMIT: usize = 2048;

/// How much of a refused path its error quotes.
const QUOTED: usize = 120;

/// Why a path was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum PathError {
    /// Empty text.
    #[error("the path is empty")]
    Empty,
    /// Absolute (`/etc/passwd`, `C:\x`).
    #[error("`{0}` is an absolute path; use a path relative to the workspace")]
    Absolute(String),
    /// Climbs above the workspace with `..`.
    #[error("`{0}` leaves the workspace")]
    Escapes(String),
    /// Holds a NUL character, which no file name can.
    #[error("`{0}` holds a NUL character, which no file name can")]
    Nul(String),
    /// A name Windows keeps for a device (`CON`, `NUL`, `COM1`, `aux.txt`).
    #[cfg_attr(not(windows), allow(dead_code))]
    #[error("`{0}` names a device on Windows (CON, PRN, AUX, NUL, COM1-9, LPT1-9)")]
    Reserved(String),
    /// Longer, whole, than [`PATH_LIMIT`].
    #[error("`{path}` is {len} bytes long; a path may be at most {PATH_LIMIT}")]
    TooLong {
        /// The path, shortened.
        path: String,
        /// Its length in bytes.
        len: usize,
    },
    /// A name in it is longer than file systems take.
    #[error("`{path}` has a name of {len} bytes; file systems take at most {NAME_MAX}")]
    NameTooLong {
        /// The path, as given.
        path: String,
        /// The length of its longest name, in bytes.
        len: usize,
    },
}

/// A relative path, normalised (`a/./b/../c` is `a/c`) and known, from its text, to stay
/// below the folder it is relative to. Empty for that folder itself.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct RelPath(PathBuf);

impl RelPath {
    /// Parses `text`; `""` and `.` (the folder itself) only with `allow_root`.
    pub(crate) fn parse(text: &str, allow_root: bool) -> Result<Self, PathError> {
        normalize_relative(text, allow_root).map(Self)
    }

    /// The folder itself.
    pub(crate) fn root() -> Self {
        Self(PathBuf::new())
    }

    /// The path, relative.
    pub(crate) fn as_path(&self) -> &Path {
        &self.0
    }

    /// True for the folder itself.
    pub(crate) fn is_root(&self) -> bool {
        self.0.as_os_str().is_empty()
    }

    /// Its folder (the root for a name alone) and its last name; `None` for the root.
    pub(crate) fn split_last(&self) -> Option<(RelPath, &std::ffi::OsStr)> {
        let name = self.0.file_name()?;
        let parent = self.0.parent().map(Path::to_path_buf).unwrap_or_default();
        Some((RelPath(parent), name))
    }

    /// The names it is made of, in order.
    pub(crate) fn names(&self) -> impl Iterator<Item = &std::ffi::OsStr> {
        self.0.iter()
    }

    /// `self/other`.
    pub(crate) fn join_path(&self, other: &RelPath) -> RelPath {
        RelPath(self.0.join(&other.0))
    }

    /// `self/name` (a name read from a folder: no separator, not `..`).
    pub(crate) fn join_name(&self, name: &std::ffi::OsStr) -> RelPath {
        RelPath(self.0.join(name))
    }
}

impl std::fmt::Display for RelPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.is_root() {
            f.write_str(".")
        } else {
            self.0.display().fmt(f)
        }
    }
}

/// The lexically normalised form of a relative path (`a/./b/../c` → `a/c`), refusing
/// absolute paths, any `..` that climbs above the start, NUL characters and names
/// longer than file systems take. `""` and `.` mean the root.
pub(crate) fn normalize_relative(text: &str, allow_root: bool) -> Result<PathBuf, PathError> {
    if text.is_empty() && !allow_root {
        return Err(PathError::Empty);
    }
    let quoted = || crate::text::shorten(text, QUOTED);
    if text.contains('\0') {
        return Err(PathError::Nul(quoted().escape_debug().to_string()));
    }
    if text.len() > PATH_LIMIT {
        return Err(PathError::TooLong {
            path: quoted(),
            len: text.len(),
        });
    }
    let path = Path::new(text);
    let looks_windows_absolute = text.len() >= 2 && text.as_bytes()[1] == b':';
    if path.is_absolute()
        || text.starts_with('/')
        || text.starts_with('\\')
        || looks_windows_absolute
    {
        return Err(PathError::Absolute(quoted()));
    }
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::Normal(part) => {
                let len = part.len();
                if len > NAME_MAX {
                    return Err(PathError::NameTooLong {
                        path: crate::text::shorten(text, 80),
                        len,
                    });
                }
                #[cfg(windows)]
                if windows_device(part) {
                    return Err(PathError::Reserved(quoted()));
                }
                out.push(part)
            }
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    return Err(PathError::Escapes(quoted()));
                }
            }
            Component::RootDir | Component::Prefix(_) => {
                return Err(PathError::Absolute(quoted()));
            }
        }
    }
    if out.as_os_str().is_empty() && !allow_root {
        return Err(PathError::Empty);
    }
    Ok(out)
}

/// Whether `name` is one Windows keeps for a device, whatever its extension.
#[cfg(windows)]
fn windows_device(name: &std::ffi::OsStr) -> bool {
    let name = name.to_string_lossy().to_ascii_uppercase();
    let stem = name.split('.').next().unwrap_or("").trim_end();
    matches!(stem, "CON" | "PRN" | "AUX" | "NUL")
        || ((stem.starts_with("COM") || stem.starts_with("LPT"))
            && stem.len() == 4
            && stem.as_bytes()[3].is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalizes_and_refuses_escapes() {
        assert_eq!(
            normalize_relative("a/./b/../c", false).unwrap(),
            PathBuf::from("a/c")
        );
        assert!(matches!(
            normalize_relative("../x", false),
            Err(PathError::Escapes(_))
        ));
        assert!(matches!(
            normalize_relative("a/../../x", false),
            Err(PathError::Escapes(_))
        ));
        assert!(matches!(
            normalize_relative("/etc/passwd", false),
            Err(PathError::Absolute(_))
        ));
        assert!(matches!(
            normalize_relative("C:\\x", false),
            Err(PathError::Absolute(_))
        ));
        assert!(matches!(
            normalize_relative("", false),
            Err(PathError::Empty)
        ));
        assert!(matches!(
            normalize_relative("a/..", false),
            Err(PathError::Empty)
        ));
        assert_eq!(normalize_relative(".", true).unwrap(), PathBuf::new());
        assert!(matches!(
            normalize_relative("a\0b", false),
            Err(PathError::Nul(_))
        ));
        let long = "x".repeat(256);
        assert!(matches!(
            normalize_relative(&format!("d/{long}"), false),
            Err(PathError::NameTooLong { len: 256, .. })
        ));
        assert!(normalize_relative(&"x".repeat(255), false).is_ok());
        let rel = RelPath::parse("a/b/c.txt", false).unwrap();
        let (parent, name) = rel.split_last().unwrap();
        assert_eq!(
            (parent.as_path(), name),
            (Path::new("a/b"), "c.txt".as_ref())
        );
        assert!(RelPath::parse(".", true).unwrap().is_root());
        assert_eq!(RelPath::parse(".", true).unwrap().to_string(), ".");
    }
}
