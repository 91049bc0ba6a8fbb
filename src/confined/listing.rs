//! What a folder a task made holds, read with a bound: a listing keeps the first names in
//! order and counts the rest (a folder of a million files costs a count, not a million
//! entries), and a walk of the whole tree stops after a number of entries and a depth.

use std::collections::BinaryHeap;
use std::ffi::OsString;

use super::{Confined, Kind, TaskRights};
use crate::regular_file::FileAccessError;
use crate::relpath::RelPath;

/// One entry of a listing or a walk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Entry {
    /// Its path below the folder listed (its name, in a listing).
    pub(crate) path: RelPath,
    /// What it is (a link is not followed).
    pub(crate) kind: Kind,
    /// Its size in bytes.
    pub(crate) size: u64,
}

/// A folder's first entries, by name, and how many more it has.
#[derive(Debug)]
pub(crate) struct Listing {
    /// At most the number asked for, sorted by name.
    pub(crate) entries: Vec<Entry>,
    /// The entries left out.
    pub(crate) more: u64,
}

/// Entries of a whole tree, in order (a folder, then what it holds, by name).
#[derive(Debug, Default)]
pub(crate) struct Walk {
    /// The first entries, at most the number asked for.
    pub(crate) entries: Vec<Entry>,
    /// Every entry looked at, the listed ones among them.
    pub(crate) seen: u64,
    /// False when the walk stopped before the end (too many entries, too deep, or a
    /// folder that could not be read): `seen` is then a lower bound.
    pub(crate) complete: bool,
}

/// How deep a walk goes (each level holds a folder open).
const MAX_DEPTH: usize = 32;

impl Confined {
    /// The first `max` entries of the folder `rel`, by name, and how many more it has.
    pub(crate) fn list(&self, rel: &RelPath, max: usize) -> Result<Listing, FileAccessError> {
        let _rights = TaskRights::enter()?;
        let folder = match self.root.folder(rel) {
            Err(FileAccessError::NotAFolderOnTheWay) => match self.root.kind_at(rel) {
                Ok(Some((kind, _))) => return Err(FileAccessError::NotAFolder(kind.described())),
                _ => return Err(FileAccessError::NotAFolderOnTheWay),
            },
            other => other?,
        };
        // The `max` smallest names: a max-heap whose top is the largest kept.
        let mut kept: BinaryHeap<OsString> = BinaryHeap::with_capacity(max.min(4096) + 1);
        let mut total = 0u64;
        for name in folder.names()? {
            let name = name?;
            total += 1;
            if kept.len() < max {
                kept.push(name);
            } else if kept.peek().is_some_and(|largest| name < *largest) {
                kept.pop();
                kept.push(name);
            }
        }
        let names = kept.into_sorted_vec();
        let more = total - names.len() as u64;
        let mut entries = Vec::with_capacity(names.len());
        for name in names {
            // Gone since it was read: left out.
            if let Some((kind, size)) = folder.stat(&name)? {
                entries.push(Entry {
                    path: RelPath::root().join_name(&name),
                    kind,
                    size,
                });
            }
        }
        Ok(Listing { entries, more })
    }

    /// The tree below the root: its first `max_listed` entries in order, looking at no
    /// more than `max_seen` entries in all.
    pub(crate) fn walk(&self, max_listed: usize, max_seen: u64) -> Walk {
        let mut walk = Walk {
            complete: true,
            ..Walk::default()
        };
        let Ok(_rights) = TaskRights::enter() else {
            walk.complete = false;
            return walk;
        };
        let limits = Limits {
            listed: max_listed,
            seen: max_seen,
        };
        match self.root.folder(&RelPath::root()) {
            Ok(folder) => descend(&folder, &RelPath::root(), 0, &mut walk, limits),
            Err(_) => walk.complete = false,
        }
        walk
    }
}

#[derive(Clone, Copy)]
struct Limits {
    listed: usize,
    seen: u64,
}

#[cfg(unix)]
type Folder = super::unix::Folder;
#[cfg(not(unix))]
type Folder = super::other::Folder;

fn descend(folder: &Folder, at: &RelPath, depth: usize, walk: &mut Walk, limits: Limits) {
    let Ok(names) = folder.names() else {
        walk.complete = false;
        return;
    };
    let mut here = Vec::new();
    for name in names {
        if walk.seen + here.len() as u64 >= limits.seen {
            walk.complete = false;
            break;
        }
        match name {
            Ok(name) => here.push(name),
            Err(_) => {
                walk.complete = false;
                break;
            }
        }
    }
    here.sort();
    for name in here {
        if walk.seen >= limits.seen {
            walk.complete = false;
            break;
        }
        walk.seen += 1;
        let Ok(Some((kind, size))) = folder.stat(&name) else {
            continue;
        };
        let path = at.join_name(&name);
        if walk.entries.len() < limits.listed {
            walk.entries.push(Entry {
                path: path.clone(),
                kind,
                size,
            });
        }
        if kind != Kind::Dir {
            continue;
        }
        if depth + 1 >= MAX_DEPTH {
            walk.complete = false;
            continue;
        }
        match folder.child(&name) {
            Ok(child) => descend(&child, &path, depth + 1, walk, limits),
            Err(_) => walk.complete = false,
        }
    }
}
