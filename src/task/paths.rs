//! The paths of a batch's task files, held as one block: each file's path relative to
//! the folder it was found under, one after another, with where each ends, and each
//! folder once. A batch of a million files keeps its paths in the bytes that tell them
//! apart and eight more each, with no allocation per path. A file found, and a task
//! held by its file until it starts, name their path by its place in the block.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::tool::ToolSpec;

/// Paths, one after another.
#[derive(Debug, Default)]
pub(crate) struct PathBlock {
    /// Each path relative to its folder.
    bytes: Vec<u8>,
    ends: Vec<usize>,
    /// The folders, each with the place of its first path (in order of places).
    roots: Vec<(u32, PathBuf)>,
}

impl PathBlock {
    /// Adds `path`, found under the folder `root` (the whole path when it is not under
    /// it); its place.
    pub(crate) fn push(&mut self, root: &Path, path: &Path) -> u32 {
        let at = u32::try_from(self.ends.len()).expect("fewer than 2^32 task files in a batch");
        let (root, relative) = match path.strip_prefix(root) {
            Ok(relative) => (root, relative),
            Err(_) => (Path::new(""), path),
        };
        // (Bytes compared: a walk gives the same folder each time.)
        if (self.roots.last()).is_none_or(|(_, last)| last.as_os_str() != root.as_os_str()) {
            self.roots.push((at, root.to_path_buf()));
        }
        self.bytes.extend_from_slice(bytes_of(relative));
        self.ends.push(self.bytes.len());
        at
    }

    /// The path at `at` (a place [`PathBlock::push`] gave).
    pub(crate) fn get(&self, at: u32) -> PathBuf {
        let relative = self.relative(at);
        let root = self.root(at);
        if relative.as_os_str().is_empty() {
            root.to_path_buf()
        } else {
            root.join(relative)
        }
    }

    /// The path at `at` relative to the folder it was found under.
    pub(crate) fn relative(&self, at: u32) -> &Path {
        let at = at as usize;
        let start = match at {
            0 => 0,
            _ => self.ends[at - 1],
        };
        path_of(&self.bytes[start..self.ends[at]])
    }

    /// The folder the path at `at` was found under.
    fn root(&self, at: u32) -> &Path {
        let of = self.roots.partition_point(|(first, _)| *first <= at);
        self.roots
            .get(of.wrapping_sub(1))
            .map_or(Path::new(""), |(_, root)| root)
    }

    /// How many paths.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.ends.len()
    }

    /// Adds every path of `other`; the place its first path now has.
    pub(crate) fn append(&mut self, other: PathBlock) -> u32 {
        let first = u32::try_from(self.ends.len()).expect("fewer than 2^32 task files in a batch");
        let base = self.bytes.len();
        self.bytes.extend_from_slice(&other.bytes);
        self.ends.extend(other.ends.iter().map(|end| end + base));
        self.roots
            .extend((other.roots.into_iter()).map(|(at, root)| (at + first, root)));
        first
    }

    /// Lets go of room not used.
    pub(crate) fn shrink_to_fit(&mut self) {
        self.bytes.shrink_to_fit();
        self.ends.shrink_to_fit();
    }
}

/// The folder of the file `path`, as `path` gives it: its bytes up to the file's name,
/// separators and all (`Path::parent` tidies `a//b` and `a/./b`, and the file would be
/// shown otherwise than as it was given).
pub(crate) fn folder_as_given(path: &Path) -> &Path {
    let bytes = bytes_of(path);
    match path.file_name().map(|name| bytes_of(Path::new(name))) {
        // Cut right after a separator (or a drive), before the name that ends the path.
        Some(name) if bytes.ends_with(name) => path_of(&bytes[..bytes.len() - name.len()]),
        _ => path.parent().unwrap_or(Path::new("")),
    }
}

#[cfg(unix)]
fn bytes_of(path: &Path) -> &[u8] {
    use std::os::unix::ffi::OsStrExt;
    path.as_os_str().as_bytes()
}

#[cfg(unix)]
fn path_of(bytes: &[u8]) -> &Path {
    use std::os::unix::ffi::OsStrExt;
    Path::new(std::ffi::OsStr::from_bytes(bytes))
}

