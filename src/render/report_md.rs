//! `report.md`: the run in one page that reads well as a pull-request comment. Totals
//! and pass rate first, then what did not pass with the reason and a link to each
//! trajectory, then repeats (when there are), then every task.

use std::io::{self, Write};

use super::agreement::Agreement;
use super::format::{cost_text as cost, mark};
use super::markdown::cell;
use super::overview::Overview;
use super::repeats::{TaskRate, repeat_totals};
use super::totals::Totals;
use crate::record::{RowSource, TaskStatus};
use crate::rundir::layout::OUTPUT_MD;

/// Characters of a reason shown in a table cell.
const REASON_LIMIT: usize = 240;

/// Writes the report of a run named `name` to `md`, a row at a time.
pub(crate) fn write_report_md(
    md: &mut dyn Write,
    name: &str,
    records: &dyn RowSource,
    overview: &Overview,
) -> io::Result<()> {
    let t = &overview.totals;
    write_headline(md, name, t)?;
    if t.passed < t.total {
        write_not_passed(md, records, t)?;
    }
    if let Some(domains) = &overview.domains {
        write_domains(md, domains)?;
    }
    if let Some(rates) = &overview.rates {
        write_repeats(md, rates)?;
    }
    if let Some(agreement) = &overview.agreement {
        write_agreement(md, agreement)?;
    }
    if let Some(experience) = &overview.experience {
        writeln!(md, "## Experience\n\n{}\n", experience.line())?;
    }
    write_all_tasks(md, records)
}

/// The title and the totals line: passed of total, the other statuses, time, tokens, cost.
fn write_headline(md: &mut dyn Write, name: &str, t: &Totals) -> io::Result<()> {
    write!(md, "# ufo-batch: {}\n\n", crate::text::printable(name))?;
    let pct = t.pass_rate * 100.0;
    let ci = t
        .pass_rate_ci
        .map(|ci| format!("; 95% CI {}", ci.percent()))
        .unwrap_or_default();
    write!(md, "**{} of {} passed ({pct:.1}%{ci})**", t.passed, t.total)?;
    for (n, label) in [
        (t.failed, "failed"),
        (t.error, "error"),
        (t.timeout, "timeout"),
        (t.cancelled, "cancelled"),
        (t.unfinished, "unfinished"),
        (t.unsupported, "unsupported (not run, not counted)"),
    ] {
        if n > 0 {
            write!(md, " · {n} {label}")?;
        }
    }
    write!(md, " · {:.1} s of task time", t.task_seconds)?;
    let tokens = t.prompt_tokens + t.completion_tokens;
    if tokens > 0 {
        let shown = t
            .cost_usd
            .map_or("cost unknown".to_string(), |c| format!("${c:.4}"));
        write!(md, " · {tokens} tokens · {shown}")?;
    }
    md.write_all(b"\n\n")
}

/// The "By domain" section of an OSWorld run: per domain, the tasks that ran, passed,
/// failed and were unsupported here, and the mean score.
fn write_domains(
    md: &mut dyn Write,
    domains: &[crate::render::domains::DomainCount],
) -> io::Result<()> {
    md.write_all(b"## By domain\n\n| domain | tasks | ran | passed | failed | error/timeout | unsupported | mean score |\n|---|---:|---:|---:|---:|---:|---:|---:|\n")?;
    for d in domains {
        writeln!(
            md,
            "| {} | {} | {} | {} | {} | {} | {} | {} |",
            crate::render::markdown::cell(&d.domain, 80),
            d.tasks,
            d.ran,
            d.passed,
            d.failed,
            d.other,
            d.unsupported,
            d.mean_score.map_or("—".to_string(), |s| format!("{s:.3}"))
        )?;
    }
    md.write_all(b"\n")
}

