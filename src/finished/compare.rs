//! `ufo-batch compare RUN_A RUN_B`: both run dirs read back and compared task by task
//! (see `render::comparison`).

use std::path::Path;

use super::FinishedError;
use crate::record::TaskRow;
use crate::render::{Comparison, comparison};
use crate::rundir::{StoredTask, load_batch, read_run_json};

/// Compares the run dirs `a` (baseline) and `b`.
pub(crate) fn compare(a: &Path, b: &Path) -> Result<Comparison, FinishedError> {
    // Neither may be changing while it is read.
    let _idle = (super::error::idle(a)?, super::error::idle(b)?);
    let stored_a = stored(a)?;
    let stored_b = stored(b)?;
    let (rows_a, rows_b) = (rows(&stored_a), rows(&stored_b));
    let refs_a: Vec<&TaskRow> = rows_a.iter().collect();
    let refs_b: Vec<&TaskRow> = rows_b.iter().collect();
    Ok(comparison(a, &refs_a, b, &refs_b))
}

fn rows(stored: &[StoredTask]) -> Vec<TaskRow> {
    stored.iter().map(|t| TaskRow::of(&t.record)).collect()
}

/// Every task record of the run dir at `dir`; an error when one cannot be read.
fn stored(dir: &Path) -> Result<Vec<StoredTask>, FinishedError> {
    if read_run_json(dir).is_none() {
        return Err(FinishedError::NotRunDir(dir.to_path_buf()));
    }
    let (stored, problems, _) = load_batch(dir);
    if let Some(first) = problems.first() {
        return Err(FinishedError::Unreadable {
            dir: dir.to_path_buf(),
            count: problems.len(),
            first: first.to_string(),
        });
    }
    Ok(stored)
}
