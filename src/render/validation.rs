//! What `ufo-batch validate` prints: every problem of every bad file, warnings, and a
//! count by shape.

use std::collections::BTreeMap;
use std::fmt::Write;

use crate::record::ShapeName;
use crate::task::LoadedTasks;
use crate::text::plural;

/// The report text, and whether any file is bad.
pub(crate) fn validation_report(loaded: &LoadedTasks) -> (String, bool) {
    let mut out = String::new();
    for bad in &loaded.invalid {
        for p in &bad.problems {
            let _ = writeln!(out, "error: {p}");
        }
    }
    for task in &loaded.tasks {
        for w in &task.warnings {
            let _ = writeln!(out, "warning: {}: {w}", task.source.display());
        }
    }
    let mut shapes: BTreeMap<String, usize> = BTreeMap::new();
    for task in &loaded.tasks {
        *shapes
            .entry(format!("{:?}", ShapeName::of(&task.shape)))
            .or_default() += 1;
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
