//! Where everything lives in a run dir (design.md §5): every file and folder name of
//! the layout is spelled here, once, and everything else asks for paths.

use std::path::{Path, PathBuf};

use crate::task::{ReservedNames, TaskId};

/// True when `name` can name a run's folder (and an export's): letters, digits, `.`,
/// `_` and `-`, not starting with `.`, at most 200 bytes. A run's name read back from
/// `run.json` is held to it too (a newline or an ESC there reaches no folder name and
/// no terminal).
pub(crate) fn is_run_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 200
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c))
}

/// Tool version, times, resolved config, counts.
pub(crate) const RUN_JSON: &str = "run.json";
/// Totals and one row per task.
pub(crate) const SUMMARY_JSON: &str = "summary.json";
/// One row per task, for spreadsheets.
pub(crate) const SUMMARY_CSV: &str = "summary.csv";
/// UFO's `{task_id: done}` map.
pub(crate) const TASKS_STATUS_JSON: &str = "tasks_status.json";
/// Every task id of the batch and the shard this run is.
pub(crate) const SELECTION_JSON: &str = "selection.json";
/// The run for CI dashboards.
pub(crate) const JUNIT_XML: &str = "junit.xml";
/// The run for humans (and pull requests).
pub(crate) const REPORT_MD: &str = "report.md";
/// The run as a page: totals and a task table that filters and sorts.
pub(crate) const REPORT_HTML: &str = "report.html";

/// A task's record: where it stands.
pub(crate) const STATUS_JSON: &str = "status.json";
/// One JSON line per agent step.
pub(crate) const RESPONSE_LOG: &str = "response.log";
/// The evaluation, one JSON line.
pub(crate) const EVALUATION_LOG: &str = "evaluation.log";
/// The markdown trajectory.
pub(crate) const OUTPUT_MD: &str = "output.md";
/// The task as a page: verdict, attempts, steps with results and screenshots.
pub(crate) const TASK_HTML: &str = "task.html";
/// The actions taken, as a recorded plan.
pub(crate) const PLAN_JSON: &str = "plan.json";
/// The trajectory in ATIF, Harbor's Agent Trajectory Interchange Format.
pub(crate) const TRAJECTORY_JSON: &str = "trajectory.json";
/// The session's own log lines.
pub(crate) const TASK_LOG: &str = "task.log";
/// The task's working folder.
pub(crate) const WORKSPACE: &str = "workspace";
/// A task's object as it was given (`files/NAME`), which its `plan.json` names by
/// `NAME`: the object lookup (`task::object`) finds it in `files/` beside the plan.
pub(crate) const FILES: &str = "files";
/// The task's private temporary folder.
pub(crate) const TMP: &str = "tmp";
/// A desktop task's desktop folder: its `/tmp` (display and bus sockets, HOME, the
/// app's profile), written by the desktop's jail only.
pub(crate) const DESKTOP: &str = "desktop";
/// What a desktop task's programs (display, buses, apps) printed.
pub(crate) const DESKTOP_LOG: &str = "desktop.log";
/// Earlier attempts' files, under `attempts/N/`.
pub(crate) const ATTEMPTS: &str = "attempts";

/// What happened to the run's devices (`--devices`), a line each.
pub(crate) const DEVICES_LOG: &str = "devices.log";

/// The run-level files of a run dir (each replaced atomically, but `devices.log`, which
/// grows a line at a time).
pub(crate) const RUN_FILES: &[&str] = &[
    DEVICES_LOG,
    RUN_JSON,
    SUMMARY_JSON,
    SUMMARY_CSV,
    TASKS_STATUS_JSON,
    SELECTION_JSON,
    JUNIT_XML,
    REPORT_MD,
    REPORT_HTML,
];

/// Every entry of a task's results folder; a nested task id must not reuse them.
pub(crate) const TASK_ENTRIES: &[&str] = &[
    WORKSPACE,
    FILES,
    UI_TREES,
    DESKTOP,
    DESKTOP_LOG,
    ATTEMPTS,
    STATUS_JSON,
    RESPONSE_LOG,
    EVALUATION_LOG,
    OUTPUT_MD,
    TASK_HTML,
    PLAN_JSON,
    TRAJECTORY_JSON,
    TASK_LOG,
    TMP,
];

/// The names task ids must keep clear of.
pub(crate) const RESERVED_NAMES: ReservedNames<'static> = ReservedNames {
    run_files: RUN_FILES,
    task_entries: TASK_ENTRIES,
};

/// A desktop task's UI trees (UFO's `SAVE_UI_TREE`): `ui_trees/ui_tree_step{N}.json`.
pub(crate) const UI_TREES: &str = "ui_trees";

/// Whether a task folder's entry belongs to one attempt (moved to `attempts/N/` when
/// the next starts): the files of [`ATTEMPT_FILES`], a desktop task's screenshots
/// (UFO's `action_step{N}.png`, `_annotated`, `action_step_final.png`) and UI trees.
pub(crate) fn is_attempt_entry(name: &str) -> bool {
    ATTEMPT_FILES.contains(&name)
        || name == UI_TREES
        || name == DESKTOP_LOG
        || (name.starts_with("action_step") && name.ends_with(".png"))
}

/// Files of an attempt that move to `attempts/N/` when the next attempt starts.
pub(crate) const ATTEMPT_FILES: &[&str] = &[
    RESPONSE_LOG,
    TASK_LOG,
    OUTPUT_MD,
    EVALUATION_LOG,
    PLAN_JSON,
    TRAJECTORY_JSON,
];

/// Every file of a task folder that is replaced atomically.
pub(crate) const ATOMIC_TASK_FILES: &[&str] = &[
    STATUS_JSON,
    OUTPUT_MD,
    TASK_HTML,
    EVALUATION_LOG,
    PLAN_JSON,
    TRAJECTORY_JSON,
];

