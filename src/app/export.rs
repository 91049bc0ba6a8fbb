//! `ufo-batch export --harbor OUT RUN_DIR`: the run as a Harbor job, and a line saying
//! where it is and how to open it; a task whose steps could not be read is named.

use super::stdout::{Form, note, print};
use crate::cli::ExportArgs;
use crate::error::Error;
use crate::finished::export_harbor;

/// Exports; 0 when written whole, 1 when some task's steps could not be read.
pub(super) fn export(args: &ExportArgs) -> Result<u8, Error> {
    let done = export_harbor(&args.run_dir, &args.harbor)?;
    for p in &done.problems {
        note(&format!("problem: {p}"));
    }
    let line = format!(
        "wrote {} as a Harbor job: {} ({}, mean reward {:.3}); open it with `harbor view {} --jobs`\n",
        args.run_dir.display(),
        done.job.display(),
        crate::text::plural(done.trials, "trial"),
        done.mean,
        args.harbor.display()
    );
    print(&line, Form::Text)?;
    Ok(u8::from(!done.problems.is_empty()))
}
