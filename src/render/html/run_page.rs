//! `report.html`: the run at the top (name, version, when, the settings that matter,
//! totals, cost, repeats), then every task in a table, the ones that did not pass first.
//!
//! The table reads without JavaScript: its first [`HTML_ROWS`] rows are in the page as
//! HTML. Every task is also in the page once as compact JSON, from which the script
//! filters, sorts and draws the rows a page at a time, so that a run of any size opens
//! at once (a browser lays out 10,000 table rows in seconds; it parses their JSON in
//! milliseconds). The script also opens a task's own page in a panel.

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::io::{self, Write};

use serde::Serialize;
use serde_json::Value;

use super::{name_of, percent, render, url_path};
use crate::record::{RowSource, TaskRow, TaskStatus};
use crate::render::format::{cost_text, readable_time};
use crate::render::overview::Overview;
use crate::render::repeats::repeat_totals;
use crate::rundir::layout::TASK_HTML;

/// Characters of a reason shown in the table.
const REASON_LIMIT: usize = 300;

/// Rows written as HTML, for a reader without JavaScript (the ones that did not pass
/// come first); the script draws as many at a time.
pub(crate) const HTML_ROWS: usize = 500;

#[derive(Serialize)]
struct RunView {
    name: String,
    version: String,
    state: Option<String>,
    started: Option<String>,
    finished: Option<String>,
    stopped: Option<String>,
    /// (label, value) of the settings that matter.
    settings: Vec<(String, String)>,
}

#[derive(Serialize)]
struct Row {
    id: String,
    href: String,
    status: String,
    folder: String,
    tags: Vec<String>,
    duration: f64,
    duration_text: String,
    steps: u32,
    cost_text: String,
    cost: Option<f64>,
    attempts: usize,
    reason: String,
}

#[derive(Serialize)]
struct Repeats {
    pass_at_1: String,
    pass_at_1_ci: Option<String>,
    variance: Option<String>,
    pass_at_k: String,
    pass_all_k: String,
    flaky: Vec<String>,
}

#[derive(Serialize)]
struct Page<'a> {
    run: RunView,
    totals: crate::render::Totals,
    pass_rate: String,
    /// The pass rate's 95% interval.
    pass_rate_ci: Option<String>,
    /// The judge's agreement with the checks (`--eval both`).
    agreement: Option<&'a crate::render::agreement::Agreement>,
    agreement_line: Option<String>,
    /// Experience given and saved, in one line.
    experience_line: Option<String>,
    /// (label, count) of the statuses other than passed that occur.
    counts: Vec<(String, usize)>,
    task_seconds: String,
    tokens: u64,
    cost: String,
    repeats: Option<Repeats>,
    /// (title, inline SVG) of the pictures.
    charts: Vec<(String, String)>,
    statuses: Vec<String>,
    folders: Vec<String>,
    tags: Vec<String>,
    /// The first [`HTML_ROWS`] rows.
    rows: Vec<Row>,
    /// Tasks not among `rows`.
    more: usize,
    /// Where every task goes as JSON (see [`DataRows`]): a mark the page is cut at.
    data: String,
    page_rows: usize,
}

/// A task in the page's JSON: `[id, status, folder (index into the folders),
/// tags, duration in seconds, steps, cost in USD or null, attempts, reason]`. Arrays,
/// not objects: the keys would be a third of a 10,000-task page.
struct DataRows<'a> {
    records: &'a dyn RowSource,
    present: [bool; 7],
    folders: &'a [String],
}

impl Serialize for DataRows<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(sorted(self.records, self.present).map(|r| {
            let r = row(&r);
            (
                r.id,
                r.status,
                self.folders.binary_search(&r.folder).unwrap_or_default(),
                r.tags,
                (r.duration * 1000.0).round() / 1000.0,
                r.steps,
                r.cost,
                r.attempts,
                r.reason,
            )
        }))
    }
}

/// The page of a run named `name`, from its records and its `run.json` (`run`, when
/// there is one).
#[cfg(test)]
pub(crate) fn report_html(
    name: &str,
    run: Option<&Value>,
    records: &dyn RowSource,
) -> io::Result<String> {
    let mut page = Vec::new();
    let overview = Overview::of(records);
    write_report_html(&mut page, name, run, records, &overview)?;
    String::from_utf8(page).map_err(io::Error::other)
}