/// Folders inside a task folder that hold no results of their own (searches skip them).
pub(crate) const TASK_SUBFOLDERS: &[&str] = &[WORKSPACE, FILES, ATTEMPTS, TMP, DESKTOP];

/// Paths of one run dir.
#[derive(Clone, Debug)]
pub(crate) struct RunLayout {
    root: PathBuf,
}

impl RunLayout {
    /// The layout of the run dir at `root`.
    pub(crate) fn new(root: impl Into<PathBuf>) -> Self {
        Self { root: root.into() }
    }

    /// The same run dir by its canonical path (symbolic links resolved), once it
    /// exists; unchanged when it cannot be resolved. The runner makes every folder under
    /// it, so a task's folders are canonical too and need no resolving each.
    pub(crate) fn resolved(self) -> Self {
        match self.root.canonicalize() {
            Ok(root) => Self { root },
            Err(_) => self,
        }
    }

    /// The run dir.
    pub(crate) fn root(&self) -> &Path {
        &self.root
    }

    /// The run's name: the run dir's last path component.
    pub(crate) fn name(&self) -> String {
        self.root
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    }

    /// A run-level file by name (one of [`RUN_FILES`]).
    pub(crate) fn file(&self, name: &str) -> PathBuf {
        self.root.join(name)
    }

    /// `run.json`.
    pub(crate) fn run_json(&self) -> PathBuf {
        self.file(RUN_JSON)
    }

    /// `tasks_status.json`.
    pub(crate) fn tasks_status(&self) -> PathBuf {
        self.file(TASKS_STATUS_JSON)
    }

    /// `selection.json`.
    pub(crate) fn selection(&self) -> PathBuf {
        self.file(SELECTION_JSON)
    }

    /// The first folder on the way from the run dir to `id`'s folder (that folder
    /// included) that is a symbolic link, if any: what is written there would land
    /// wherever it leads, outside the run dir.
    pub(crate) fn linked_part(&self, id: &TaskId) -> Option<PathBuf> {
        let mut dir = self.root.clone();
        for segment in id.segments() {
            dir.push(segment);
            match std::fs::symlink_metadata(&dir) {
                Ok(meta) if meta.file_type().is_symlink() => return Some(dir),
                Ok(_) => {}
                Err(_) => return None,
            }
        }
        None
    }

    /// Removes the symbolic links on the way to `id`'s folder (never what they lead
    /// to), for a run dir this process writes: its files then stay inside it. Returns
    /// the links removed.
    pub(crate) fn unlink_task_path(&self, id: &TaskId) -> std::io::Result<Vec<PathBuf>> {
        let mut removed = Vec::new();
        while let Some(link) = self.linked_part(id) {
            // `remove_dir` for a link to a folder where the system wants it (Windows).
            match std::fs::remove_file(&link).or_else(|_| std::fs::remove_dir(&link)) {
                Ok(()) => removed.push(link),
                // Removed meanwhile (another task under the same link).
                Err(_) if std::fs::symlink_metadata(&link).is_err() => {}
                Err(e) => return Err(e),
            }
        }
        Ok(removed)
    }

    /// A task's results folder.
    pub(crate) fn task(&self, id: &TaskId) -> TaskDir {
        let mut dir = self.root.clone();
        for segment in id.segments() {
            dir.push(segment);
        }
        TaskDir(dir)
    }
}

/// Paths of one task's results folder.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct TaskDir(PathBuf);

impl TaskDir {
    /// The task folder at `dir` (as found in a run dir).
    pub(crate) fn at(dir: impl Into<PathBuf>) -> Self {
        Self(dir.into())
    }

    /// The folder itself.
    pub(crate) fn path(&self) -> &Path {
        &self.0
    }

    /// A file of the folder by name (one of [`TASK_ENTRIES`]).
    pub(crate) fn file(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }

    /// `status.json`.
    pub(crate) fn status(&self) -> PathBuf {
        self.file(STATUS_JSON)
    }

    /// The task's working folder.
    pub(crate) fn workspace(&self) -> PathBuf {
        self.file(WORKSPACE)
    }

    /// The task's private temporary folder (its commands' TMPDIR).
    pub(crate) fn tmp(&self) -> PathBuf {
        self.file(TMP)
    }

    /// Where earlier attempts' files are kept.
    pub(crate) fn attempts(&self) -> PathBuf {
        self.file(ATTEMPTS)
    }

    /// The desktop folder of a desktop task (its desktop's `/tmp`).
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    pub(crate) fn desktop(&self) -> PathBuf {
        self.file(DESKTOP)
    }

    /// What the desktop's programs printed.
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    pub(crate) fn desktop_log(&self) -> PathBuf {
        self.file(DESKTOP_LOG)
    }

    /// UFO's screenshot of step `step` (`None`: the final one), clean or annotated.
    pub(crate) fn screenshot(&self, step: Option<u32>, annotated: bool) -> PathBuf {
        let step = step.map_or_else(|| "_final".to_string(), |n| n.to_string());
        let suffix = if annotated { "_annotated" } else { "" };
        self.file(&format!("action_step{step}{suffix}.png"))
    }

    /// The UI tree of step `step` (`None`: the final one).
    pub(crate) fn ui_tree(&self, step: Option<u32>) -> PathBuf {
        let step = step.map_or_else(|| "final".to_string(), |n| format!("step{n}"));
        self.file(UI_TREES).join(format!("ui_tree_{step}.json"))
    }

    /// The folder of earlier attempt `n`.
    pub(crate) fn attempt(&self, n: u32) -> PathBuf {
        self.attempts().join(n.to_string())
    }
}
