//! How values read in the pages and the Markdown: costs, status marks, times, and
//! text escaped for HTML. Leaves: they use nothing else of `render`.

use crate::record::TaskStatus;

/// A cost as the pages and Markdown show it: `unknown` when a model had no price, `—`
/// when nothing was spent (a recorded plan calls no model), else dollars. The data
/// files (`summary.json`, `summary.csv`, `junit.xml`) keep the number.
pub(super) fn cost_text(cost: Option<f64>) -> String {
    match cost {
        None => "unknown".to_string(),
        Some(0.0) => "—".to_string(),
        Some(c) => format!("${c:.4}"),
    }
}

/// A status as a mark in the Markdown tables.
pub(super) fn mark(status: TaskStatus) -> &'static str {
    match status {
        TaskStatus::Passed => "✅",
        TaskStatus::Failed => "❌",
        TaskStatus::Error => "💥",
        TaskStatus::Timeout => "⏱️",
        TaskStatus::Cancelled => "🚫",
        TaskStatus::Unsupported => "➖",
        TaskStatus::Pending | TaskStatus::Running => "…",
    }
}

/// An RFC 3339 time of `run.json` (`2026-11-28T05:32:10.278Z`) as people read it
/// (`2026-11-28 05:32:10 UTC`); anything else as it is.
pub(super) fn readable_time(stamp: &str) -> String {
    match humantime::parse_rfc3339(stamp) {
        Ok(time) => {
            let text = humantime::format_rfc3339_seconds(time).to_string();
            format!("{} UTC", text.trim_end_matches('Z').replace('T', " "))
        }
        Err(_) => stamp.to_string(),
    }
}

/// `text` escaped for HTML as the templates escape it (`&<>"'/`), its control
/// characters (ESC, BEL, a lone CR) shown as escapes first (`text::printable`).
pub(crate) fn escaped(text: &str) -> Escaped<'_> {
    Escaped(text)
}

/// Text written escaped for HTML (see [`escaped`]).
pub(crate) struct Escaped<'a>(&'a str);

impl std::fmt::Display for Escaped<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let shown = crate::text::printable(self.0);
        let mut rest: &str = &shown;
        while let Some(at) = rest.find(['&', '<', '>', '"', '\'', '/']) {
            f.write_str(&rest[..at])?;
            f.write_str(match rest.as_bytes()[at] {
                b'&' => "&amp;",
                b'<' => "&lt;",
                b'>' => "&gt;",
                b'"' => "&quot;",
                b'\'' => "&#x27;",
                _ => "&#x2f;",
            })?;
            rest = &rest[at + 1..];
        }
        f.write_str(rest)
    }
}
