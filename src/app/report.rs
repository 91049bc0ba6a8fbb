//! `ufo-batch report RUN_DIR`: re-render a run dir's derived files and say what was found.

use crate::cli::ReportArgs;
use crate::error::Error;
use crate::finished::rerender;

/// Re-renders; 1 when some stored file could not be read.
pub(super) fn report(args: &ReportArgs) -> Result<u8, Error> {
    let done = rerender(&args.run_dir)?;
    for p in &done.problems {
        eprintln!("problem: {p}");
    }
    let t = &done.totals;
    let unfinished = match t.unfinished {
        0 => String::new(),
        n => format!(", {n} unfinished (running the run again resumes them)"),
    };
    println!(
        "re-rendered {} ({} tasks, {} trajectories): {} passed, {} failed, {} error, {} timeout, {} cancelled{unfinished}",
        args.run_dir.display(),
        done.tasks,
        done.trajectories,
        t.passed,
        t.failed,
        t.error,
        t.timeout,
        t.cancelled
    );
    Ok(if done.problems.is_empty() { 0 } else { 1 })
}
