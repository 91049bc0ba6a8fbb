//! `ufo-batch report RUN_DIR`: re-render a run dir's derived files and say what was found.

use super::stdout::{Form, note, print};
use crate::cli::ReportArgs;
use crate::error::Error;
use crate::finished::rerender;

/// Re-renders; 1 when some stored file could not be read.
pub(super) fn report(args: &ReportArgs) -> Result<u8, Error> {
    let done = rerender(&args.run_dir)?;
    for p in &done.problems {
        note(&format!("problem: {p}"));
    }
    let t = &done.totals;
    let resume = if t.unfinished > 0 {
        " (running the run, or its shard, again resumes the unfinished)"
    } else {
        ""
    };
    let line = format!(
        "re-rendered {} ({} tasks, {}): {}{resume}",
        args.run_dir.display(),
        done.tasks,
        crate::text::plural(done.trajectories, "trajectory"),
        t.counts()
    );
    print(&format!("{line}\n"), Form::Text)?;
    Ok(if done.problems.is_empty() { 0 } else { 1 })
}
