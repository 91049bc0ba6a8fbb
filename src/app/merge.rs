//! `ufo-batch merge OUT RUN_DIR...`: merge shard run dirs into one and say what did not
//! fit; exit 2 when the inputs do not fit together, else 0 or 1 as for a run.

use std::path::{Path, PathBuf};

use super::stdout::{Form, print};
use crate::cli::MergeArgs;
use crate::error::Error;
use crate::finished::{MergeReport, merge as merge_runs};

/// Merges; 2 when inputs are missing or duplicated, 1 when some task did not pass.
pub(super) fn merge(args: &MergeArgs) -> Result<u8, Error> {
    let merged = merge_runs(&args.out, &args.inputs)?;
    print(&merge_summary(&args.out, &args.inputs, &merged), Form::Text)?;
    let all_passed = merged
        .totals
        .as_ref()
        .is_some_and(|t| t.passed == t.total - t.unsupported && t.passed > 0);
    Ok(if !merged.consistent() {
        2
    } else if all_passed {
        0
    } else {
        1
    })
}

/// What `merge` prints: the result, then every inconsistency.
fn merge_summary(out: &Path, inputs: &[PathBuf], r: &MergeReport) -> String {
    use std::fmt::Write;
    let mut text = String::new();
    let t = r.totals.as_ref();
    let _ = writeln!(
        text,
        "merged {} run dirs into {}: {} tasks, {}",
        inputs.len(),
        out.display(),
        r.tasks,
        t.map_or_else(|| crate::render::Totals::default().counts(), |t| t.counts())
    );
    for p in &r.problems {
        let _ = writeln!(text, "problem: {p}");
    }
    for n in &r.notes {
        let _ = writeln!(text, "note: {n}");
    }
    if !r.missing.is_empty() {
        let shown: Vec<String> = r.missing.iter().take(20).map(ToString::to_string).collect();
        let more = if r.missing.len() > 20 {
            format!(" and {} more", r.missing.len() - 20)
        } else {
            String::new()
        };
        let _ = writeln!(
            text,
            "missing: {} tasks have no result: {}{more} (counted as error)",
            r.missing.len(),
            shown.join(", ")
        );
    }
    for (id, a, b) in &r.duplicates {
        let _ = writeln!(
            text,
            "duplicate: {id} is in {} and {}; the first is kept",
            a.display(),
            b.display()
        );
    }
    text
}
