//! The comparison of two runs as a page, in the style of `report.html`: both runs'
//! totals, then the regressions first, the fixes, new and missing tasks, each with its
//! pass rate in A and B and the change.

use super::RenderError;
use serde::Serialize;

use super::{percent, render, url_path};
use crate::render::comparison::{Change, Comparison, Side};
use crate::render::format::cost_text;
use crate::render::repeats::Rate;
use crate::rundir::layout::TASK_HTML;

#[derive(Serialize)]
struct SideView {
    label: &'static str,
    dir: String,
    tasks: usize,
    pass_rate: String,
    cost: String,
    tokens: u64,
    task_seconds: String,
}

#[derive(Serialize)]
struct ChangeView {
    id: String,
    /// B's task page (the run that is being judged).
    href: Option<String>,
    a: String,
    b: String,
    delta: String,
    reason: Option<String>,
}

#[derive(Serialize)]
struct Section {
    title: &'static str,
    rows: Vec<ChangeView>,
}

#[derive(Serialize)]
struct BeyondView {
    id: String,
    a: String,
    b: String,
    p: String,
}

#[derive(Serialize)]
struct Page<'a> {
    /// Tasks of A missing from B, said first.
    missing_line: Option<String>,
    /// The statistics' conclusion.
    verdict: String,
    /// How it was found.
    method: String,
    /// Without repetitions: the tasks by where they passed.
    table: Option<&'a crate::stats::PairedTable>,
    beyond_noise: Vec<BeyondView>,
    alpha: f64,
    flaky: Vec<String>,
    /// Each run's judge agreement (`--eval both`), with the run's label.
    judges: Vec<(&'static str, String)>,
    sides: Vec<SideView>,
    /// (title, inline SVG) of the pictures.
    charts: Vec<(String, String)>,
    /// "2 regressed · 1 fixed · ...".
    counts: String,
    sections: Vec<Section>,
}

/// The comparison page; task links lead to the task pages of run B (`b_href`: the
/// path from the page to B's folder, or none when there is no stable one).
pub(crate) fn compare_html(c: &Comparison, b_href: Option<&str>) -> Result<String, RenderError> {
    let section = |title, changes: &[Change]| Section {
        title,
        rows: changes.iter().map(|x| change(x, b_href)).collect(),
    };
    let st = &c.statistics;
    let page = Page {
        missing_line: c.missing_line(),
        verdict: c.verdict.clone(),
        method: format!("{}.", st.method()),
        table: st.table.as_ref(),
        beyond_noise: st
            .beyond_noise
            .iter()
            .map(|t| BeyondView {
                id: t.id.to_string(),
                a: t.a.shown(),
                b: t.b.shown(),
                p: format!("{:.4}", t.p_value),
            })
            .collect(),
        alpha: st.alpha,
        flaky: st.flaky.iter().map(ToString::to_string).collect(),
        judges: [("A", &c.a), ("B", &c.b)]
            .into_iter()
            .filter_map(|(label, s)| Some((label, s.judge_agreement.as_ref()?.line())))
            .collect(),
        sides: vec![side("A", &c.a), side("B", &c.b)],
        charts: super::comparison_charts(&c.pictures.a, &c.pictures.b, &c.pictures.series),
        counts: format!(
            "{} regressed · {} fixed · {} new · {} missing · {} unchanged",
            c.regressions.len(),
            c.fixes.len(),
            c.new.len(),
            c.missing.len(),
            c.unchanged
        ),
        sections: vec![
            section("Regressions", &c.regressions),
            section("Fixes", &c.fixes),
            section("New in B", &c.new),
            section("Missing from B", &c.missing),
        ],
    };
    render("compare.html", &page)
}

fn side(label: &'static str, s: &Side) -> SideView {
    SideView {
        label,
        dir: s.dir.clone(),
        tasks: s.tasks,
        pass_rate: percent(s.pass_rate),
        cost: cost_text(s.cost_usd),
        tokens: s.tokens,
        task_seconds: crate::render::compare_md::seconds(s.task_seconds, false),
    }
}

fn change(c: &Change, b_href: Option<&str>) -> ChangeView {
    let rate = |r: &Option<Rate>| r.as_ref().map_or("—".to_string(), Rate::shown);
    let delta = match (&c.a, &c.b) {
        // Single runs changed from passed to not or back: the two sides say it.
        (Some(a), Some(b)) if a.runs == 1 && b.runs == 1 => String::new(),
        (Some(a), Some(b)) => crate::render::significance::points(b.pass_rate - a.pass_rate),
        _ => String::new(),
    };
    ChangeView {
        id: c.id.to_string(),
        // B's page of the task, when B has one page for it (not missing, not repeated).
        href: b_href
            .filter(|_| c.b.as_ref().is_some_and(|r| r.runs == 1))
            .map(|b| format!("{b}/{}/{TASK_HTML}", url_path(c.id.as_str()))),
        a: rate(&c.a),
        b: rate(&c.b),
        delta,
        reason: c.reason.clone(),
    }
}
