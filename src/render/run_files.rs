//! The run-level files derived from task records, rendered and written together:
//! `summary.json`, `summary.csv`, `tasks_status.json`, `report.md`, `report.html` and
//! `junit.xml`.
//! Used at the end of a run, by `merge`, and by `report`.

use super::{html, junit, report_md, summary};
use crate::record::TaskRecord;
use crate::rundir::layout::{
    JUNIT_XML, REPORT_HTML, REPORT_MD, SUMMARY_CSV, SUMMARY_JSON, TASKS_STATUS_JSON,
};
use crate::rundir::{FileError, FileErrors, RunLayout, write_atomic, write_json};

/// Writes every run-level file derived from the records of a run named `name` (and its
/// `run.json`, which the page's header shows).
pub(crate) fn write_summaries(
    layout: &RunLayout,
    name: &str,
    run: Option<&serde_json::Value>,
    records: &[&TaskRecord],
) -> Result<(), FileErrors> {
    let mut errors = FileErrors::default();
    let bytes = |file: &str, bytes: &[u8]| {
        let path = layout.file(file);
        write_atomic(&path, bytes).map_err(|e| FileError::write(&path, e))
    };
    errors.keep(json(layout, SUMMARY_JSON, &summary::summary_json(records)));
    errors.keep(match summary::summary_csv(records.iter().copied()) {
        Ok(csv) => bytes(SUMMARY_CSV, &csv),
        Err(e) => Err(FileError::write(
            &layout.file(SUMMARY_CSV),
            std::io::Error::other(e),
        )),
    });
    errors.keep(json(
        layout,
        TASKS_STATUS_JSON,
        &summary::tasks_status(records.iter().copied()),
    ));
    errors.keep(bytes(
        REPORT_MD,
        report_md::report_md(name, records).as_bytes(),
    ));
    errors.keep(match html::report_html(name, run, records) {
        Ok(page) => bytes(REPORT_HTML, page.as_bytes()),
        Err(e) => Err(FileError::Render(e)),
    });
    errors.keep(match junit::junit_xml(name, records.iter().copied()) {
        Ok(xml) => bytes(JUNIT_XML, xml.as_bytes()),
        Err(e) => Err(FileError::Render(format!("cannot write {JUNIT_XML}: {e}"))),
    });
    errors.into_result()
}

fn json(layout: &RunLayout, file: &str, value: &impl serde::Serialize) -> Result<(), FileError> {
    let path = layout.file(file);
    write_json(&path, value).map_err(|e| FileError::write(&path, e))
}
