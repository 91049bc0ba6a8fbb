//! `ufo-batch compare RUN_A RUN_B`: both run dirs read back and compared task by task
//! (see `render::comparison`). Each side is its whole batch, as `report` counts it: a task
//! of the batch with no result is there, with why, and a task a killed runner left
//! unfinished says so.

use std::path::Path;

use super::FinishedError;
use super::missing::{Batch, Ended, whole_batch};
use crate::record::TaskRow;
use crate::render::{Comparison, comparison};
use crate::rundir::read_run_json;

/// Compares the run dirs `a` (baseline) and `b`, testing at level `alpha`.
pub(crate) fn compare(a: &Path, b: &Path, alpha: f64) -> Result<Comparison, FinishedError> {
    // Neither may be changing while it is read.
    let _idle = (super::error::idle(a)?, super::error::idle(b)?);
    let (rows_a, rows_b) = (rows(a)?, rows(b)?);
    let refs_a: Vec<&TaskRow> = rows_a.iter().collect();
    let refs_b: Vec<&TaskRow> = rows_b.iter().collect();
    Ok(comparison(a, &refs_a, b, &refs_b, alpha))
}

/// A row for every task of the batch of the run dir at `dir`; an error when a record
/// cannot be read.
fn rows(dir: &Path) -> Result<Vec<TaskRow>, FinishedError> {
    let Some(run) = read_run_json(dir) else {
        return Err(FinishedError::NotRunDir(dir.to_path_buf()));
    };
    // No runner works here (see `idle`): a run that never wrote its end was cut short.
    let Batch {
        stored,
        absent,
        unreadable,
    } = whole_batch(dir, &Ended::of(&run));
    if let Some(first) = unreadable.first() {
        return Err(FinishedError::Unreadable {
            dir: dir.to_path_buf(),
            count: unreadable.len(),
            first: first.to_string(),
        });
    }
    let mut rows: Vec<TaskRow> = stored.iter().map(|t| TaskRow::of(&t.record)).collect();
    rows.extend(absent.iter().map(TaskRow::of));
    rows.sort_by(|x, y| x.id.cmp(&y.id));
    Ok(rows)
}
