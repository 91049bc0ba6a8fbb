//! `ufo-batch compare RUN_A RUN_B`: task by task, what changed from A to B. Tasks are
//! matched by id; each has a pass rate (1 of 1, or k of K with `--repeat`). A drop is
//! a regression, a rise a fix; tasks only in B are new, only in A missing. Totals show
//! the pass rate, cost, tokens and task time of both runs.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::Path;

use serde::Serialize;

use super::markdown::{cell, cost};
use super::rebuild::load_records;
use super::repeats::{TaskRate, has_repeats, rates};
use crate::layout::read_run_json;
use crate::record::TaskRecord;
use crate::task::TaskId;

/// One run, in totals.
#[derive(Clone, Debug, Serialize)]
pub struct Side {
    /// The run dir.
    pub dir: String,
    /// Tasks (not repetitions).
    pub tasks: usize,
    /// Mean per-task pass rate.
    pub pass_rate: f64,
    /// Total cost; null when unknown.
    pub cost_usd: Option<f64>,
    /// Total tokens.
    pub tokens: u64,
    /// Sum of task durations.
    pub task_seconds: f64,
    /// True when the run has repeats.
    pub repeats: bool,
}

/// One task that changed.
#[derive(Clone, Debug, Serialize)]
pub struct Change {
    /// The task.
    pub id: TaskId,
    /// In A.
    pub a: Option<Rate>,
    /// In B.
    pub b: Option<Rate>,
    /// Why it did not pass in B (the last repetition that did not).
    pub reason: Option<String>,
}

/// A task's result in one run.
#[derive(Clone, Debug, Serialize)]
pub struct Rate {
    /// Runs that passed.
    pub passed: u32,
    /// Runs.
    pub runs: u32,
    /// passed / runs.
    pub pass_rate: f64,
}

/// The comparison of two runs.
#[derive(Clone, Debug, Serialize)]
pub struct Comparison {
    /// The baseline.
    pub a: Side,
    /// The candidate.
    pub b: Side,
    /// Tasks whose pass rate dropped.
    pub regressions: Vec<Change>,
    /// Tasks whose pass rate rose.
    pub fixes: Vec<Change>,
    /// Tasks only in B.
    pub new: Vec<Change>,
    /// Tasks only in A.
    pub missing: Vec<Change>,
    /// Tasks in both with the same pass rate.
    pub unchanged: usize,
}

impl Comparison {
    /// True when some task regressed.
    pub fn regressed(&self) -> bool {
        !self.regressions.is_empty()
    }
}

/// Compares the run dirs `a` (baseline) and `b`.
pub fn compare(a: &Path, b: &Path) -> Result<Comparison, String> {
    let (ra, sa) = side(a)?;
    let (rb, sb) = side(b)?;
    let ma: BTreeMap<TaskId, TaskRate> = ra.into_iter().map(|r| (r.id.clone(), r)).collect();
    let mb: BTreeMap<TaskId, TaskRate> = rb.into_iter().map(|r| (r.id.clone(), r)).collect();
    let mut c = Comparison {
        a: sa,
        b: sb,
        regressions: vec![],
        fixes: vec![],
        new: vec![],
        missing: vec![],
        unchanged: 0,
    };
    let rate = |r: &TaskRate| Rate {
        passed: r.passed,
        runs: r.runs,
        pass_rate: r.pass_rate,
    };
    for (id, x) in &ma {
        match mb.get(id) {
            None => c.missing.push(Change {
                id: id.clone(),
                a: Some(rate(x)),
                b: None,
                reason: None,
            }),
            Some(y) => {
                let change = Change {
                    id: id.clone(),
                    a: Some(rate(x)),
                    b: Some(rate(y)),
                    reason: y.reason.clone(),
                };
                if y.pass_rate < x.pass_rate {
                    c.regressions.push(change);
                } else if y.pass_rate > x.pass_rate {
                    c.fixes.push(Change {
                        reason: None,
                        ..change
                    });
                } else {
                    c.unchanged += 1;
                }
            }
        }
    }
    for (id, y) in mb.iter().filter(|(id, _)| !ma.contains_key(*id)) {
        c.new.push(Change {
            id: id.clone(),
            a: None,
            b: Some(rate(y)),
            reason: y.reason.clone(),
        });
    }
    Ok(c)
}