/// Writes the page of a run named `name` to `out`, from its records and its `run.json`
/// (`run`, when there is one). The page is rendered without the tasks' data, which is
/// then written where it goes a task at a time: a page of a million tasks is never
/// held whole.
pub(crate) fn write_report_html(
    out: &mut dyn Write,
    name: &str,
    run: Option<&Value>,
    records: &dyn RowSource,
    overview: &Overview,
) -> io::Result<()> {
    let t = &overview.totals;
    let present = [
        t.failed > 0,
        t.error > 0,
        t.timeout > 0,
        t.cancelled > 0,
        t.unfinished > 0,
        t.unsupported > 0,
        t.passed > 0,
    ];
    let (statuses, folders, tags) = filters(records);
    // A row is made for each task as the data is written, and kept only for the first
    // HTML_ROWS: at a million tasks, rows for all would be the largest allocation.
    let rows: Vec<Row> = sorted(records, present)
        .take(HTML_ROWS)
        .map(|r| row(&r))
        .collect();
    let mark = format!("\u{1}task-data-{:016x}\u{1}", fastrand::u64(..));
    let page = Page {
        run: run_view(name, run),
        pass_rate: percent(t.pass_rate),
        pass_rate_ci: t.pass_rate_ci.map(|ci| ci.percent()),
        agreement: overview.agreement.as_ref(),
        agreement_line: overview.agreement.as_ref().map(|a| a.line()),
        experience_line: overview.experience.as_ref().map(|x| x.line()),
        counts: counts(t),
        task_seconds: format!("{:.1} s", t.task_seconds),
        tokens: t.prompt_tokens + t.completion_tokens,
        cost: cost_text(t.cost_usd),
        more: t.total.saturating_sub(HTML_ROWS),
        totals: t.clone(),
        repeats: overview.rates.as_deref().map(repeats_view),
        charts: overview.charts.charts(),
        statuses,
        folders: folders.clone(),
        tags,
        rows,
        data: mark.clone(),
        page_rows: HTML_ROWS,
    };
    let page = render("run.html", &page).map_err(io::Error::other)?;
    let data = DataRows {
        records,
        present,
        folders: &folders,
    };
    write_with_data(out, &page, &mark, data)
}

/// The (label, count) of the statuses other than passed that occur, for the totals line.
fn counts(t: &crate::render::Totals) -> Vec<(String, usize)> {
    [
        ("failed", t.failed),
        ("error", t.error),
        ("timeout", t.timeout),
        ("cancelled", t.cancelled),
        ("unfinished", t.unfinished),
        ("unsupported", t.unsupported),
    ]
    .into_iter()
    .filter(|(_, n)| *n > 0)
    .map(|(label, n)| (label.to_string(), n))
    .collect()
}

/// The repeats box: pass@1 with its interval, variance, pass@k, pass^k and the flaky tasks.
fn repeats_view(rates: &[crate::render::repeats::TaskRate]) -> Repeats {
    let r = repeat_totals(rates);
    Repeats {
        pass_at_1: percent(r.pass_at_1),
        pass_at_1_ci: r.pass_at_1_ci.map(|ci| ci.percent()),
        variance: r.mean_task_variance.map(|v| format!("{v:.3}")),
        pass_at_k: percent(r.pass_at_k),
        pass_all_k: percent(r.pass_all_k),
        flaky: r.flaky.iter().map(ToString::to_string).collect(),
    }
}

/// The table's filters: the statuses, folders and tags that occur, each sorted.
fn filters(records: &dyn RowSource) -> (Vec<String>, Vec<String>, Vec<String>) {
    let (mut statuses, mut folders, mut tags) = (BTreeSet::new(), BTreeSet::new(), BTreeSet::new());
    for r in records.rows() {
        statuses.insert(name_of(&r.status));
        folders.insert(folder_of(&r));
        tags.extend(r.tags.iter().cloned());
    }
    (
        statuses.into_iter().collect(),
        folders.into_iter().collect(),
        tags.into_iter().collect(),
    )
}

