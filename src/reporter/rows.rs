//! The rows a run's files are written from, one per task, as the files reporter holds
//! them while the run goes on. A run's rows have their places in its selection (every
//! task id of the batch, sorted), and each row is in the run's spool (see
//! [`RowSpool`]): a task costs the runner the place of its row, 8 bytes, however many
//! tasks the batch has.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use super::spool::{RowAt, RowSpool};
use crate::record::{EncodedRows, RowSource, TaskRow};
use crate::task::TaskId;

/// Rows by task id.
#[derive(Debug)]
pub(crate) struct Rows {
    /// The ids rows are placed by, sorted.
    ids: Arc<Vec<TaskId>>,
    /// Where the row of each of `ids` is, once there is one.
    placed: Vec<Option<RowAt>>,
    /// Rows whose id is not among `ids` (none in a run; kept all the same).
    others: BTreeMap<TaskId, TaskRow>,
    spool: RowSpool,
}

impl Rows {
    /// No rows yet; those placed go to a spool file in `dir` (or stay in memory when
    /// `None`).
    pub(crate) fn spooled_in(dir: Option<&Path>) -> Self {
        Self {
            ids: Arc::default(),
            placed: Vec::new(),
            others: BTreeMap::new(),
            spool: RowSpool::in_dir(dir),
        }
    }

    /// Rows placed by `ids`, which must be sorted (the rows already held stay).
    pub(crate) fn place_by(&mut self, ids: Arc<Vec<TaskId>>) {
        debug_assert!(ids.is_sorted(), "rows are placed by sorted ids");
        let held: Vec<TaskRow> = self.rows().map(Cow::into_owned).collect();
        self.placed = vec![None; ids.len()];
        self.ids = ids;
        self.others.clear();
        for row in held {
            self.insert(&row);
        }
    }

    /// Keeps `row`, in place of the row of its task held before.
    pub(crate) fn insert(&mut self, row: &TaskRow) {
        match self.ids.binary_search(&row.id) {
            Ok(i) => self.placed[i] = Some(self.spool.append(row)),
            Err(_) => {
                self.others.insert(row.id.clone(), row.clone());
            }
        }
    }

    /// Keeps each of `rows` (read whole from an earlier invocation), in place of the
    /// row of its task held before.
    pub(crate) fn insert_all(&mut self, rows: &EncodedRows) {
        let base = self.spool.append_all(rows);
        for (id, at) in rows.ids() {
            let at = base.plus(at);
            match self.ids.binary_search(&id) {
                Ok(i) => self.placed[i] = Some(at),
                Err(_) => {
                    if let Some(row) = self.spool.read(at) {
                        self.others.insert(id, row);
                    }
                }
            }
        }
    }

    /// Rows that could not be kept on disk or read back, in words.
    pub(crate) fn problems(&self) -> Vec<String> {
        self.spool.problems()
    }
}

impl RowSource for Rows {
    fn rows(&self) -> Box<dyn Iterator<Item = Cow<'_, TaskRow>> + '_> {
        let mut reader = self.spool.reader();
        let mut placed = self
            .placed
            .iter()
            .flatten()
            .filter_map(move |at| reader.read(*at))
            .peekable();
        let mut others = self.others.values().peekable();
        Box::new(std::iter::from_fn(move || {
            match (placed.peek(), others.peek()) {
                (Some(a), Some(b)) if b.id < a.id => others.next().map(Cow::Borrowed),
                (Some(_), _) => placed.next().map(Cow::Owned),
                (None, _) => others.next().map(Cow::Borrowed),
            }
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(id: &str, steps: u32) -> TaskRow {
        let mut r = crate::testutil::record(id);
        r.steps = steps;
        TaskRow::of(&r)
    }

    #[test]
    fn rows_come_out_by_id_once_each_whether_placed_or_not() {
        let dir = tempfile::tempdir().unwrap();
        let mut rows = Rows::spooled_in(Some(dir.path()));
        rows.insert(&row("early", 1));
        let ids: Vec<TaskId> = ["b", "d", "f"].map(|i| TaskId::parse(i).unwrap()).into();
        rows.place_by(Arc::new(ids));
        for (id, steps) in [("f", 1), ("a", 1), ("d", 1), ("g", 1), ("d", 2), ("c", 1)] {
            rows.insert(&row(id, steps));
        }
        let out: Vec<(String, u32)> = rows.rows().map(|r| (r.id.to_string(), r.steps)).collect();
        let want = [
            ("a", 1),
            ("c", 1),
            ("d", 2),
            ("early", 1),
            ("f", 1),
            ("g", 1),
        ];
        assert_eq!(out, want.map(|(id, n)| (id.to_string(), n)));
        assert!(rows.others.len() == 4 && rows.placed[0].is_none());
        assert!(rows.problems().is_empty());
    }
}
