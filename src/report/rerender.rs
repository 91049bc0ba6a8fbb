//! `ufo-batch report RUN_DIR`: re-renders every derived file of a run dir from the
//! stored task results — each task's `output.md` (from its `status.json`,
//! `response.log` and `evaluation.log`), then `summary.*`, `tasks_status.json`,
//! `junit.xml`, `report.md` and the totals in `run.json`. Use it after a merge, after a
//! crash, or after upgrading ufo-batch.

use std::path::Path;

use super::atomic::{write_atomic, write_json};
use super::rebuild::{StoredTask, load_records, write_summaries};
use super::summary::{Totals, totals};
use super::trajectory;
use crate::layout::{RunLayout, read_run_json};
use crate::record::{Evaluation, StepRecord, TaskRecord};
use crate::task::Shape;
use crate::units::Timestamp;

/// What `report` did.
#[derive(Debug)]
pub struct Rerendered {
    /// Tasks found.
    pub tasks: usize,
    /// Trajectories rewritten.
    pub trajectories: usize,
    /// Files that could not be read, in words.
    pub problems: Vec<String>,
    /// The totals now in the summaries.
    pub totals: Totals,
}

/// Re-renders the run dir at `run_dir`.
pub fn rerender(run_dir: &Path) -> Result<Rerendered, String> {
    let Some(mut run) = read_run_json(run_dir) else {
        return Err(format!(
            "{} is not a ufo-batch run dir (no run.json)",
            run_dir.display()
        ));
    };
    let layout = RunLayout::new(run_dir);
    let (stored, mut problems) = load_records(run_dir);
    let mut trajectories = 0;
    for task in &stored {
        match rerender_trajectory(task) {
            Ok(true) => trajectories += 1,
            Ok(false) => {}
            Err(e) => problems.push(e),
        }
    }
    let records: Vec<&TaskRecord> = stored.iter().map(|t| &t.record).collect();
    let name = run["name"]
        .as_str()
        .map_or_else(|| layout.name(), str::to_string);
    write_summaries(&layout, &name, &records)?;
    let totals = totals(records.iter().copied());
    run["totals"] = serde_json::to_value(&totals).unwrap_or_default();
    run["reported"] = serde_json::to_value(Timestamp::now()).unwrap_or_default();
    write_json(&layout.run_json(), &run).map_err(|e| format!("cannot write run.json: {e}"))?;
    Ok(Rerendered {
        tasks: stored.len(),
        trajectories,
        problems,
        totals,
    })
}

/// Rewrites a task's `output.md` from its stored files; false when there is nothing to
/// render from (a task file that never loaded keeps its page).
fn rerender_trajectory(task: &StoredTask) -> Result<bool, String> {
    if task.record.shape == Shape::Invalid {
        return Ok(false);
    }
    let steps: Vec<StepRecord> = std::fs::read_to_string(task.dir.join("response.log"))
        .unwrap_or_default()
        .lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect();
    let evaluation: Option<Evaluation> = std::fs::read_to_string(task.dir.join("evaluation.log"))
        .ok()
        .and_then(|text| {
            text.lines()
                .next()
                .and_then(|l| serde_json::from_str(l).ok())
        });
    let md = trajectory::render(&task.record, &steps, evaluation.as_ref(), &[]);
    let path = task.dir.join("output.md");
    write_atomic(&path, md.as_bytes())
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(true)
}
