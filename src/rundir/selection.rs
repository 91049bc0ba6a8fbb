//! `selection.json`: the tasks a run dir answers for. It lists every task id of the
//! batch (before `--shard`; with `--repeat K`, the K repetitions of each task) and the
//! shard; `report`, `merge` and `compare` count these and only these, so that a folder
//! left from a task no longer in the batch, or a task of another shard, changes no total.

use std::path::Path;

use serde_json::Value;

use super::layout::RunLayout;
use super::stored::{STORED_FILE_LIMIT, Unreadable, read_run_json};
use crate::regular_file::{FileAccessError, read_text};
use crate::shard::Shard;
use crate::task::TaskId;

/// A run dir's `selection.json`, read back.
#[derive(Clone, Debug)]
pub(crate) struct Selection {
    /// The run's shard, if it ran one.
    pub(crate) shard: Option<Shard>,
    /// Every task id of the batch, sorted.
    pub(crate) ids: Vec<TaskId>,
    /// `--repeat` of the run (1 without).
    repeat: u32,
}

impl Selection {
    /// Whether the task `id` is one this run dir answers for: of the batch and, for a
    /// shard, of the shard. A repetition (`ID/rep-N`) goes with its task, also in a
    /// `selection.json` that an earlier version wrote with the tasks alone.
    pub(crate) fn holds(&self, id: &TaskId) -> bool {
        let base = self.task_of(id);
        let listed = self.listed(id) || base.as_ref().is_some_and(|b| self.listed(b));
        listed && self.in_shard(id, base.as_ref())
    }

    /// The ids of the batch in this run's shard.
    pub(crate) fn members(&self) -> impl Iterator<Item = &TaskId> {
        self.ids
            .iter()
            .filter(|id| self.in_shard(id, self.task_of(id).as_ref()))
    }

    /// Which repetition `id` is (`ID/rep-N`: N), in a `--repeat` run.
    pub(crate) fn repetition(&self, id: &TaskId) -> Option<u32> {
        self.task_of(id)?;
        id.segments().last()?.strip_prefix("rep-")?.parse().ok()
    }

    fn listed(&self, id: &TaskId) -> bool {
        self.ids.binary_search(id).is_ok()
    }

    fn in_shard(&self, id: &TaskId, task: Option<&TaskId>) -> bool {
        match self.shard {
            None => true,
            // The shard was drawn before the repetitions were made.
            Some(shard) => task.map_or_else(|| shard.contains(id), |t| shard.contains(t)),
        }
    }

    /// The task a repetition is of, in a `--repeat` run.
    fn task_of(&self, id: &TaskId) -> Option<TaskId> {
        if self.repeat < 2 {
            return None;
        }
        let last = id.segments().last()?;
        let n: u32 = last.strip_prefix("rep-")?.parse().ok()?;
        (1..=self.repeat)
            .contains(&n)
            .then(|| TaskId::parse(id.group()).ok())
            .flatten()
    }
}

/// The selection of the run dir at `dir`: `None` when it has none (a run dir of a
/// version before it), and why when there is one that cannot be read (then which tasks
/// the run dir answers for is not known, and the caller must say so).
pub(crate) fn read_selection(dir: &Path) -> Result<Option<Selection>, Unreadable> {
    let path = RunLayout::new(dir).selection();
    let unreadable = |why: String| Unreadable {
        path: path.clone(),
        why,
    };
    let text = match read_text(&path, STORED_FILE_LIMIT) {
        Ok(text) => text,
        Err(FileAccessError::NotFound) => return Ok(None),
        Err(e) => return Err(unreadable(format!("cannot read it: {e}"))),
    };
    let v: Value = serde_json::from_str(&text)
        .map_err(|e| unreadable(format!("it is not the JSON a run writes: {e}")))?;
    let shard = v["shard"].as_str().and_then(|s| Shard::parse(s).ok());
    let Some(tasks) = v["tasks"].as_array() else {
        return Err(unreadable("it has no list of \"tasks\"".to_string()));
    };
    let mut ids: Vec<TaskId> = tasks
        .iter()
        .filter_map(|i| i.as_str().and_then(|s| TaskId::parse(s).ok()))
        .collect();
    ids.sort();
    let repeat = read_run_json(dir)
        .and_then(|run| run["config"]["repeat"].as_u64())
        .map_or(1, |k| k.clamp(1, u64::from(u32::MAX)) as u32);
    Ok(Some(Selection { shard, ids, repeat }))
}