#[cfg(not(unix))]
fn bytes_of(path: &Path) -> &[u8] {
    path.as_os_str().as_encoded_bytes()
}

#[cfg(not(unix))]
fn path_of(bytes: &[u8]) -> &Path {
    // SAFETY: the bytes between two ends of a block are exactly those `as_encoded_bytes`
    // gave for one path, in this process (a block is never written or read elsewhere).
    Path::new(unsafe { std::ffi::OsStr::from_encoded_bytes_unchecked(bytes) })
}

/// What the tasks of a batch held by their files share: their paths, and the tools
/// their plans were checked against (they are checked again when read again).
#[derive(Debug)]
pub(crate) struct BatchFiles {
    pub(crate) paths: PathBlock,
    pub(crate) tools: Arc<[ToolSpec]>,
}

/// One file of a batch: the batch's files and its place among them.
#[derive(Clone, Debug)]
pub(crate) struct FilePlace {
    pub(crate) files: Arc<BatchFiles>,
    pub(crate) at: u32,
}

impl FilePlace {
    /// The file's path.
    pub(crate) fn path(&self) -> PathBuf {
        self.files.paths.get(self.at)
    }

    /// A batch of the one file `path` (for a task checked alone).
    #[cfg(test)]
    pub(crate) fn alone(path: &Path, tools: Arc<[ToolSpec]>) -> Self {
        let mut paths = PathBlock::default();
        let at = paths.push(path.parent().unwrap_or(Path::new("")), path);
        Self {
            files: Arc::new(BatchFiles { paths, tools }),
            at,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_path_is_given_back_as_it_was_pushed() {
        let mut block = PathBlock::default();
        let found = [
            ("/r", "/r/a/b.json", "a/b.json"),
            ("/r", "/r/c.json", "c.json"),
            ("./plans/", "./plans/x.json", "x.json"),
            ("elsewhere", "plans/ü x.json", "plans/ü x.json"),
            ("/r", "/r", ""),
            ("", "t.json", "t.json"),
        ];
        let places: Vec<u32> = found
            .iter()
            .map(|(root, path, _)| block.push(Path::new(root), Path::new(path)))
            .collect();
        let mut other = PathBlock::default();
        other.push(Path::new("/o"), Path::new("/o/one.json"));
        other.push(Path::new("/p"), Path::new("/p/two.json"));
        let first = block.append(other);
        block.shrink_to_fit();
        assert_eq!(block.len(), 8);
        for (at, (_, path, relative)) in places.iter().zip(found) {
            assert_eq!(block.get(*at), Path::new(path));
            assert_eq!(block.relative(*at), Path::new(relative));
        }
        assert_eq!(block.get(first), Path::new("/o/one.json"));
        assert_eq!(block.get(first + 1), Path::new("/p/two.json"));
        assert_eq!(block.relative(first + 1), Path::new("two.json"));
        // Each folder is held once.
        assert_eq!(block.roots.len(), 7);
    }

    /// A file given by name is held as it was given, and named by its name.
    #[test]
    fn a_file_given_keeps_its_path_as_typed() {
        for (given, folder) in [
            ("plans//t.json", "plans//"),
            ("plans/./t.json", "plans/./"),
            ("t.json", ""),
            ("/abs/t.json", "/abs/"),
            ("./t.json", "./"),
        ] {
            let path = Path::new(given);
            assert_eq!(folder_as_given(path), Path::new(folder), "{given}");
            let mut block = PathBlock::default();
            let at = block.push(folder_as_given(path), path);
            assert_eq!(block.get(at).as_os_str(), path.as_os_str(), "{given}");
            assert_eq!(block.relative(at), Path::new("t.json"), "{given}");
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_path_that_is_not_utf8_is_held_byte_for_byte() {
        use std::os::unix::ffi::OsStrExt;
        let odd = Path::new(std::ffi::OsStr::from_bytes(b"/t/\xff\xfe.json"));
        let mut block = PathBlock::default();
        block.push(Path::new("/t"), Path::new("/t/a.json"));
        let at = block.push(Path::new("/t"), odd);
        assert_eq!(block.get(at), odd);
    }
}
