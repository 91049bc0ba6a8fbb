//! Task rows kept on disk while a run goes on, so that a runner holds a few bytes per
//! task however large the batch: each row is encoded (postcard) and appended to an
//! unnamed temporary file in the run dir, which the system removes when the runner
//! ends, however it ends. Where no such file can be made (or written), rows stay in
//! memory, encoded, and nothing is lost.
//!
//! Rows are read back by the place they were appended at, each pass through a window of
//! its own (so that passes can go on side by side), read a block at a time: a run's rows
//! arrive roughly in the order they are read (by id), so a pass over a million rows
//! costs a few thousand reads.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::record::{EncodedRows, TaskRow, decode_row, encode_row, row_len};

/// Encoded rows waiting to be written, at most.
const PENDING_MAX: usize = 64 * 1024;
/// Bytes read from the file at a time.
const WINDOW: usize = 64 * 1024;
/// Bytes read for a single row, at least.
const ROW_BLOCK: usize = 1024;

/// Where a row is in the spool (one past its offset: an `Option<RowAt>` is 8 bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RowAt(std::num::NonZeroU64);

impl RowAt {
    /// The place `bytes` further on.
    pub(crate) fn plus(self, bytes: usize) -> RowAt {
        RowAt(self.0.saturating_add(bytes as u64))
    }
}

/// An append-only store of task rows.
#[derive(Debug)]
pub(crate) struct RowSpool {
    /// Where the file is made, once the first row comes.
    dir: Option<PathBuf>,
    /// The file, once made; `None` when none could be (rows stay in `pending`).
    file: Option<File>,
    /// Tried to make the file.
    opened: bool,
    /// A write failed: what follows stays in memory (what is in the file still reads).
    stopped: bool,
    /// Bytes in the file.
    written: u64,
    /// Rows after `written`, not yet in the file.
    pending: Vec<u8>,
    /// Why the file could not be made, written or read (the rows stayed in memory, or
    /// one could not be read back).
    problems: Mutex<Vec<String>>,
}

impl RowSpool {
    /// A spool whose file will be in `dir` (in memory when `None`).
    pub(crate) fn in_dir(dir: Option<&Path>) -> Self {
        Self {
            dir: dir.map(Path::to_path_buf),
            file: None,
            opened: false,
            stopped: false,
            written: 0,
            pending: Vec::new(),
            problems: Mutex::new(Vec::new()),
        }
    }

    /// Appends `row`; where it is.
    pub(crate) fn append(&mut self, row: &TaskRow) -> RowAt {
        let at = self.end();
        encode_row(row, &mut self.pending);
        self.written_enough();
        at
    }

    /// Appends `rows`; where the first is (see [`RowAt::plus`] for the others).
    pub(crate) fn append_all(&mut self, rows: &EncodedRows) -> RowAt {
        let base = self.end();
        // Many rows are written from where they are: a resumed run's million kept rows
        // are not copied first.
        if rows.bytes().len() >= PENDING_MAX {
            self.write_pending();
            if self.pending.is_empty() && self.write_out(rows.bytes()) {
                return base;
            }
        }
        self.pending.extend_from_slice(rows.bytes());
        self.written_enough();
        base
    }

    /// Where the next row goes.
    fn end(&self) -> RowAt {
        RowAt(std::num::NonZeroU64::MIN.saturating_add(self.written + self.pending.len() as u64))
    }

    /// Writes what is pending once there is enough of it.
    fn written_enough(&mut self) {
        if self.pending.len() >= PENDING_MAX {
            self.write_pending();
        }
    }

    /// The row at `at`; `None` (and a problem noted) when it cannot be read back. For
    /// a pass over many rows, [`RowSpool::reader`].
    pub(crate) fn read(&self, at: RowAt) -> Option<TaskRow> {
        // One row: a block about its size is read (most rows are smaller), not a
        // window for a pass.
        SpoolReader {
            block: ROW_BLOCK,
            ..self.reader()
        }
        .read(at)
    }

    /// A reader for one pass over rows, with its own window.
    pub(crate) fn reader(&self) -> SpoolReader<'_> {
        SpoolReader {
            spool: self,
            block: WINDOW,
            start: 0,
            window: Vec::new(),
        }
    }

    /// Why rows could not be kept on disk or read back, in words (each said once).
    pub(crate) fn problems(&self) -> Vec<String> {
        let mut all = self.noted().clone();
        all.dedup();
        all
    }

    fn noted(&self) -> std::sync::MutexGuard<'_, Vec<String>> {
        self.problems.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Moves the pending rows to the file (making it first); rows stay pending where no
    /// file can be made or written.
    fn write_pending(&mut self) {
        let pending = std::mem::take(&mut self.pending);
        let written = self.write_out(&pending);
        // The room stays for the next rows.
        self.pending = pending;
        if written {
            self.pending.clear();
        }
    }

    /// Writes `bytes` at the end of the file, made on first use; `false` when they
    /// cannot be (the caller keeps them in memory). What a failed write left in the file
    /// is never read: nothing more is written to it, and reads go on from the last whole
    /// write.
    fn write_out(&mut self, bytes: &[u8]) -> bool {
        if !self.opened {
            self.opened = true;
            self.file = self
                .dir
                .as_deref()
                .and_then(|dir| match tempfile::tempfile_in(dir) {
                    Ok(file) => Some(file),
                    Err(e) => {
                        self.noted().push(format!(
                        "cannot make the run's spool file in {} (the rows are kept in memory): {e}",
                        dir.display()
                    ));
                        None
                    }
                });
        }
        let Some(file) = self.file.as_mut().filter(|_| !self.stopped) else {
            return false;
        };
        match file.write_all(bytes) {
            Ok(()) => {
                self.written += bytes.len() as u64;
                true
            }
            Err(e) => {
                self.noted().push(format!(
                    "cannot write the run's spool file (the rows are kept in memory): {e}"
                ));
                self.stopped = true;
                false
            }
        }
    }
}

