//! Run-level files from the stored task records: reading every task's `status.json` in
//! a run dir, and writing `summary.json`, `summary.csv` and `tasks_status.json` from
//! records. Used at the end of a run, by `merge`, and by `report`.

use std::path::{Path, PathBuf};

use super::atomic::{write_atomic, write_json};
use super::summary;
use super::task_files::describe;
use super::{junit, markdown};
use crate::layout::RunLayout;
use crate::record::TaskRecord;

/// A task record found in a run dir, with its folder.
#[derive(Clone, Debug)]
pub struct StoredTask {
    /// The record.
    pub record: TaskRecord,
    /// The task's results folder.
    pub dir: PathBuf,
}

/// Every task record stored under `run_dir`, sorted by id, and the files that could
/// not be read (with why).
pub fn load_records(run_dir: &Path) -> (Vec<StoredTask>, Vec<String>) {
    let mut found = Vec::new();
    let mut problems = Vec::new();
    let walker = walkdir::WalkDir::new(run_dir)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| {
            let in_task_dir = e
                .path()
                .parent()
                .is_some_and(|p| p.join("status.json").is_file());
            let name = e.file_name().to_string_lossy();
            !(in_task_dir && matches!(name.as_ref(), "workspace" | "attempts" | "tmp"))
        });
    for entry in walker.flatten() {
        if entry.depth() == 0 || !entry.file_type().is_file() || entry.file_name() != "status.json"
        {
            continue;
        }
        let path = entry.path();
        let dir = path.parent().unwrap_or(run_dir).to_path_buf();
        let parsed = std::fs::read_to_string(path)
            .map_err(|e| e.to_string())
            .and_then(|text| serde_json::from_str::<TaskRecord>(&text).map_err(|e| e.to_string()));
        match parsed {
            Ok(record) => found.push(StoredTask { record, dir }),
            Err(e) => problems.push(format!("{}: {e}", path.display())),
        }
    }
    found.sort_by(|a, b| a.record.id.cmp(&b.record.id));
    (found, problems)
}

/// Writes every run-level file derived from the records of a run named `name`:
/// `summary.json`, `summary.csv`, `tasks_status.json`, `junit.xml` and `report.md`.
pub fn write_summaries(
    layout: &RunLayout,
    name: &str,
    records: &[&TaskRecord],
) -> Result<(), String> {
    let mut errors = Vec::new();
    let mut keep = |path: PathBuf, result: std::io::Result<()>| {
        if let Err(e) = result {
            errors.push(describe(&path, &e));
        }
    };
    let path = layout.summary_json();
    keep(
        path.clone(),
        write_json(&path, &summary::summary_json(records.iter().copied())),
    );
    let path = layout.summary_csv();
    keep(
        path.clone(),
        summary::write_summary_csv(&path, records.iter().copied()),
    );
    let path = layout.tasks_status();
    keep(
        path.clone(),
        write_json(&path, &summary::tasks_status(records.iter().copied())),
    );
    let path = layout.report_md();
    keep(
        path.clone(),
        write_atomic(&path, markdown::report_md(name, records).as_bytes()),
    );
    match junit::junit_xml(name, records.iter().copied()) {
        Ok(xml) => {
            let path = layout.junit_xml();
            keep(path.clone(), write_atomic(&path, xml.as_bytes()));
        }
        Err(e) => errors.push(e),
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors.join("; "))
    }
}
