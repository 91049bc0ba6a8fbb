//! Reading a run dir's own files back, bounded: the limit on what is read, `run.json`,
//! and what is said of a stored file that cannot be read.

use std::path::Path;

use serde_json::Value;

use super::layout::RUN_JSON;
use crate::regular_file::read_text;

/// The largest file of a run dir read back (`status.json`, `response.log`): anything
/// may have been put where one is expected, a FIFO or `/dev/zero` included, and reading
/// it must neither block nor run out of memory.
pub(crate) const STORED_FILE_LIMIT: u64 = 256 << 20;

/// The `run.json` of a ufo-batch run dir at `dir`, if `dir` is one.
pub(crate) fn read_run_json(dir: &Path) -> Option<Value> {
    let text = read_text(&dir.join(RUN_JSON), STORED_FILE_LIMIT).ok()?;
    let value: Value = serde_json::from_str(&text).ok()?;
    (value.get("tool").and_then(|t| t.as_str()) == Some("ufo-batch")).then_some(value)
}

/// A `status.json` of a run dir that could not be read, or does not count.
#[derive(Clone, Debug)]
pub(crate) struct Unreadable {
    /// The file.
    pub(crate) path: std::path::PathBuf,
    /// Why, in words.
    pub(crate) why: String,
}

impl std::fmt::Display for Unreadable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.why)
    }
}
