//! Task rows encoded one after another, as a run's spool holds them: each is its
//! length (4 bytes, little-endian) and then its postcard encoding. A resumed run reads
//! the rows it keeps into one such buffer (a few dozen bytes a row, not a row each),
//! and hands it to the reporters whole.

use super::{TaskRow, TaskStatus};
use crate::task::TaskId;

/// Appends `row`, encoded, to `out`.
pub(crate) fn encode_row(row: &TaskRow, out: &mut Vec<u8>) {
    let start = out.len();
    out.extend_from_slice(&[0; 4]);
    match postcard::to_extend(row, std::mem::take(out)) {
        Ok(bytes) => *out = bytes,
        // A row always encodes: it has no map, and every sequence knows its length.
        Err(e) => unreachable!("a task row encodes: {e}"),
    }
    let len = u32::try_from(out.len() - start - 4).unwrap_or(u32::MAX);
    out[start..start + 4].copy_from_slice(&len.to_le_bytes());
}

/// The row encoded in `bytes` (without its length).
pub(crate) fn decode_row(bytes: &[u8]) -> Result<TaskRow, postcard::Error> {
    postcard::from_bytes(bytes)
}

/// The length of the row whose length is `prefix`.
pub(crate) fn row_len(prefix: &[u8]) -> usize {
    let mut len = [0; 4];
    len.copy_from_slice(&prefix[..4]);
    u32::from_le_bytes(len) as usize
}

/// Rows encoded one after another, with each one's status.
#[derive(Debug, Default)]
pub(crate) struct EncodedRows {
    bytes: Vec<u8>,
    statuses: Vec<TaskStatus>,
}

impl EncodedRows {
    /// Adds `row`.
    pub(crate) fn push(&mut self, row: &TaskRow) {
        encode_row(row, &mut self.bytes);
        self.statuses.push(row.status);
    }

    /// How many rows.
    pub(crate) fn len(&self) -> usize {
        self.statuses.len()
    }

    /// It holds no row.
    pub(crate) fn is_empty(&self) -> bool {
        self.statuses.is_empty()
    }

    /// Each row's status, in order.
    pub(crate) fn statuses(&self) -> &[TaskStatus] {
        &self.statuses
    }

    /// The rows as a spool holds them.
    pub(crate) fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// Each row's task id and where it starts in [`Self::bytes`]; a row whose id cannot
    /// be read (none: each was encoded here) is left out.
    pub(crate) fn ids(&self) -> impl Iterator<Item = (TaskId, usize)> + '_ {
        let mut at = 0;
        std::iter::from_fn(move || {
            while at + 4 <= self.bytes.len() {
                let start = at;
                let len = row_len(&self.bytes[at..]);
                at += 4 + len;
                // The id is the row's first field.
                if let Ok((id, _)) = postcard::take_from_bytes::<TaskId>(&self.bytes[start + 4..at])
                {
                    return Some((id, start));
                }
            }
            None
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_decode_as_they_were_and_name_their_tasks() {
        let rows: Vec<TaskRow> = (0..50)
            .map(|i| {
                let mut r = crate::testutil::record(&format!("g/t{i}"));
                r.status = if i % 3 == 0 {
                    TaskStatus::Failed
                } else {
                    TaskStatus::Passed
                };
                r.error = Some("é".repeat(i));
                TaskRow::of(&r)
            })
            .collect();
        let mut all = EncodedRows::default();
        rows.iter().for_each(|r| all.push(r));
        assert_eq!(all.len(), 50);
        let statuses: Vec<TaskStatus> = rows.iter().map(|r| r.status).collect();
        assert_eq!(all.statuses(), statuses);
        for ((id, at), row) in all.ids().zip(&rows) {
            assert_eq!(id, row.id);
            let len = row_len(&all.bytes()[at..]);
            assert_eq!(
                &decode_row(&all.bytes()[at + 4..at + 4 + len]).unwrap(),
                row
            );
        }
        assert_eq!(all.ids().count(), 50);
    }
}
