//! `ufo-batch export --harbor OUT RUN_DIR`: the run as a Harbor job, and a line saying
//! where it is and how to open it.

use super::stdout::{Form, print};
use crate::cli::ExportArgs;
use crate::error::Error;
use crate::finished::export_harbor;

/// Exports; 0 when written.
pub(super) fn export(args: &ExportArgs) -> Result<u8, Error> {
    let done = export_harbor(&args.run_dir, &args.harbor)?;
    let line = format!(
        "wrote {} as a Harbor job: {} ({}, mean reward {:.3}); open it with `harbor view {} --jobs`\n",
        args.run_dir.display(),
        done.job.display(),
        crate::text::plural(done.trials, "trial"),
        done.mean,
        args.harbor.display()
    );
    print(&line, Form::Text)?;
    Ok(0)
}
