//! What `ufo-batch validate` prints: every problem of every bad file, warnings, and a
//! count by shape.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::Path;

use crate::record::ShapeName;
use crate::task::{FilePlace, Identified, LoadedTasks, Task, TaskId};
use crate::text::plural;

/// What the report reads of a valid task: kept as each file loads, instead of the task
/// (a large batch is never all held parsed).
#[derive(Debug)]
pub(crate) struct Checked {
    id: TaskId,
    file: FilePlace,
    source_hash: String,
    shape: ShapeName,
    warnings: Vec<String>,
}

impl Checked {
    /// What the report reads of `task`.
    pub(crate) fn of(task: Task, file: FilePlace) -> Self {
        Self {
            shape: ShapeName::of(&task.shape),
            id: task.id,
            file,
            source_hash: task.source_hash,
            warnings: task.warnings,
        }
    }
}

impl Identified for Checked {
    fn id(&self) -> &TaskId {
        &self.id
    }
    fn source(&self) -> Cow<'_, Path> {
        Cow::Owned(self.file.path())
    }
    fn source_hash(&self) -> String {
        self.source_hash.clone()
    }
}

/// The report text, and whether any file is bad.
pub(crate) fn validation_report(loaded: &LoadedTasks<Checked>) -> (String, bool) {
    let mut out = String::new();
    for bad in &loaded.invalid {
        for p in &bad.problems {
            let _ = writeln!(out, "error: {p}");
        }
        for w in &bad.warnings {
            let _ = writeln!(out, "warning: {}: {w}", bad.source.display());
        }
    }
    for task in &loaded.tasks {
        for w in &task.warnings {
            let _ = writeln!(out, "warning: {}: {w}", task.file.path().display());
        }
    }
    let mut shapes: BTreeMap<String, usize> = BTreeMap::new();
    for task in &loaded.tasks {
        *shapes.entry(format!("{:?}", task.shape)).or_default() += 1;
    }
    let shapes: Vec<String> = shapes.iter().map(|(s, n)| format!("{n} {s}")).collect();
    let problems: usize = loaded.invalid.iter().map(|b| b.problems.len()).sum();
    let _ = write!(
        out,
        "{} checked: {} valid",
        plural(loaded.len(), "task file"),
        loaded.tasks.len()
    );
    if !shapes.is_empty() {
        let _ = write!(out, " ({})", shapes.join(", "));
    }
    if !loaded.invalid.is_empty() {
        let _ = write!(
            out,
            ", {} with {}",
            plural(loaded.invalid.len(), "bad file"),
            plural(problems, "problem")
        );
    }
    out.push('\n');
    (out, !loaded.invalid.is_empty())
}
