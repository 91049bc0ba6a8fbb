//! The paths of a batch's task files, held as one block: each path's bytes one after
//! another, with where each ends. A batch of a million files keeps its paths in their
//! own bytes and eight more each, with no allocation per path. A file found, and a task
//! held by its file until it starts, name their path by its place in the block.

use std::path::Path;
use std::sync::Arc;

use crate::tool::ToolSpec;

/// Paths, one after another.
#[derive(Debug, Default)]
pub(crate) struct PathBlock {
    bytes: Vec<u8>,
    ends: Vec<usize>,
}

impl PathBlock {
    /// Adds `path`; its place.
    pub(crate) fn push(&mut self, path: &Path) -> u32 {
        let at = u32::try_from(self.ends.len()).expect("fewer than 2^32 task files in a batch");
        self.bytes.extend_from_slice(bytes_of(path));
        self.ends.push(self.bytes.len());
        at
    }

    /// The path at `at` (a place [`PathBlock::push`] gave).
    pub(crate) fn get(&self, at: u32) -> &Path {
        let at = at as usize;
        let start = match at {
            0 => 0,
            _ => self.ends[at - 1],
        };
        path_of(&self.bytes[start..self.ends[at]])
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
        first
    }

    /// Lets go of room not used.
    pub(crate) fn shrink_to_fit(&mut self) {
        self.bytes.shrink_to_fit();
        self.ends.shrink_to_fit();
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
    pub(crate) fn path(&self) -> &Path {
        self.files.paths.get(self.at)
    }

    /// A batch of the one file `path` (for a task checked alone).
    #[cfg(test)]
    pub(crate) fn alone(path: &Path, tools: Arc<[ToolSpec]>) -> Self {
        let mut paths = PathBlock::default();
        let at = paths.push(path);
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
        let names = ["/a/b.json", "", "rel/ü x.json", "c"];
        let places: Vec<u32> = names.iter().map(|n| block.push(Path::new(n))).collect();
        let mut other = PathBlock::default();
        other.push(Path::new("/other/one.json"));
        other.push(Path::new("two.json"));
        let first = block.append(other);
        block.shrink_to_fit();
        assert_eq!(block.len(), 6);
        for (at, name) in places.iter().zip(names) {
            assert_eq!(block.get(*at), Path::new(name));
        }
        assert_eq!(block.get(first), Path::new("/other/one.json"));
        assert_eq!(block.get(first + 1), Path::new("two.json"));
    }

    #[cfg(unix)]
    #[test]
    fn a_path_that_is_not_utf8_is_held_byte_for_byte() {
        use std::os::unix::ffi::OsStrExt;
        let odd = Path::new(std::ffi::OsStr::from_bytes(b"/t/\xff\xfe.json"));
        let mut block = PathBlock::default();
        block.push(Path::new("/t/a.json"));
        let at = block.push(odd);
        assert_eq!(block.get(at), odd);
    }
}
