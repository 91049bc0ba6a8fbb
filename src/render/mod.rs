//! Renderers: the text of every derived file and printed report, made from records
//! and events — `summary.json`/`.csv`, `tasks_status.json`, `junit.xml`, `report.md`,
//! each task's `output.md`, `task.log` lines, the comparison of two runs and the
//! validation report, and the pages (`report.html`, each task's `task.html`, the
//! comparison page). Renderers decide content only; `rundir` decides where it goes.

pub(crate) mod agreement;
pub(crate) mod atif;
mod compare_md;
mod comparison;
mod computer;
pub(crate) mod domains;
mod experience;
mod format;
mod html;
mod junit;
mod markdown;
mod overview;
mod repeats;
mod report_md;
mod run_files;
mod significance;
mod summary;
mod task_pages;
mod totals;
mod trajectory;
mod validation;

pub(crate) use compare_md::compare_md;
pub(crate) use comparison::{Comparison, FailOn, UnknownFailOn, comparison};
pub(crate) use html::{compare_html, url_path};
pub(crate) use task_pages::task_pages;

pub(crate) use overview::Overview;
pub(crate) use run_files::write_summaries;
pub(crate) use summary::tasks_status;
pub(crate) use totals::Totals;
pub(crate) use validation::{Checked, validation_report};
