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

/// Most entries of B's folder looked at for the series, most runs drawn, and the
/// largest `run.json` read for it (one is a few kilobytes).
const SERIES_LOOKED_AT: usize = 500;
const SERIES_DRAWN: usize = 30;
const SERIES_RUN_JSON_LIMIT: u64 = 1 << 20;

/// The runs in the folder that holds `b` (`results/`: the runs of a project, by
/// name) that finished with totals, by when they started: each one's name and pass
/// rate, the latest [`SERIES_DRAWN`] of the first [`SERIES_LOOKED_AT`] entries (by
/// name), `b` among them. For compare's page only.
pub(crate) fn series(b: &Path) -> Vec<(String, f64)> {
    let Some(parent) = b.parent().filter(|p| !p.as_os_str().is_empty()) else {
        return Vec::new();
    };
    let Ok(entries) = std::fs::read_dir(parent) else {
        return Vec::new();
    };
    let mut dirs: Vec<std::path::PathBuf> = entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.path())
        .collect();
    dirs.sort();
    dirs.truncate(SERIES_LOOKED_AT);
    if !dirs.iter().any(|d| d.file_name() == b.file_name()) {
        dirs.push(b.to_path_buf());
    }
    let mut runs: Vec<(String, String, f64)> = dirs
        .iter()
        .filter_map(|dir| {
            let path = dir.join(crate::rundir::layout::RUN_JSON);
            let text = crate::regular_file::read_text(&path, SERIES_RUN_JSON_LIMIT).ok()?;
            let run: serde_json::Value = serde_json::from_str(&text).ok()?;
            (run["tool"] == "ufo-batch").then_some(())?;
            let started = run["started"].as_str()?.to_string();
            let rate = run["totals"]["pass_rate"].as_f64()?;
            let name = dir.file_name()?.to_string_lossy().into_owned();
            Some((started, name, rate))
        })
        .collect();
    runs.sort_by(|x, y| (&x.0, &x.1).cmp(&(&y.0, &y.1)));
    let skip = runs.len().saturating_sub(SERIES_DRAWN);
    runs.into_iter()
        .skip(skip)
        .map(|(_, name, rate)| (name, rate))
        .collect()
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
