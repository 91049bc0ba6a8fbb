//! A task's `task.html`: the request and what became of it (status, reason, the
//! evaluation and its sub-scores), the attempts, then every step: agent, thought,
//! actions with their result (exit code, trimmed output, error, divergence) and, for
//! desktop tasks, the screenshots. Links go to the raw files beside it.
//!
//! A run writes one page per task, so the page is written straight from its view (every
//! text escaped for HTML, as the templates do), inside the shell of the base template
//! rendered once: a template engine cost more than the rest of a task's files.

use super::RenderError;
use std::fmt::Write;

use super::task_view::{
    ActionView, AttemptView, EvaluationView, FINAL_SHOT, StepView, TaskView, evaluation_view,
    step_view,
};
use super::{name_of, page_shell};
use crate::record::{Evaluation, StepRecord, TaskRecord, TaskStatus};
use crate::render::format::{cost_text, escaped as e, readable_time};
use crate::rundir::layout::{
    ATTEMPTS, EVALUATION_LOG, OUTPUT_MD, PLAN_JSON, RESPONSE_LOG, STATUS_JSON, TASK_LOG,
};
use crate::task::Problem;

struct Page<'a> {
    task: TaskView,
    /// From the task's folder up to the run's.
    up: String,
    files: Vec<&'static str>,
    problems: Vec<String>,
    evaluation: Option<EvaluationView>,
    attempts: Vec<AttemptView>,
    steps: Vec<StepView>,
    final_shot: Option<&'static str>,
    experience: Option<&'a crate::record::ExperienceNote>,
}

/// The page of one task, from what its folder holds.
pub(crate) fn task_html(
    record: &TaskRecord,
    trajectory: &[StepRecord],
    evaluation: Option<&Evaluation>,
    problems: &[Problem],
) -> Result<String, RenderError> {
    let depth = record.id.as_str().matches('/').count() + 1;
    // The final screenshot is taken when a desktop session ends (not on a timeout or a
    // cancellation).
    let final_shot = trajectory.iter().any(|s| s.clean_screenshot_path.is_some())
        && !matches!(record.status, TaskStatus::Timeout | TaskStatus::Cancelled);
    let page = Page {
        task: TaskView {
            id: record.id.to_string(),
            status: name_of(&record.status),
            reason: record.error.clone(),
            request: record.request.clone(),
            session: name_of(&record.session),
            shape: name_of(&record.shape),
            source: record.source.clone(),
            duration: format!("{:.2} s", record.duration_s),
            steps: record.steps,
            started: record.started.map(|t| readable_time(&t.to_string())),
            tokens: record.usage.prompt_tokens + record.usage.completion_tokens,
            cost: cost_text(record.cost_usd),
            llm: format!(
                "{} calls, {} retries, {} unusable replies, {} rate-limit answers, {:.1} s waiting",
                record.llm.calls,
                record.llm.retries,
                record.llm.bad_replies,
                record.llm.rate_limited,
                record.llm.waited_s
            ),
            tags: record.tags.join(", "),
        },
        up: "../".repeat(depth),
        files: [
            (STATUS_JSON, true),
            (OUTPUT_MD, true),
            (TASK_LOG, true),
            (PLAN_JSON, !trajectory.is_empty()),
            (RESPONSE_LOG, !trajectory.is_empty()),
            (EVALUATION_LOG, evaluation.is_some()),
        ]
        .into_iter()
        .filter_map(|(file, there)| there.then_some(file))
        .collect(),
        problems: problems.iter().map(ToString::to_string).collect(),
        evaluation: evaluation.map(evaluation_view),
        attempts: record
            .attempts
            .iter()
            .enumerate()
            .map(|(i, a)| AttemptView {
                attempt: a.attempt,
                status: name_of(&a.status),
                started: readable_time(&a.started.to_string()),
                error: a.error.clone(),
                files: (i + 1 < record.attempts.len())
                    .then(|| format!("{ATTEMPTS}/{}/", a.attempt)),
            })
            .collect(),
        steps: trajectory.iter().map(step_view).collect(),
        final_shot: final_shot.then_some(FINAL_SHOT),
        experience: record.experience.as_ref(),
    };
    Ok(write_page(&page))
}

/// The page's HTML.
fn write_page(page: &Page) -> String {
    let [head, middle, tail] = page_shell();
    let t = &page.task;
    let mut out = String::with_capacity(head.len() + middle.len() + tail.len() + 4096);
    out.push_str(head);
    let _ = write!(out, "{}: {}", e(&t.id), e(&t.status));
    out.push_str(middle);
    // Writing to a String cannot fail.
    let _ = write_body(&mut out, page);
    out.push_str(tail);
    out
}

/// The page's body: the task's header and facts, then evaluation, attempts and steps.
fn write_body(out: &mut String, page: &Page) -> std::fmt::Result {
    write_heading(out, page)?;
    write_meta(out, page)?;
    if !page.problems.is_empty() {
        write_problems(out, &page.problems)?;
    }
    if let Some(ev) = &page.evaluation {
        write_evaluation(out, ev)?;
    }
    if let Some(note) = page.experience {
        crate::render::experience::html(out, note)?;
    }
    if page.attempts.len() > 1 {
        write_attempts(out, &page.attempts)?;
    }
    write_steps(out, &page.steps)?;
    if let Some(shot) = page.final_shot {
        write_final_shot(out, shot)?;
    }
    Ok(())
}

