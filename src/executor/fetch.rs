//! What a check needs of a file, when the task ran elsewhere (a remote device): the
//! checks read files in the local workspace, so a remote executor brings each file there
//! first, as much of it as its check needs.

use crate::task::Check;

/// A file a check reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Fetch {
    /// Its path, relative to the task's folder.
    pub(crate) path: String,
    /// What the check reads of it.
    pub(crate) kind: FetchKind,
}

/// What a check reads of a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FetchKind {
    /// Only whether it is there (`file_exists`).
    Exists,
    /// Its text (`file_contains`, `file_equals`).
    Text,
    /// Its bytes (a document: `document_contains`, `cell_equals`).
    Bytes,
}

impl Fetch {
    /// What `check` reads, if it reads a file.
    pub(crate) fn of(check: &Check) -> Option<Self> {
        let kind = match check {
            Check::FileExists { .. } => FetchKind::Exists,
            Check::FileContains { .. } | Check::FileEquals { .. } => FetchKind::Text,
            Check::DocumentContains { .. } | Check::CellEquals { .. } => FetchKind::Bytes,
            Check::Command { .. } => return None,
        };
        Some(Self {
            path: check.path()?.to_string(),
            kind,
        })
    }
}
