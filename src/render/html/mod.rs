//! The run as pages to look at: `report.html` (the run: totals, repeats, a task table
//! that filters and sorts), each task's `task.html` (request, verdict, attempts, every
//! step with its result and screenshots, links to the raw files) and the comparison of
//! two runs, with small inline SVG pictures (pass rate by tag, repeat and run; task
//! durations). Rendered from templates with HTML escaping on; every page is one file that
//! opens from disk with no network. A task's page is its own file, loaded only when
//! opened, so a run of any size keeps a small report page.

mod charts;
mod compare_page;
mod run_page;
mod task_page;
mod task_view;

use std::sync::OnceLock;

use minijinja::Environment;
use minijinja::value::{Serde, Value};
use serde::Serialize;

pub(crate) use charts::{ChartCounts, comparison_charts};
pub(crate) use compare_page::compare_html;
#[cfg(test)]
use run_page::HTML_ROWS;
#[cfg(test)]
pub(crate) use run_page::report_html;
pub(crate) use run_page::write_report_html;
pub(crate) use task_page::task_html;

/// The templates, loaded once.
fn environment() -> &'static Environment<'static> {
    static ENV: OnceLock<Environment<'static>> = OnceLock::new();
    ENV.get_or_init(|| {
        let mut env = Environment::new();
        // Text shows its control characters (ESC, BEL, a lone CR) as escapes, as the
        // Markdown does, then is escaped for HTML; markup the pages made is left alone.
        env.set_formatter(|out, state, value| {
            if !value.is_safe()
                && let Some(text) = value.as_str()
                && let std::borrow::Cow::Owned(shown) = crate::text::printable(text)
            {
                return minijinja::escape_formatter(out, state, &Value::from(shown));
            }
            minijinja::escape_formatter(out, state, value)
        });
        // The tool's version, which the base template shows: a global, so that each
        // page's values are looked up in its view alone.
        env.add_global("version", env!("CARGO_PKG_VERSION"));
        for (name, source) in [
            ("base.html", include_str!("templates/base.html")),
            ("run.html", include_str!("templates/run.html")),
            // The shell of a task's page (see `page_shell`).
            ("shell.html", SHELL),
            ("compare.html", include_str!("templates/compare.html")),
        ] {
            env.add_template(name, source)
                .expect("the built-in templates parse (checked by the tests)");
        }
        env
    })
}

/// Where a task page's title and body go in its shell.
const HOLE: &str = "\u{1}ufo-batch-hole\u{1}";
/// A page of the base template with holes for its title and body.
const SHELL: &str = "{% extends \"base.html\" %}{% block title %}\u{1}ufo-batch-hole\u{1}{% endblock %}{% block body %}\u{1}ufo-batch-hole\u{1}{% endblock %}";

/// The base template around a page's title and body, rendered once: what comes
/// before the title, between the title and the body, and after the body.
fn page_shell() -> [&'static str; 3] {
    static PARTS: OnceLock<[String; 3]> = OnceLock::new();
    let parts = PARTS.get_or_init(|| {
        let page = render("shell.html", &()).expect("the built-in templates render");
        let mut parts = page.splitn(3, HOLE).map(str::to_string);
        std::array::from_fn(|_| parts.next().unwrap_or_default())
    });
    parts.each_ref().map(String::as_str)
}

/// A page that could not be rendered: a bug of the built-in templates, or a value they
/// cannot show.
#[derive(Debug, thiserror::Error)]
#[error("cannot render {page}: {source}")]
pub(crate) struct RenderError {
    /// The template.
    page: &'static str,
    /// What the template engine said.
    source: minijinja::Error,
}

/// Renders template `name` with `view`; the error says which page failed.
fn render(name: &'static str, view: &impl Serialize) -> Result<String, RenderError> {
    let failed = |source| RenderError { page: name, source };
    let template = environment().get_template(name).map_err(failed)?;
    template.render(Value::from(Serde(view))).map_err(failed)
}

/// An enum's serialized name (`"passed"`, `"success"`).
fn name_of(value: &impl Serialize) -> String {
    serde_json::to_value(value)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

/// A relative path (`/`-separated) as a URL path: each segment percent-encoded, so that
/// a `#`, `?` or `%` in a task's id stays part of its link.
pub(crate) fn url_path(path: &str) -> String {
    const SEGMENT: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
        .remove(b'.')
        .remove(b'-')
        .remove(b'_')
        .remove(b'~');
    path.split('/')
        .map(|s| percent_encoding::utf8_percent_encode(s, SEGMENT).to_string())
        .collect::<Vec<_>>()
        .join("/")
}

/// A share as a percentage: `87.5%`.
fn percent(share: f64) -> String {
    format!("{:.1}%", share * 100.0)
}

#[cfg(test)]
mod tests;