/// The link back to the run and the title with the task's status badge.
fn write_heading(out: &mut String, page: &Page) -> std::fmt::Result {
    let t = &page.task;
    writeln!(
        out,
        "<p><a id=\"to-run\" href=\"{}report.html\" target=\"_top\">← the run</a></p>",
        e(&page.up)
    )?;
    writeln!(
        out,
        "<h1>{} <span class=\"badge s-{}\">{}</span></h1>",
        e(&t.id),
        e(&t.status),
        e(&t.status)
    )
}

/// The list of facts: request, reason, session, time, LLM use, tags and files.
fn write_meta(out: &mut String, page: &Page) -> std::fmt::Result {
    let t = &page.task;
    out.push_str("<dl class=\"meta\">\n");
    writeln!(
        out,
        "  <dt>request</dt><dd><pre>{}</pre></dd>",
        e(&t.request)
    )?;
    if let Some(reason) = shown(&t.reason) {
        writeln!(
            out,
            "  <dt>reason</dt><dd class=\"reason\">{}</dd>",
            e(reason)
        )?;
    }
    writeln!(
        out,
        "  <dt>session</dt><dd>{} ({}) · from <code>{}</code></dd>",
        e(&t.session),
        e(&t.shape),
        e(&t.source)
    )?;
    write!(
        out,
        "  <dt>time</dt><dd>{} · {} step{}",
        e(&t.duration),
        t.steps,
        if t.steps == 1 { "" } else { "s" }
    )?;
    if let Some(started) = &t.started {
        write!(out, " · started {}", e(started))?;
    }
    out.push_str("</dd>\n");
    if t.tokens > 0 {
        writeln!(
            out,
            "  <dt>LLM</dt><dd>{} tokens · {} · {}</dd>",
            t.tokens,
            e(&t.cost),
            e(&t.llm)
        )?;
    }
    if !t.tags.is_empty() {
        writeln!(out, "  <dt>tags</dt><dd>{}</dd>", e(&t.tags))?;
    }
    out.push_str("  <dt>files</dt><dd>");
    for (i, f) in page.files.iter().enumerate() {
        if i > 0 {
            out.push_str(" · ");
        }
        write!(out, "<a href=\"{}\">{}</a>", e(f), e(f))?;
    }
    out.push_str("</dd>\n</dl>\n");
    Ok(())
}

/// The "Problems of the task file" list.
fn write_problems(out: &mut String, problems: &[String]) -> std::fmt::Result {
    out.push_str("<h2>Problems of the task file</h2><ul>");
    for p in problems {
        write!(out, "<li><pre>{}</pre></li>", e(p))?;
    }
    out.push_str("</ul>\n");
    Ok(())
}

/// The "Steps" section, every step in turn, and the script for the run page's panel.
fn write_steps(out: &mut String, steps: &[StepView]) -> std::fmt::Result {
    out.push_str("<h2>Steps</h2>\n");
    if steps.is_empty() {
        out.push_str("<p class=\"muted\">No step was taken.</p>\n");
    }
    for s in steps {
        write_step(out, s)?;
    }
    out.push_str(PANEL_SCRIPT);
    Ok(())
}

/// The "At the end" section with the final screenshot.
fn write_final_shot(out: &mut String, shot: &str) -> std::fmt::Result {
    writeln!(
        out,
        "<h2>At the end</h2><div class=\"shots\"><figure><a href=\"{0}\" target=\"_blank\"><img src=\"{0}\" alt=\"final screenshot\" loading=\"lazy\"></a></figure></div>",
        e(shot)
    )
}

fn write_evaluation(out: &mut String, ev: &EvaluationView) -> std::fmt::Result {
    out.push_str("<h2>Evaluation</h2>\n");
    writeln!(
        out,
        "<p><span class=\"badge s-{}\">{}</span> by {}: {}</p>",
        e(ev.badge),
        e(&ev.complete),
        e(&ev.evaluator),
        e(&ev.reason)
    )?;
    if !ev.sub_scores.is_empty() {
        out.push_str(
            "<table><thead><tr><th>check</th><th>result</th><th>detail</th></tr></thead><tbody>\n",
        );
        for s in &ev.sub_scores {
            write!(
                out,
                "<tr><td>{}</td><td>{}</td><td class=\"reason\">{}</td></tr>",
                e(&s.name),
                e(&s.evaluation),
                e(s.detail.as_deref().unwrap_or(""))
            )?;
        }
        out.push_str("\n</tbody></table>\n");
    }
    Ok(())
}

