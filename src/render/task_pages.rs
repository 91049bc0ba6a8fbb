//! A task's trajectory as its pages, rendered together wherever a task's files are
//! written (a finished task, `report`, `merge`): `output.md`, `task.html` and the ATIF
//! `trajectory.json`.

use crate::record::{Evaluation, StepRecord, TaskRecord};
use crate::rundir::TaskPages;
use crate::task::Problem;

/// Both pages of a task.
pub(crate) fn task_pages(
    record: &TaskRecord,
    steps: &[StepRecord],
    evaluation: Option<&Evaluation>,
    problems: &[Problem],
) -> TaskPages {
    TaskPages {
        md: super::trajectory::render(record, steps, evaluation, problems),
        html: super::html::task_html(record, steps, evaluation, problems).map_err(Into::into),
        atif: super::atif::render(record, steps, evaluation, problems),
    }
}