/// The rendered page with the tasks' data written, a task at a time, in place of `mark`.
fn write_with_data(out: &mut dyn Write, page: &str, mark: &str, data: DataRows) -> io::Result<()> {
    let (head, tail) = page
        .rsplit_once(mark)
        .ok_or_else(|| io::Error::other("cannot render report.html: no place for the data"))?;
    out.write_all(head.as_bytes())?;
    serde_json::to_writer(ScriptSafe(&mut *out), &(data.folders, data))
        .map_err(io::Error::other)?;
    out.write_all(tail.as_bytes())
}

/// Passes JSON on so that it cannot end or escape the `<script>` element it is written
/// in: every `<` is written `\u003c`, which JSON reads as the same character.
struct ScriptSafe<'a>(&'a mut dyn Write);

impl Write for ScriptSafe<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut parts = buf.split(|b| *b == b'<');
        if let Some(first) = parts.next() {
            self.0.write_all(first)?;
        }
        for part in parts {
            self.0.write_all(b"\\u003c")?;
            self.0.write_all(part)?;
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}

/// The rows in the table's order (see [`order`]): a pass over them for each status
/// there is (`present`, by order), rather than all of them sorted in memory.
fn sorted(
    records: &dyn RowSource,
    present: [bool; 7],
) -> impl Iterator<Item = Cow<'_, TaskRow>> + '_ {
    (0..7u8)
        .filter(move |k| present[*k as usize])
        .flat_map(move |k| records.rows().filter(move |r| order(r.status) == k))
}

/// Failures first, then errors, timeouts, the rest, and what passed last.
fn order(status: TaskStatus) -> u8 {
    match status {
        TaskStatus::Failed => 0,
        TaskStatus::Error => 1,
        TaskStatus::Timeout => 2,
        TaskStatus::Cancelled => 3,
        TaskStatus::Pending | TaskStatus::Running => 4,
        TaskStatus::Unsupported => 5,
        TaskStatus::Passed => 6,
    }
}

/// The folder a task is listed under: a repetition (`x/rep-2`) belongs to its task's.
fn folder_of(r: &TaskRow) -> String {
    match r.base_id().group() {
        "" => ".".to_string(),
        group => group.to_string(),
    }
}

fn row(r: &TaskRow) -> Row {
    let id = r.id.to_string();
    let folder = folder_of(r);
    Row {
        href: format!("{}/{TASK_HTML}", url_path(&id)),
        status: name_of(&r.status),
        folder,
        tags: r.tags.clone(),
        duration: r.duration_s,
        duration_text: format!("{:.2} s", r.duration_s),
        steps: r.steps,
        cost_text: cost_text(r.cost_usd),
        cost: r.cost_usd,
        attempts: r.attempts as usize,
        reason: r
            .error
            .as_deref()
            .map(|e| crate::text::shorten(e, REASON_LIMIT))
            .unwrap_or_default(),
        id,
    }
}

/// The run's header, from `run.json`.
fn run_view(name: &str, run: Option<&Value>) -> RunView {
    let text = |v: &Value| match v {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        other => Some(other.to_string()),
    };
    let field = |key: &str| run.and_then(|r| r.get(key)).and_then(text);
    let config = |pointer: &str| run.and_then(|r| r.pointer(pointer)).and_then(text);
    let mut settings = Vec::new();
    for (label, value) in [
        ("model", config("/config/llm/model")),
        ("jobs", field("jobs")),
        ("sandbox", field("sandbox")),
        ("eval", config("/config/eval")),
        ("timeout", config("/config/timeout")),
        ("shard", field("shard")),
    ] {
        if let Some(v) = value {
            settings.push((label.to_string(), v));
        }
    }
    RunView {
        name: name.to_string(),
        version: field("version").unwrap_or_else(|| env!("CARGO_PKG_VERSION").to_string()),
        state: field("state"),
        started: field("started").map(|t| readable_time(&t)),
        finished: field("finished").map(|t| readable_time(&t)),
        stopped: field("stopped"),
        settings,
    }
}
