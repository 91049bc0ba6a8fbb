//! `report.html`: the run at the top (name, version, when, the settings that matter,
//! totals, cost, repeats), then every task in a table, the ones that did not pass first.
//!
//! The table reads without JavaScript: its first [`HTML_ROWS`] rows are in the page as
//! HTML. Every task is also in the page once as compact JSON, from which the script
//! filters, sorts and draws the rows a page at a time, so that a run of any size opens
//! at once (a browser lays out 10,000 table rows in seconds; it parses their JSON in
//! milliseconds). The script also opens a task's own page in a panel.

use std::collections::BTreeSet;

use serde::Serialize;
use serde_json::Value;

use super::{cost_text, name_of, percent, render, url_path};
use crate::record::{TaskRow, TaskStatus};
use crate::render::repeats::{has_repeats, rates, repeat_totals};
use crate::render::summary::totals;
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
    pass_at_k: String,
    pass_all_k: String,
    flaky: Vec<String>,
}

#[derive(Serialize)]
struct Page {
    run: RunView,
    totals: crate::render::Totals,
    pass_rate: String,
    /// (label, count) of the statuses other than passed that occur.
    counts: Vec<(String, usize)>,
    task_seconds: String,
    tokens: u64,
    cost: String,
    repeats: Option<Repeats>,
    statuses: Vec<String>,
    folders: Vec<String>,
    tags: Vec<String>,
    /// The first [`HTML_ROWS`] rows.
    rows: Vec<Row>,
    /// Tasks not among `rows`.
    more: usize,
    /// Every task as JSON (see [`DataRows`]), safe inside a `<script>` element.
    data: String,
    page_rows: usize,
}

/// A task in the page's JSON: `[id, status, folder (index into the folders),
/// tags, duration in seconds, steps, cost in USD or null, attempts, reason]`. Arrays,
/// not objects: the keys would be a third of a 10,000-task page.
struct DataRows<'a> {
    sorted: &'a [&'a TaskRow],
    folders: &'a [String],
}

impl Serialize for DataRows<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.sorted.iter().map(|r| {
            let r = row(r);
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
pub(crate) fn report_html(
    name: &str,
    run: Option<&Value>,
    records: &[&TaskRow],
) -> Result<String, String> {
    let t = totals(records.iter().copied());
    let counts = [
        ("failed", t.failed),
        ("error", t.error),
        ("timeout", t.timeout),
        ("cancelled", t.cancelled),
        ("unfinished", t.unfinished),
    ]
    .into_iter()
    .filter(|(_, n)| *n > 0)
    .map(|(label, n)| (label.to_string(), n))
    .collect();
    let repeats = has_repeats(records.iter().copied()).then(|| {
        let r = repeat_totals(&rates(records.iter().copied()));
        Repeats {
            pass_at_1: percent(r.pass_at_1),
            pass_at_k: percent(r.pass_at_k),
            pass_all_k: percent(r.pass_all_k),
            flaky: r.flaky.iter().map(ToString::to_string).collect(),
        }
    });
    let mut sorted: Vec<&TaskRow> = records.to_vec();
    sorted.sort_by(|a, b| (order(a.status), &a.id).cmp(&(order(b.status), &b.id)));
    // A row is made for each task as the data is written, and kept only for the first
    // HTML_ROWS: at a million tasks, rows for all would be the largest allocation.
    let statuses: BTreeSet<String> = sorted.iter().map(|r| name_of(&r.status)).collect();
    let folders: Vec<String> = sorted
        .iter()
        .map(|r| folder_of(r))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let tags: BTreeSet<String> = records
        .iter()
        .flat_map(|r| r.tags.iter().cloned())
        .collect();
    let data = script_json(&(
        &folders,
        DataRows {
            sorted: &sorted,
            folders: &folders,
        },
    ))?;
    let more = sorted.len().saturating_sub(HTML_ROWS);
    let rows: Vec<Row> = sorted.iter().take(HTML_ROWS).map(|r| row(r)).collect();
    let page = Page {
        run: run_view(name, run),
        pass_rate: percent(t.pass_rate),
        counts,
        task_seconds: format!("{:.1} s", t.task_seconds),
        tokens: t.prompt_tokens + t.completion_tokens,
        cost: cost_text(t.cost_usd),
        totals: t,
        repeats,
        statuses: statuses.into_iter().collect(),
        folders,
        tags: tags.into_iter().collect(),
        rows,
        more,
        data,
        page_rows: HTML_ROWS,
    };
    render("run.html", &page)
}

/// `value` as JSON that cannot end or escape the `<script>` element it is written in:
/// every `<` is written `\u003c`, which JSON reads as the same character.
fn script_json(value: &impl Serialize) -> Result<String, String> {
    serde_json::to_string(value)
        .map(|json| json.replace('<', "\\u003c"))
        .map_err(|e| format!("cannot render report.html: {e}"))
}

/// Failures first, then errors, timeouts, the rest, and what passed last.
fn order(status: TaskStatus) -> u8 {
    match status {
        TaskStatus::Failed => 0,
        TaskStatus::Error => 1,
        TaskStatus::Timeout => 2,
        TaskStatus::Cancelled => 3,
        TaskStatus::Pending | TaskStatus::Running => 4,
        TaskStatus::Passed => 5,
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
        started: field("started"),
        finished: field("finished"),
        stopped: field("stopped"),
        settings,
    }
}