/// The "Not passed" section: each task that did not pass, with its status and reason.
fn write_not_passed(md: &mut dyn Write, records: &dyn RowSource, t: &Totals) -> io::Result<()> {
    md.write_all(b"## Not passed\n\n| task | status | reason |\n|---|---|---|\n")?;
    let order = |s: TaskStatus| match s {
        TaskStatus::Failed => 0,
        TaskStatus::Error => 1,
        TaskStatus::Timeout => 2,
        TaskStatus::Passed => 4,
        _ => 3,
    };
    let present = [
        t.failed > 0,
        t.error > 0,
        t.timeout > 0,
        t.cancelled + t.unfinished > 0,
    ];
    // Failures first, then errors, timeouts and the rest, each by id: a pass over
    // the rows for each kind there is, rather than all of them sorted in memory.
    for (kind, _) in present.iter().enumerate().filter(|(_, p)| **p) {
        for r in records.rows().filter(|r| order(r.status) == kind) {
            let reason = r
                .error
                .as_deref()
                .map(|e| cell(e, REASON_LIMIT))
                .unwrap_or_default();
            writeln!(
                md,
                "| [{id}]({id}/{OUTPUT_MD}) | {} {} | {reason} |",
                mark(r.status),
                r.status,
                id = r.id
            )?;
        }
    }
    md.write_all(b"\n")
}

/// The "Repeats" section: pass@1, pass@k, pass^k and flakiness, then a row per task.
fn write_repeats(md: &mut dyn Write, rates: &[TaskRate]) -> io::Result<()> {
    let rt = repeat_totals(rates);
    writeln!(
        md,
        "## Repeats\n\npass@1 {:.1}%{} · pass@k {:.1}% · pass^k {:.1}% · {} flaky{}\n\n| task | passed | pass rate | flaky |\n|---|---:|---:|---|",
        rt.pass_at_1 * 100.0,
        rt.pass_at_1_ci
            .map(|ci| format!(" (95% CI {})", ci.percent()))
            .unwrap_or_default(),
        rt.pass_at_k * 100.0,
        rt.pass_all_k * 100.0,
        rt.flaky.len(),
        rt.mean_task_variance
            .map(|v| format!(" · mean per-task variance {v:.3}"))
            .unwrap_or_default()
    )?;
    for r in rates {
        let flaky = if r.flaky { "⚠️ flaky" } else { "" };
        writeln!(
            md,
            "| {} | {}/{} | {:.0}% | {flaky} |",
            r.id,
            r.passed,
            r.runs,
            r.pass_rate * 100.0
        )?;
    }
    md.write_all(b"\n")
}

/// The "All tasks" section: a row per task with status, duration, steps and cost.
fn write_all_tasks(md: &mut dyn Write, records: &dyn RowSource) -> io::Result<()> {
    md.write_all(
        "## All tasks\n\n| task | status | duration | steps | cost |\n|---|---|---:|---:|---:|\n"
            .as_bytes(),
    )?;
    for r in records.rows() {
        writeln!(
            md,
            "| [{id}]({id}/{OUTPUT_MD}) | {} {} | {:.2} s | {} | {} |",
            mark(r.status),
            r.status,
            r.duration_s,
            r.steps,
            cost(r.cost_usd),
            id = r.id
        )?;
    }
    Ok(())
}

/// The judge's agreement with the checks (`--eval both`): the line, the confusion matrix
/// and the tasks they judged differently.
fn write_agreement(md: &mut dyn Write, a: &Agreement) -> io::Result<()> {
    let c = &a.confusion;
    writeln!(
        md,
        "## The judge against the checks\n\n{} (`--eval both`; the checks decided).\n\n| checks \\ judge | yes | no | unsure |\n|---|---:|---:|---:|\n| passed | {} | {} | {} |\n| failed | {} | {} | {} |\n",
        a.line(),
        c.checks_passed_judge_yes,
        c.checks_passed_judge_no,
        c.checks_passed_judge_unsure,
        c.checks_failed_judge_yes,
        c.checks_failed_judge_no,
        c.checks_failed_judge_unsure,
    )?;
    if a.disagreements.is_empty() {
        return Ok(());
    }
    md.write_all(b"| task | checks | judge | the checks' reason | the judge's reason |\n|---|---|---|---|---|\n")?;
    for d in &a.disagreements {
        writeln!(
            md,
            "| [{id}]({id}/{OUTPUT_MD}) | {} | {} | {} | {} |",
            if d.checks_passed { "passed" } else { "failed" },
            d.judge,
            cell(&d.checks_reason, REASON_LIMIT),
            cell(&d.judge_reason, REASON_LIMIT),
            id = d.id
        )?;
    }
    if a.disagreeing > a.disagreements.len() as u64 {
        writeln!(
            md,
            "\n… and {} more (summary.json lists the first {}).",
            a.disagreeing - a.disagreements.len() as u64,
            a.disagreements.len()
        )?;
    }
    md.write_all(b"\n")
}
