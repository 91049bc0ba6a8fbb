//! Experience on the pages: on a task's `output.md` and `task.html`, the records its
//! agents were given (source, key, score, request, the task that saved it) and what it
//! saved; on the run's report, how many tasks were given records and how many it saved.

use std::fmt::Write;

use serde::Serialize;

use super::format::escaped as e;
use super::markdown::{cell, inline};
use crate::record::{ExperienceNote, TaskRow};

/// Characters of a record's request shown in a table.
const REQUEST_LIMIT: usize = 160;

/// The experience section of `output.md`.
pub(crate) fn markdown(md: &mut String, note: &ExperienceNote) {
    md.push_str("## Experience\n\n");
    if note.given.is_empty() {
        md.push_str("The agents were given no experience record or demonstration.\n\n");
    } else {
        md.push_str(
            "Given to the agents as examples:\n\n| Agent | Source | Record | Score | Request | Saved by |\n|---|---|---|---:|---|---|\n",
        );
        for g in &note.given {
            let _ = writeln!(
                md,
                "| {} | {} | {} | {:.3} | {} | {} |",
                cell(&g.agent, 40),
                g.source.as_str(),
                cell(&g.key, 120),
                g.score,
                cell(&g.request, REQUEST_LIMIT),
                cell(g.from.as_deref().unwrap_or("UFO or by hand"), 120),
            );
        }
        md.push('\n');
    }
    if !note.saved.is_empty() {
        let _ = writeln!(
            md,
            "Saved as experience: {}.\n",
            inline(&note.saved.join(", "))
        );
    }
    if let Some(why) = &note.not_saved {
        let _ = writeln!(md, "Not saved as experience: {}.\n", inline(why));
    }
}

/// The experience section of `task.html`.
pub(crate) fn html(out: &mut String, note: &ExperienceNote) -> std::fmt::Result {
    out.push_str("<h2>Experience</h2>\n");
    if note.given.is_empty() {
        out.push_str(
            "<p class=\"muted\">The agents were given no experience record or demonstration.</p>\n",
        );
    } else {
        out.push_str("<table><thead><tr><th>agent</th><th>source</th><th>record</th><th class=\"num\">score</th><th>request</th><th>saved by</th></tr></thead><tbody>\n");
        for g in &note.given {
            writeln!(
                out,
                "<tr><td>{}</td><td>{}</td><td><code>{}</code></td><td class=\"num\">{:.3}</td><td class=\"reason\">{}</td><td>{}</td></tr>",
                e(&g.agent),
                g.source.as_str(),
                e(&g.key),
                g.score,
                e(&crate::text::shorten(&g.request, REQUEST_LIMIT)),
                e(g.from.as_deref().unwrap_or("UFO or by hand")),
            )?;
        }
        out.push_str("</tbody></table>\n");
    }
    if !note.saved.is_empty() {
        writeln!(
            out,
            "<p>Saved as experience: <code>{}</code>.</p>",
            e(&note.saved.join(", "))
        )?;
    }
    if let Some(why) = &note.not_saved {
        writeln!(
            out,
            "<p class=\"reason\">Not saved as experience: {}.</p>",
            e(why)
        )?;
    }
    Ok(())
}

/// A run's experience, counted over its tasks.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub(crate) struct ExperienceCount {
    /// Tasks whose agents were given at least one record.
    pub(crate) tasks_given: u64,
    /// Records given, over every task.
    pub(crate) records_given: u64,
    /// Tasks that saved records.
    pub(crate) tasks_saved: u64,
    /// Records saved.
    pub(crate) records_saved: u64,
    /// Tasks that were to save and could not (each says why in its `status.json`).
    pub(crate) tasks_not_saved: u64,
}

impl ExperienceCount {
    /// Counts `row`.
    pub(crate) fn add(&mut self, row: &TaskRow) {
        if row.given > 0 {
            self.tasks_given += 1;
            self.records_given += u64::from(row.given);
        }
        if row.saved > 0 {
            self.tasks_saved += 1;
            self.records_saved += u64::from(row.saved);
        }
        if row.not_saved {
            self.tasks_not_saved += 1;
        }
    }

    /// The count, when there is anything to say.
    pub(crate) fn finish(self) -> Option<Self> {
        (self != Self::default()).then_some(self)
    }

    /// One line for the reports.
    pub(crate) fn line(&self) -> String {
        let given = self.tasks_given as usize;
        let failed = match self.tasks_not_saved {
            0 => String::new(),
            n => format!(
                " ⚠️ {} could not be saved (why is in each one's status.json).",
                crate::text::plural(n as usize, "task")
            ),
        };
        format!(
            "{} given experience ({} in all); {} saved as experience ({}).{failed}",
            crate::text::plural(given, "task") + if given == 1 { " was" } else { " were" },
            crate::text::plural(self.records_given as usize, "record"),
            crate::text::plural(self.tasks_saved as usize, "task"),
            crate::text::plural(self.records_saved as usize, "record"),
        )
    }
}
