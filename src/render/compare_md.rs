//! The comparison of two runs as markdown: totals side by side, then regressions
//! first, fixes, new and missing tasks.

use std::fmt::Write;

use super::comparison::{Change, Comparison};
use super::format::cost_text as cost;
use super::markdown::cell;
use super::repeats::Rate;

/// The comparison in markdown: totals, then regressions first.
pub(crate) fn compare_md(c: &Comparison) -> String {
    let mut md = String::from("# ufo-batch compare\n\n");
    if let Some(line) = c.missing_line() {
        let _ = writeln!(md, "**{line}**\n");
    }
    let _ = writeln!(md, "**{}**\n", c.verdict);
    let _ = writeln!(
        md,
        "| | A: `{}` | B: `{}` | change |\n|---|---:|---:|---:|",
        c.a.dir, c.b.dir
    );
    let (a, b) = (&c.a, &c.b);
    let cost_change = match (a.cost_usd, b.cost_usd) {
        // No change to show: nothing spent in either run, or the same.
        (Some(x), Some(y)) if x == y => "—".to_string(),
        (Some(x), Some(y)) => format!("{:+.4}", y - x)
            .replace("+", "+$")
            .replace("-", "-$"),
        _ => "unknown".to_string(),
    };
    let rows = [
        (
            "tasks",
            a.tasks.to_string(),
            b.tasks.to_string(),
            format!("{:+}", b.tasks as i64 - a.tasks as i64),
        ),
        (
            "pass rate",
            format!("{:.1}%", a.pass_rate * 100.0),
            format!("{:.1}%", b.pass_rate * 100.0),
            crate::render::significance::points(b.pass_rate - a.pass_rate),
        ),
        ("cost", cost(a.cost_usd), cost(b.cost_usd), cost_change),
        (
            "tokens",
            a.tokens.to_string(),
            b.tokens.to_string(),
            format!("{:+}", b.tokens as i64 - a.tokens as i64),
        ),
        (
            "task time",
            seconds(a.task_seconds, false),
            seconds(b.task_seconds, false),
            seconds(b.task_seconds - a.task_seconds, true),
        ),
    ];
    for (label, x, y, change) in rows {
        let _ = writeln!(md, "| {label} | {x} | {y} | {change} |");
    }
    if a.mean_score.is_some() || b.mean_score.is_some() {
        let shown = |s: Option<f64>| s.map_or("—".to_string(), |s| format!("{s:.3}"));
        let change = match (a.mean_score, b.mean_score) {
            (Some(x), Some(y)) => format!("{:+.3}", y - x),
            _ => "—".to_string(),
        };
        let _ = writeln!(
            md,
            "| mean score | {} | {} | {change} |",
            shown(a.mean_score),
            shown(b.mean_score)
        );
    }
    if a.unsupported + b.unsupported > 0 {
        let _ = writeln!(
            md,
            "| unsupported (not run, not in the pass rate) | {} | {} | {:+} |",
            a.unsupported,
            b.unsupported,
            b.unsupported as i64 - a.unsupported as i64
        );
    }
    md.push('\n');
    if c.regressed() {
        let _ = writeln!(
            md,
            "**{} regressed.**\n",
            crate::text::plural(c.regressions.len(), "task")
        );
    } else {
        md.push_str("**No regressions.**\n\n");
    }
    statistics(&mut md, c);
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

/// The statistics behind the verdict: the 2×2 table or the per-task test, the tasks
/// beyond their own noise, the flaky ones, and each run's judge agreement.
fn statistics(md: &mut String, c: &Comparison) {
    let st = &c.statistics;
    md.push_str("## Statistics\n\n");
    if let Some(t) = &st.table {
        let _ = writeln!(
            md,
            "| tasks in both runs | passed in B | not passed in B |\n|---|---:|---:|\n| **passed in A** | {} | {} |\n| **not passed in A** | {} | {} |\n",
            t.both, t.only_a, t.only_b, t.neither
        );
    }
    let _ = writeln!(md, "{}.\n", st.method());
    if !st.beyond_noise.is_empty() {
        let _ = writeln!(
            md,
            "Beyond their own run-to-run variation (Fisher's exact test on each task's repetitions, Holm-adjusted p < {}):\n\n| task | A | B | p |\n|---|---|---|---:|",
            st.alpha
        );
        for t in &st.beyond_noise {
            let _ = writeln!(
                md,
                "| {} | {} | {} | {:.4} |",
                t.id,
                t.a.shown(),
                t.b.shown(),
                t.p_value
            );
        }
        md.push('\n');
    }
    if !st.flaky.is_empty() {
        let ids: Vec<String> = st.flaky.iter().map(|id| format!("`{id}`")).collect();
        let _ = writeln!(
            md,
            "Flaky (passed in some repetitions and not in others; their change may be noise): {}.\n",
            ids.join(", ")
        );
    }
    for (label, side) in [("A", &c.a), ("B", &c.b)] {
        if let Some(agreement) = &side.judge_agreement {
            let _ = writeln!(md, "Run {label}: {}.\n", agreement.line());
        }
    }
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
            Some(r) if r.runs == 1 && r.passed == 1 => format!("✅ {}", r.shown()),
            Some(r) if r.runs == 1 => format!("❌ {}", r.shown()),
            Some(r) => r.shown(),
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

/// Seconds with as many decimals as tell short runs apart (0.118 s and 0.065 s are not
/// both "0.1 s"), a sign when `signed`.
pub(crate) fn seconds(s: f64, signed: bool) -> String {
    let decimals = if s.abs() < 10.0 { 2 } else { 1 };
    if signed {
        format!("{s:+.decimals$} s")
    } else {
        format!("{s:.decimals$} s")
    }
}
