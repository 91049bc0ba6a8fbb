//! Workspace-relative paths: the one place that decides whether a path given by a task
//! file, a recorded plan or a model stays inside the task's workspace.

use std::path::{Component, Path, PathBuf};

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
    /// Resolves, through a symbolic link, to a place outside the workspace.
    #[error("`{0}` leads outside the workspace through a symbolic link")]
    Symlink(String),
}

/// The lexically normalised form of a relative path (`a/./b/../c` → `a/c`), refusing
/// absolute paths and any `..` that climbs above the start. `""` and `.` mean the root.
pub(crate) fn normalize_relative(text: &str, allow_root: bool) -> Result<PathBuf, PathError> {
    if text.is_empty() && !allow_root {
        return Err(PathError::Empty);
    }
    let path = Path::new(text);
    let looks_windows_absolute = text.len() >= 2 && text.as_bytes()[1] == b':';
    if path.is_absolute()
        || text.starts_with('/')
        || text.starts_with('\\')
        || looks_windows_absolute
    {
        return Err(PathError::Absolute(text.to_string()));
    }
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::Normal(part) => out.push(part),
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    return Err(PathError::Escapes(text.to_string()));
                }
            }
            Component::RootDir | Component::Prefix(_) => {
                return Err(PathError::Absolute(text.to_string()));
            }
        }
    }
    if out.as_os_str().is_empty() && !allow_root {
        return Err(PathError::Empty);
    }
    Ok(out)
}

/// `text` resolved inside `root`, refusing lexical escapes and symbolic links that
/// lead out of `root`. The file itself need not exist; its nearest existing ancestor
/// is what is checked.
pub(crate) fn resolve_in(root: &Path, text: &str, allow_root: bool) -> Result<PathBuf, PathError> {
    let relative = normalize_relative(text, allow_root)?;
    let joined = root.join(&relative);
    let real_root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    let mut probe = joined.as_path();
    loop {
        if let Ok(real) = probe.canonicalize() {
            if !real.starts_with(&real_root) {
                return Err(PathError::Symlink(text.to_string()));
            }
            break;
        }
        match probe.parent() {
            Some(parent) if parent.starts_with(root) => probe = parent,
            _ => break,
        }
    }
    Ok(joined)
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
    }

    #[cfg(unix)]
    #[test]
    fn refuses_symlinks_out_of_the_root() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("ws");
        std::fs::create_dir(&root).unwrap();
        std::os::unix::fs::symlink(dir.path(), root.join("up")).unwrap();
        assert!(matches!(
            resolve_in(&root, "up/secret", false),
            Err(PathError::Symlink(_))
        ));
        assert_eq!(
            resolve_in(&root, "new/file.txt", false).unwrap(),
            root.join("new/file.txt")
        );
    }
}
