//! Renderers: the text of every derived file and printed report, made from records
//! and events — `summary.json`/`.csv`, `tasks_status.json`, `junit.xml`, `report.md`,
//! each task's `output.md`, `task.log` lines, the comparison of two runs and the
//! validation report. Renderers decide content only; `rundir` decides where it goes.

mod compare_md;
mod comparison;
mod junit;
mod log_line;
mod repeats;
mod report_md;
mod run_files;
mod summary;
mod trajectory;
mod validation;

pub(crate) use compare_md::compare_md;
pub(crate) use comparison::{Comparison, comparison};
pub(crate) use log_line::log_line;

pub(crate) use run_files::write_summaries;
pub(crate) use summary::{Totals, tasks_status, totals};
pub(crate) use trajectory::render as render_trajectory;
pub(crate) use validation::validation_report;
