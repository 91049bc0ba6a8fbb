//! `report.md`: the run in one page that reads well as a pull-request comment. Totals
//! and pass rate first, then what did not pass with the reason and a link to each
//! trajectory, then repeats (when there are), then every task.

use std::fmt::Write;

use super::repeats::{has_repeats, rates, repeat_totals};
use super::summary::totals;
use crate::record::{TaskRow, TaskStatus};
use crate::rundir::layout::OUTPUT_MD;

/// Characters of a reason shown in a table cell.
const REASON_LIMIT: usize = 240;

/// The report of a run named `name`.
pub(crate) fn report_md(name: &str, records: &[&TaskRow]) -> String {
    let t = totals(records.iter().copied());
    let mut md = format!("# ufo-batch: {name}\n\n");
    let pct = t.pass_rate * 100.0;
    let _ = write!(md, "**{} of {} passed ({pct:.1}%)**", t.passed, t.total);
    for (n, label) in [
        (t.failed, "failed"),
        (t.error, "error"),
        (t.timeout, "timeout"),
        (t.cancelled, "cancelled"),
        (t.unfinished, "unfinished"),
    ] {
        if n > 0 {
            let _ = write!(md, " · {n} {label}");
        }
    }
    let _ = write!(md, " · {:.1} s of task time", t.task_seconds);
    let tokens = t.prompt_tokens + t.completion_tokens;
    if tokens > 0 {
        let shown = t
            .cost_usd
            .map_or("cost unknown".to_string(), |c| format!("${c:.4}"));
        let _ = write!(md, " · {tokens} tokens · {shown}");
    }
    md.push_str("\n\n");

    let bad: Vec<&&TaskRow> = records
        .iter()
        .filter(|r| r.status != TaskStatus::Passed)
        .collect();
    if !bad.is_empty() {
        md.push_str("## Not passed\n\n| task | status | reason |\n|---|---|---|\n");
        let order = |s: TaskStatus| match s {
            TaskStatus::Failed => 0,
            TaskStatus::Error => 1,
            TaskStatus::Timeout => 2,
            _ => 3,
        };
        let mut bad = bad;
        bad.sort_by_key(|r| (order(r.status), r.id.clone()));
        for r in bad {
            let reason = r
                .error
                .as_deref()
                .map(|e| cell(e, REASON_LIMIT))
                .unwrap_or_default();
            let _ = writeln!(
                md,
                "| [{id}]({id}/{OUTPUT_MD}) | {} {} | {reason} |",
                mark(r.status),
                r.status,
                id = r.id
            );
        }
        md.push('\n');
    }

    if has_repeats(records.iter().copied()) {
        let rates = rates(records.iter().copied());
        let rt = repeat_totals(&rates);
        let _ = writeln!(
            md,
            "## Repeats\n\npass@1 {:.1}% · pass@k {:.1}% · pass^k {:.1}% · {} flaky\n\n| task | passed | pass rate | flaky |\n|---|---:|---:|---|",
            rt.pass_at_1 * 100.0,
            rt.pass_at_k * 100.0,
            rt.pass_all_k * 100.0,
            rt.flaky.len()
        );
        for r in &rates {
            let flaky = if r.flaky { "⚠️ flaky" } else { "" };
            let _ = writeln!(
                md,
                "| {} | {}/{} | {:.0}% | {flaky} |",
                r.id,
                r.passed,
                r.runs,
                r.pass_rate * 100.0
            );
        }
        md.push('\n');
    }

    md.push_str(
        "## All tasks\n\n| task | status | duration | steps | cost |\n|---|---|---:|---:|---:|\n",
    );
    for r in records {
        let _ = writeln!(
            md,
            "| [{id}]({id}/{OUTPUT_MD}) | {} {} | {:.2} s | {} | {} |",
            mark(r.status),
            r.status,
            r.duration_s,
            r.steps,
            cost(r.cost_usd),
            id = r.id
        );
    }
    md
}

/// Text fit for one markdown table cell.
pub(super) fn cell(text: &str, limit: usize) -> String {
    crate::text::shorten(&text.replace(['\n', '\r'], " ").replace('|', "\\|"), limit)
}

pub(super) fn cost(c: Option<f64>) -> String {
    c.map_or("unknown".to_string(), |c| format!("${c:.4}"))
}

pub(super) fn mark(status: TaskStatus) -> &'static str {
    match status {
        TaskStatus::Passed => "✅",
        TaskStatus::Failed => "❌",
        TaskStatus::Error => "💥",
        TaskStatus::Timeout => "⏱️",
        TaskStatus::Cancelled => "🚫",
        TaskStatus::Pending | TaskStatus::Running => "…",
    }
}
