//! A task's trajectory as its pages, rendered together wherever a task's files are
//! written (a finished task, `report`, `merge`): `output.md`, `task.html` and the ATIF
//! `trajectory.json`.

use crate::record::{Evaluation, StepRecord, TaskRecord};
use crate::task::Problem;

/// `output.md`, and `task.html` (or why it could not be rendered).
pub(crate) struct TaskPages {
    /// The markdown trajectory.
    pub(crate) md: String,
    /// The page.
    pub(crate) html: Result<String, super::html::RenderError>,
    /// The trajectory in ATIF.
    pub(crate) atif: String,
}

/// Both pages of a task.
pub(crate) fn task_pages(
    record: &TaskRecord,
    steps: &[StepRecord],
    evaluation: Option<&Evaluation>,
    problems: &[Problem],
) -> TaskPages {
    TaskPages {
        md: super::trajectory::render(record, steps, evaluation, problems),
        html: super::html::task_html(record, steps, evaluation, problems),
        atif: super::atif::render(record, steps, evaluation, problems),
    }
}
