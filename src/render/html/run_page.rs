//! `report.html`: the run at the top (name, version, when, the settings that matter,
//! totals, cost, repeats), then every task in a table, the ones that did not pass first.
//! The table reads without JavaScript; the page's script only filters, sorts and opens
//! a task's own page in a panel.

use std::collections::BTreeSet;

use serde::Serialize;
use serde_json::Value;

use super::{cost_text, name_of, percent, render};
use crate::record::{TaskRecord, TaskStatus};
use crate::render::repeats::{has_repeats, rates, repeat_totals};
use crate::render::summary::totals;
use crate::rundir::layout::TASK_HTML;

/// Characters of a reason shown in the table.
const REASON_LIMIT: usize = 300;

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
    tags: String,
    duration: f64,
    duration_text: String,
    steps: u32,
    cost: String,
    /// For sorting (empty when unknown: last either way).
    cost_sort: String,
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
    rows: Vec<Row>,
}

/// The page of a run named `name`, from its records and its `run.json` (`run`, when
/// there is one).
pub(crate) fn report_html(
    name: &str,
    run: Option<&Value>,
    records: &[&TaskRecord],
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
    let mut sorted: Vec<&TaskRecord> = records.to_vec();
    sorted.sort_by(|a, b| (order(a.status), &a.id).cmp(&(order(b.status), &b.id)));
    let rows: Vec<Row> = sorted.iter().map(|r| row(r)).collect();
    let statuses: BTreeSet<String> = rows.iter().map(|r| r.status.clone()).collect();
    let folders: BTreeSet<String> = rows.iter().map(|r| r.folder.clone()).collect();
    let tags: BTreeSet<String> = records
        .iter()
        .flat_map(|r| r.tags.iter().cloned())
        .collect();
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
        folders: folders.into_iter().collect(),
        tags: tags.into_iter().collect(),
        rows,
    };
    render("run.html", &page)
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

fn row(r: &TaskRecord) -> Row {
    let id = r.id.to_string();
    // A repetition (`x/rep-2`) belongs to the folder of its task.
    let base = r.base_id();
    let folder = match base.group() {
        "" => ".".to_string(),
        group => group.to_string(),
    };
    Row {
        href: format!("{id}/{TASK_HTML}"),
        status: name_of(&r.status),
        folder,
        tags: serde_json::to_string(&r.tags).unwrap_or_default(),
        duration: r.duration_s,
        duration_text: format!("{:.2} s", r.duration_s),
        steps: r.steps,
        cost: cost_text(r.cost_usd),
        cost_sort: r.cost_usd.map_or_else(String::new, |c| c.to_string()),
        attempts: r.attempts.len(),
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