/// One pass's reads of a spool: the part of the file it read last.
pub(crate) struct SpoolReader<'a> {
    spool: &'a RowSpool,
    /// Bytes read from the file at a time, at least.
    block: usize,
    /// Where `window` starts in the file.
    start: u64,
    window: Vec<u8>,
}

impl SpoolReader<'_> {
    /// The row at `at`; `None` (and a problem noted) when it cannot be read back.
    pub(crate) fn read(&mut self, at: RowAt) -> Option<TaskRow> {
        let offset = at.0.get() - 1;
        let read = self.with_bytes(offset, 4, row_len).and_then(|len| {
            self.with_bytes(offset + 4, len, |bytes| {
                decode_row(bytes)
                    .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))
            })?
        });
        match read {
            Ok(row) => Some(row),
            Err(e) => {
                self.spool.noted().push(format!(
                    "cannot read a task's row back from the run's spool file: {e}"
                ));
                None
            }
        }
    }

    /// What `read` makes of the `len` bytes at `offset`: from what is pending, or from
    /// the file through the window.
    fn with_bytes<R>(
        &mut self,
        offset: u64,
        len: usize,
        read: impl FnOnce(&[u8]) -> R,
    ) -> std::io::Result<R> {
        let spool = self.spool;
        if offset >= spool.written {
            let start = usize::try_from(offset - spool.written).unwrap_or(usize::MAX);
            return spool
                .pending
                .get(start..start.saturating_add(len))
                .map(read)
                .ok_or_else(|| std::io::ErrorKind::UnexpectedEof.into());
        }
        let file = spool
            .file
            .as_ref()
            .ok_or_else(|| std::io::Error::from(std::io::ErrorKind::NotFound))?;
        let end = offset + len as u64;
        if end > spool.written {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        if offset < self.start || end > self.start + self.window.len() as u64 {
            let size = self.block.max(len).min((spool.written - offset) as usize);
            self.window.resize(size, 0);
            if let Err(e) = read_exact_at(file, &mut self.window, offset) {
                self.window.clear();
                return Err(e);
            }
            self.start = offset;
        }
        let from = (offset - self.start) as usize;
        Ok(read(&self.window[from..from + len]))
    }
}

/// Fills `buf` from `file` at `offset`.
#[cfg(unix)]
fn read_exact_at(file: &File, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(file, buf, offset)
}

/// Fills `buf` from `file` at `offset`.
#[cfg(windows)]
fn read_exact_at(file: &File, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
    let mut done = 0;
    while done < buf.len() {
        let n =
            std::os::windows::fs::FileExt::seek_read(file, &mut buf[done..], offset + done as u64)?;
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        done += n;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::TaskStatus;

    fn row(i: usize) -> TaskRow {
        let mut r = crate::testutil::record(&format!("t{i:06}"));
        r.steps = i as u32;
        r.status = TaskStatus::Failed;
        r.error = Some("x".repeat(i % 300));
        r.tags = vec![format!("tag{i}")];
        r.cost_usd = i.is_multiple_of(2).then_some(i as f64 / 7.0);
        TaskRow::of(&r)
    }

    /// Rows read back, in and out of order, from the file and from what is pending.
    #[test]
    fn every_row_reads_back_as_it_was_appended() {
        let dir = tempfile::tempdir().unwrap();
        let mut spool = RowSpool::in_dir(Some(dir.path()));
        let at: Vec<RowAt> = (0..3000).map(|i| spool.append(&row(i))).collect();
        assert!(
            spool.written > 0 && !spool.pending.is_empty(),
            "some rows are in the file, some pending"
        );
        for i in (0..3000).rev().step_by(7).chain(0..3000) {
            assert_eq!(spool.read(at[i]).unwrap(), row(i), "row {i}");
        }
        assert!(spool.problems().is_empty());
        // The file is nobody's to see: the run dir holds nothing of it.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    /// Rows kept whole from an earlier invocation go to the file as they are, between
    /// rows appended one by one, and read back with them; without a file they stay in
    /// memory.
    #[test]
    fn rows_appended_whole_read_back_beside_the_others() {
        let dir = tempfile::tempdir().unwrap();
        for place in [Some(dir.path()), Some(Path::new("/nonexistent/run"))] {
            let mut spool = RowSpool::in_dir(place);
            let mut at: Vec<RowAt> = (0..10).map(|i| spool.append(&row(i))).collect();
            let mut kept = EncodedRows::default();
            (10..2010).for_each(|i| kept.push(&row(i)));
            let base = spool.append_all(&kept);
            at.extend(kept.ids().map(|(_, offset)| base.plus(offset)));
            at.extend((2010..2020).map(|i| spool.append(&row(i))));
            assert_eq!(at.len(), 2020);
            for (i, at) in at.iter().enumerate().rev() {
                assert_eq!(spool.read(*at).unwrap(), row(i), "row {i}");
            }
            assert_eq!(spool.written > 0, place == Some(dir.path()));
        }
    }

    /// A folder where no file can be made: the rows stay in memory, and it is said.
    #[test]
    fn without_a_file_rows_stay_in_memory() {
        let mut spool = RowSpool::in_dir(Some(Path::new("/nonexistent/run")));
        let at: Vec<RowAt> = (0..2000).map(|i| spool.append(&row(i))).collect();
        for (i, at) in at.iter().enumerate() {
            assert_eq!(spool.read(*at).unwrap(), row(i));
        }
        assert!(spool.problems()[0].contains("cannot make the run's spool file"));
    }
}
