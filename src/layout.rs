//! Where everything lives in a run dir (design.md §5). Both the core (workspaces) and
//! the reporters (result files) take their paths from here, so the layout is written
//! down once.

use std::path::{Path, PathBuf};

use crate::task::TaskId;

/// The run-level files of a run dir (each replaced atomically).
pub const RUN_FILES: &[&str] = &[
    "run.json",
    "summary.json",
    "summary.csv",
    "tasks_status.json",
    "selection.json",
    "junit.xml",
    "report.md",
];

/// Paths of one run dir.
#[derive(Clone, Debug)]
pub struct RunLayout {
    root: PathBuf,
}

impl RunLayout {
    /// The layout of the run dir at `root`.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self { root: root.into() }
    }

    /// The run dir.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The run's name: the run dir's last path component.
    pub fn name(&self) -> String {
        self.root
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    }

    /// `run.json`: tool version, times, resolved config, counts.
    pub fn run_json(&self) -> PathBuf {
        self.root.join("run.json")
    }

    /// `tasks_status.json`: UFO's `{task_id: done}` map.
    pub fn tasks_status(&self) -> PathBuf {
        self.root.join("tasks_status.json")
    }

    /// `selection.json`: every task id of the batch and the shard this run is.
    pub fn selection(&self) -> PathBuf {
        self.root.join("selection.json")
    }

    /// `report.md`: the run for humans (and pull requests).
    pub fn report_md(&self) -> PathBuf {
        self.root.join("report.md")
    }

    /// `junit.xml`: the run for CI dashboards.
    pub fn junit_xml(&self) -> PathBuf {
        self.root.join("junit.xml")
    }

    /// `summary.json`.
    pub fn summary_json(&self) -> PathBuf {
        self.root.join("summary.json")
    }

    /// `summary.csv`.
    pub fn summary_csv(&self) -> PathBuf {
        self.root.join("summary.csv")
    }

    /// A task's results folder.
    pub fn task_dir(&self, id: &TaskId) -> PathBuf {
        let mut dir = self.root.clone();
        for segment in id.segments() {
            dir.push(segment);
        }
        dir
    }

    /// A task's working folder.
    pub fn workspace(&self, id: &TaskId) -> PathBuf {
        self.task_dir(id).join("workspace")
    }

    /// A task's private temporary folder (its commands' TMPDIR).
    pub fn tmp(&self, id: &TaskId) -> PathBuf {
        self.task_dir(id).join("tmp")
    }

    /// A task's `status.json`.
    pub fn status(&self, id: &TaskId) -> PathBuf {
        self.task_dir(id).join("status.json")
    }

    /// A task's file by name (`output.md`, `plan.json`, ...).
    pub fn task_file(&self, id: &TaskId, name: &str) -> PathBuf {
        self.task_dir(id).join(name)
    }
}

/// The `run.json` of a ufo-batch run dir at `dir`, if `dir` is one.
pub fn read_run_json(dir: &Path) -> Option<serde_json::Value> {
    let text = std::fs::read_to_string(dir.join("run.json")).ok()?;
    let value: serde_json::Value = serde_json::from_str(&text).ok()?;
    (value.get("tool").and_then(|t| t.as_str()) == Some("ufo-batch")).then_some(value)
}

/// True when `dir` is a ufo-batch run dir.
pub fn is_run_dir(dir: &Path) -> bool {
    read_run_json(dir).is_some()
}