fn side(dir: &Path) -> Result<(Vec<TaskRate>, Side), String> {
    if read_run_json(dir).is_none() {
        return Err(format!(
            "{} is not a ufo-batch run dir (no run.json)",
            dir.display()
        ));
    }
    let (stored, problems) = load_records(dir);
    if let Some(p) = problems.first() {
        return Err(format!(
            "cannot read {} ({} unreadable files): {p}",
            dir.display(),
            problems.len()
        ));
    }
    let records: Vec<&TaskRecord> = stored.iter().map(|t| &t.record).collect();
    let rates = rates(records.iter().copied());
    let n = rates.len().max(1) as f64;
    let side = Side {
        dir: dir.display().to_string(),
        tasks: rates.len(),
        pass_rate: rates.iter().map(|r| r.pass_rate).sum::<f64>() / n,
        cost_usd: rates.iter().try_fold(0.0, |s, r| r.cost_usd.map(|c| s + c)),
        tokens: rates.iter().map(|r| r.tokens).sum(),
        task_seconds: rates.iter().map(|r| r.duration_s).sum(),
        repeats: has_repeats(records.iter().copied()),
    };
    Ok((rates, side))
}

/// The comparison in markdown: totals, then regressions first.
pub fn compare_md(c: &Comparison) -> String {
    let mut md = String::from("# ufo-batch compare\n\n");
    let _ = writeln!(
        md,
        "| | A: `{}` | B: `{}` | change |\n|---|---:|---:|---:|",
        c.a.dir, c.b.dir
    );
    let _ = writeln!(
        md,
        "| tasks | {} | {} | {:+} |",
        c.a.tasks,
        c.b.tasks,
        c.b.tasks as i64 - c.a.tasks as i64
    );
    let _ = writeln!(
        md,
        "| pass rate | {:.1}% | {:.1}% | {:+.1} pts |",
        c.a.pass_rate * 100.0,
        c.b.pass_rate * 100.0,
        (c.b.pass_rate - c.a.pass_rate) * 100.0
    );
    let cost_change = match (c.a.cost_usd, c.b.cost_usd) {
        (Some(x), Some(y)) => format!("{:+.4}", y - x)
            .replace("+", "+$")
            .replace("-", "-$"),
        _ => "unknown".to_string(),
    };
    let _ = writeln!(
        md,
        "| cost | {} | {} | {cost_change} |",
        cost(c.a.cost_usd),
        cost(c.b.cost_usd)
    );
    let _ = writeln!(
        md,
        "| tokens | {} | {} | {:+} |",
        c.a.tokens,
        c.b.tokens,
        c.b.tokens as i64 - c.a.tokens as i64
    );
    let _ = writeln!(
        md,
        "| task time | {:.1} s | {:.1} s | {:+.1} s |\n",
        c.a.task_seconds,
        c.b.task_seconds,
        c.b.task_seconds - c.a.task_seconds
    );
    if c.regressed() {
        let _ = writeln!(
            md,
            "**{} regressed.**\n",
            crate::text::plural(c.regressions.len(), "task")
        );
    } else {
        md.push_str("**No regressions.**\n\n");
    }
    section(&mut md, "Regressions", &c.regressions, true);
    section(&mut md, "Fixes", &c.fixes, false);
    section(&mut md, "New tasks", &c.new, true);
    section(&mut md, "Missing tasks", &c.missing, false);
    let _ = writeln!(
        md,
        "{} unchanged.",
        crate::text::plural(c.unchanged, "task")
    );
    md
}

fn section(md: &mut String, title: &str, changes: &[Change], with_reason: bool) {
    if changes.is_empty() {
        return;
    }
    let _ = writeln!(md, "## {title} ({})\n", changes.len());
    md.push_str(if with_reason {
        "| task | A | B | reason in B |\n|---|---|---|---|\n"
    } else {
        "| task | A | B |\n|---|---|---|\n"
    });
    for ch in changes {
        let shown = |r: &Option<Rate>| match r {
            None => "—".to_string(),
            Some(r) if r.runs == 1 => {
                if r.passed == 1 {
                    "✅ passed".to_string()
                } else {
                    "❌ not passed".to_string()
                }
            }
            Some(r) => format!("{}/{} ({:.0}%)", r.passed, r.runs, r.pass_rate * 100.0),
        };
        let _ = write!(md, "| {} | {} | {} |", ch.id, shown(&ch.a), shown(&ch.b));
        if with_reason {
            let _ = write!(
                md,
                " {} |",
                ch.reason
                    .as_deref()
                    .map(|r| cell(r, 200))
                    .unwrap_or_default()
            );
        }
        md.push('\n');
    }
    md.push('\n');
}