fn write_attempts(out: &mut String, attempts: &[AttemptView]) -> std::fmt::Result {
    out.push_str("<h2>Attempts</h2>\n<table><thead><tr><th class=\"num\">#</th><th>status</th><th>started</th><th>error</th><th>files</th></tr></thead><tbody>\n");
    for a in attempts {
        write!(
            out,
            "<tr><td class=\"num\">{}</td><td><span class=\"badge s-{}\">{}</span></td><td>{}</td><td class=\"reason\">{}</td><td>",
            a.attempt,
            e(&a.status),
            e(&a.status),
            e(&a.started),
            e(a.error.as_deref().unwrap_or(""))
        )?;
        match &a.files {
            Some(files) => write!(out, "<a href=\"{}\">{}</a>", e(files), e(files))?,
            None => out.push_str("this page"),
        }
        out.push_str("</td></tr>");
    }
    out.push_str("\n</tbody></table>\n");
    Ok(())
}

/// One step's section: its heading, thought and observation, actions, comment, error and
/// screenshots.
fn write_step(out: &mut String, s: &StepView) -> std::fmt::Result {
    write_step_heading(out, s)?;
    write_labelled(out, "thought", &s.thought)?;
    write_labelled(out, "observation", &s.observation)?;
    for a in &s.actions {
        write_action(out, a)?;
    }
    if let Some(c) = shown(&s.comment) {
        writeln!(
            out,
            "  <div><span class=\"muted\">comment</span> {}</div>",
            e(c)
        )?;
    }
    if let Some(err) = shown(&s.error) {
        writeln!(out, "  <pre>{}</pre>", e(err))?;
    }
    if !s.shots.is_empty() {
        write_shots(out, s)?;
    }
    out.push_str("</section>\n");
    Ok(())
}

/// The step's opening tag and heading: number, agent, status, subtask and duration.
fn write_step_heading(out: &mut String, s: &StepView) -> std::fmt::Result {
    write!(
        out,
        "<section class=\"step\" id=\"step-{}\">\n  <h3>Step {} · {} · {}",
        s.n,
        s.n,
        e(&s.agent),
        e(&s.status)
    )?;
    if let Some(subtask) = shown(&s.subtask) {
        write!(out, " · {}", e(subtask))?;
    }
    writeln!(
        out,
        " <span class=\"muted\">({})</span></h3>",
        e(&s.duration)
    )
}

/// A labelled line of the step (thought, observation), when there is text to show.
fn write_labelled(out: &mut String, label: &str, text: &Option<String>) -> std::fmt::Result {
    match shown(text) {
        Some(text) => writeln!(
            out,
            "  <div class=\"wrap\"><span class=\"muted\">{label}</span> {}</div>",
            e(text)
        ),
        None => Ok(()),
    }
}

/// One action of a step: call, status, exit code, duration, divergence, error, output.
fn write_action(out: &mut String, a: &ActionView) -> std::fmt::Result {
    write!(
        out,
        "  <div><code>{}</code> <span class=\"badge s-{}\">{}</span>",
        e(&a.call),
        e(a.badge),
        e(&a.status)
    )?;
    if let Some(code) = a.exit_code {
        write!(out, " <span class=\"muted\">exit {code}</span>")?;
    }
    writeln!(
        out,
        " <span class=\"muted\">{}</span></div>",
        e(&a.duration)
    )?;
    for (label, text) in &a.place {
        writeln!(
            out,
            "  <div class=\"muted\"><b>{}:</b> {}</div>",
            e(label),
            e(text)
        )?;
    }
    if let Some(d) = shown(&a.divergence) {
        writeln!(
            out,
            "  <div class=\"reason\"><b>diverged:</b> {}</div>",
            e(d)
        )?;
    }
    if let Some(err) = shown(&a.error) {
        writeln!(out, "  <pre>{}</pre>", e(err))?;
    }
    if !a.output.is_empty() {
        writeln!(out, "  <pre>{}</pre>", e(&a.output))?;
    }
    Ok(())
}

/// The step's screenshots, each a link to the full image.
fn write_shots(out: &mut String, s: &StepView) -> std::fmt::Result {
    out.push_str("  <div class=\"shots\">");
    for (caption, file) in &s.shots {
        write!(
            out,
            "<figure><a href=\"{0}\" target=\"_blank\"><img src=\"{0}\" alt=\"{1} screenshot of step {2}\" loading=\"lazy\"></a><figcaption>{1} (click to enlarge)</figcaption></figure>",
            e(file),
            e(caption),
            s.n
        )?;
    }
    out.push_str("</div>\n");
    Ok(())
}

/// A text the page shows: there and not empty (as a template's `{% if %}` takes it).
fn shown(text: &Option<String>) -> Option<&str> {
    text.as_deref().filter(|t| !t.is_empty())
}

/// Shown in the run page's panel: Esc and "the run" close the panel instead.
const PANEL_SCRIPT: &str = r#"<script>
// Shown in the run page's panel: Esc and "the run" close the panel instead.
if (window.parent !== window) {
  var close = function (e) { e.preventDefault(); window.parent.postMessage("ufo-batch:close", "*"); };
  document.getElementById("to-run").addEventListener("click", close);
  document.addEventListener("keydown", function (e) { if (e.key === "Escape") close(e); });
}
</script>
"#;
