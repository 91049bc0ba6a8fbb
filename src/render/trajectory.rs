//! `output.md`: a task's trajectory in markdown. Request and outcome first, then the
//! evaluation, then every step with its action, result and error — UFO's layout
//! (ufo.md §5) with the parts UFO drops (thought, every action, real step numbers).

use std::fmt::Write;

use super::markdown::inline;
use crate::record::{ActionRecord, Complete, Evaluation, StepRecord, TaskRecord};
use crate::rundir::layout::ATTEMPTS;
use crate::task::Problem;

/// Output lines shown per stream; the rest is in `response.log`.
const MAX_LINES: usize = 40;
/// Output characters shown per stream.
const MAX_CHARS: usize = 4000;

/// Renders the trajectory of one task.
pub(crate) fn render(
    record: &TaskRecord,
    steps: &[StepRecord],
    evaluation: Option<&Evaluation>,
    problems: &[Problem],
) -> String {
    let mut md = String::new();
    let _ = writeln!(md, "# Trajectory: {}\n", record.id);
    summary(&mut md, record, steps);
    if !problems.is_empty() {
        md.push_str("## Problems in the task file\n\n");
        for p in problems {
            let _ = writeln!(md, "- {}", p.to_string().replace('\n', "\n  "));
        }
        md.push('\n');
    }
    md.push_str("## Evaluation Results\n\n");
    match evaluation {
        Some(e) => evaluation_section(&mut md, e),
        None => md.push_str("No evaluation results found.\n\n"),
    }
    if let Some(note) = &record.experience {
        super::experience::markdown(&mut md, note);
    }
    md.push_str("## Steps\n\n");
    if steps.is_empty() {
        md.push_str("No steps were taken.\n");
    }
    for (i, step) in steps.iter().enumerate() {
        step_section(&mut md, step);
        screenshots(&mut md, step, steps.get(i + 1));
    }
    // Control codes from commands and models are shown, never obeyed by a terminal.
    crate::text::printable(&md).into_owned()
}

fn summary(md: &mut String, r: &TaskRecord, steps: &[StepRecord]) {
    md.push_str("## Summary\n\n");
    if !r.request.is_empty() {
        let _ = writeln!(md, "- **Request**: {}", inline(&r.request));
    }
    let _ = writeln!(
        md,
        "- **Status**: {} {}",
        super::format::mark(r.status),
        r.status
    );
    if let Some(why) = &r.error {
        let _ = writeln!(md, "- **Why**: {}", inline(why));
    }
    let agents: Vec<&str> = steps.iter().fold(Vec::new(), |mut seen, s| {
        if !seen.contains(&s.agent_type.as_str()) {
            seen.push(s.agent_type.as_str());
        }
        seen
    });
    let agent_note = if agents.is_empty() {
        String::new()
    } else {
        format!(", {}", agents.join(", "))
    };
    let _ = writeln!(
        md,
        "- **Session**: {} ({:?}{agent_note})",
        r.session.as_str(),
        r.shape
    );
    let _ = writeln!(md, "- **Source**: `{}`", r.source);
    let _ = writeln!(md, "- **Total Steps**: {}", r.steps);
    let _ = writeln!(md, "- **Total Rounds**: {}", r.rounds);
    let count = |agent: &str| steps.iter().filter(|s| s.agent_type == agent).count();
    if count("HostAgent") > 0 {
        let _ = writeln!(md, "- **Host Agent Steps**: {}", count("HostAgent"));
        let _ = writeln!(md, "- **App Agent Steps**: {}", count("AppAgent"));
    }
    let _ = writeln!(md, "- **Duration**: {:.3} s", r.duration_s);
    let _ = writeln!(md, "- **Attempts**: {}", r.attempts.len());
    if r.usage.total() > 0 || r.cost_usd != Some(0.0) {
        let _ = writeln!(
            md,
            "- **Tokens**: {} prompt + {} completion",
            r.usage.prompt_tokens, r.usage.completion_tokens
        );
        let cost = r.cost_usd.map_or(
            "unknown (no price configured for the model)".to_string(),
            |c| format!("${c:.4}"),
        );
        let _ = writeln!(md, "- **Cost**: {cost}");
    }
    if !r.tags.is_empty() {
        let _ = writeln!(md, "- **Tags**: {}", inline(&r.tags.join(", ")));
    }
    for w in &r.warnings {
        let _ = writeln!(md, "- **Warning**: {}", inline(w));
    }
    if r.attempts.len() > 1 {
        md.push_str("- **Earlier attempts**:\n");
        for a in &r.attempts[..r.attempts.len() - 1] {
            let why = a
                .error
                .as_deref()
                .map(|e| format!(": {}", inline(e)))
                .unwrap_or_default();
            let _ = writeln!(
                md,
                "  - attempt {} {}{why} (files in `{ATTEMPTS}/{}/`)",
                a.attempt, a.status, a.attempt
            );
        }
    }
    md.push('\n');
}

fn evaluation_section(md: &mut String, e: &Evaluation) {
    let _ = writeln!(md, "- **Complete**: {}", e.complete);
    let _ = writeln!(md, "- **Reason**: {}", inline(&e.reason));
    let _ = writeln!(md, "- **Evaluator**: {:?}", e.evaluator);
    if !e.sub_scores.is_empty() {
        md.push_str("- **Sub_Scores**:\n");
        for s in &e.sub_scores {
            let detail = s
                .detail
                .as_deref()
                .map(|d| format!(": {}", inline(d)))
                .unwrap_or_default();
            let _ = writeln!(
                md,
                "  - {} {}{detail}",
                complete_mark(s.evaluation),
                crate::text::code_span(&s.name)
            );
        }
    }
    md.push('\n');
}

/// A desktop step's screens side by side, as UFO's trajectory shows them: the
/// annotated screen the step began with, and the screen it left (the next step's, or
/// the final screenshot).
fn screenshots(md: &mut String, step: &StepRecord, next: Option<&StepRecord>) {
    let Some(before) = &step.annotated_screenshot_path else {
        return;
    };
    let after = next
        .and_then(|n| n.clean_screenshot_path.clone())
        .unwrap_or_else(|| "action_step_final.png".to_string());
    let _ = writeln!(
        md,
        "<div style=\"display:flex\">\n<img src=\"./{before}\" width=\"45%\" alt=\"step {n}: the screen it began with, controls labelled\"> <img src=\"./{after}\" width=\"45%\" alt=\"step {n}: the screen it left\">\n</div>\n",
        n = step.session_step
    );
}

fn step_section(md: &mut String, step: &StepRecord) {
    let title = match step.action.as_slice() {
        [] => "no action".to_string(),
        [only] => crate::text::code_span(&only.action_string),
        many => format!("{} actions", many.len()),
    };
    let _ = writeln!(md, "### Step {}: {title}\n", step.session_step);
    let _ = writeln!(
        md,
        "- **Agent**: {} · round {}, step {} · {}",
        step.agent_name, step.round_num, step.round_step, step.status
    );
    if let Some(subtask) = &step.subtask {
        let _ = writeln!(md, "- **Subtask**: {}", inline(subtask));
    }
    for (label, text) in [
        ("Observation", &step.observation),
        ("Thought", &step.thought),
        ("Comment", &step.comment),
    ] {
        if let Some(t) = text.as_deref().filter(|t| !t.trim().is_empty()) {
            let _ = writeln!(md, "- **{label}**: {}", inline(t));
        }
    }
    if let Some(plan) = &step.plan {
        let shown = match plan {
            serde_json::Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        if !shown.trim().is_empty() && shown != "null" && shown != "[]" {
            let _ = writeln!(md, "- **Plan**: {}", inline(&shown));
        }
    }
    if step.prompt_tokens + step.completion_tokens > 0 {
        let _ = writeln!(
            md,
            "- **Tokens**: {} prompt + {} completion",
            step.prompt_tokens, step.completion_tokens
        );
    }
    let many = step.action.len() > 1;
    for action in &step.action {
        action_section(md, action, many);
    }
    if let Some(e) = step.own_error() {
        let _ = writeln!(md, "- **Error**: {}", inline(e));
    }
    md.push('\n');
}

fn action_section(md: &mut String, a: &ActionRecord, show_action: bool) {
    if show_action {
        let _ = writeln!(
            md,
            "- **Action**: {}",
            crate::text::code_span(&a.action_string)
        );
    }
    let outcome = a.outcome();
    let mut result = format!("{} {outcome}", result_mark(&outcome));
    if a.divergence.is_some() {
        let _ = write!(result, " (the tool said {})", a.result.status);
    }
    if let Some(code) = a.result.exit_code() {
        let _ = write!(result, " · exit code {code}");
    }
    let _ = write!(result, " · {:.3} s", a.duration_s);
    let _ = writeln!(md, "- **Result**: {result}");
    for (label, text) in super::computer::details(a) {
        let _ = writeln!(md, "- **{label}**: {}", inline(&text));
    }
    if let Some(e) = &a.result.error {
        let _ = writeln!(md, "- **Error**: {}", inline(e));
    }
    if let Some(d) = &a.divergence {
        let _ = writeln!(md, "- **Diverged from the recording**: {}", inline(d));
    }
    let r = &a.result.result;
    let mut shown = false;
    for (label, key) in [
        ("Output", "stdout"),
        ("Stderr", "stderr"),
        ("Content", "content"),
        // What an MCP tool answered.
        ("Result", "text"),
    ] {
        if let Some(text) = r
            .get(key)
            .and_then(|v| v.as_str())
            .filter(|t| !t.trim().is_empty())
        {
            let _ = writeln!(md, "\n{label}:\n");
            md.push_str(&code_block(text));
            md.push('\n');
            shown = true;
        }
    }
    // The runner's own tools' results are shown above; a device's or an MCP server's
    // tool may answer in fields of its own.
    let own = matches!(
        a.result.namespace.as_deref(),
        Some("shell" | "AppUIExecutor" | "HostUIExecutor") | None
    );
    if let Some(other) = other_result(r).filter(|_| !shown && !own) {
        md.push_str("\nResult:\n\n");
        md.push_str(&code_block(&other));
        md.push('\n');
    }
    if let Some(entries) = a.result.entries() {
        let names: Vec<String> = entries.into_iter().map(|(name, _)| name).collect();
        md.push_str("\nEntries:\n\n");
        md.push_str(&code_block(&names.join("\n")));
        md.push('\n');
    }
}

/// A result that is not a command's, a file's or a listing (those have their own
/// sections), as JSON text.
fn other_result(result: &serde_json::Value) -> Option<String> {
    let known = [
        "exit_code",
        "stdout",
        "stderr",
        "content",
        "text",
        "entries",
        "path",
        "bytes",
        "append",
        "truncated",
        "timed_out",
        "signal",
        "duration_s",
        "more",
        "note",
        "stdout_omitted_bytes",
        "stderr_omitted_bytes",
        "success",
        "control",
        "window",
    ];
    match result {
        serde_json::Value::Object(m) if m.keys().any(|k| !known.contains(&k.as_str())) => {
            serde_json::to_string_pretty(result).ok()
        }
        serde_json::Value::Array(items) if !items.is_empty() => {
            serde_json::to_string_pretty(result).ok()
        }
        _ => None,
    }
}

/// A fenced block of `text`, shortened, with a fence longer than any backtick run in it.
fn code_block(text: &str) -> String {
    let lines: Vec<&str> = text.trim_end().lines().collect();
    let mut shown: String = lines
        .iter()
        .take(MAX_LINES)
        .copied()
        .collect::<Vec<_>>()
        .join("\n");
    let mut cut = lines.len() > MAX_LINES;
    if shown.chars().count() > MAX_CHARS {
        shown = shown.chars().take(MAX_CHARS).collect();
        cut = true;
    }
    let longest_run = shown.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat((longest_run + 1).max(3));
    let mut out = format!("{fence}text\n{shown}\n{fence}\n");
    if cut {
        let _ = writeln!(
            out,
            "\n(shortened: {} lines in all; the full output is in `response.log`)",
            lines.len()
        );
    }
    out
}

fn complete_mark(c: Complete) -> &'static str {
    match c {
        Complete::Yes => "✅",
        Complete::No => "❌",
        Complete::Unsure => "❔",
    }
}

fn result_mark(status: &str) -> &'static str {
    match status {
        "success" => "✅",
        "failure" | "diverged" => "❌",
        _ => "⏭️",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fences_survive_backticks_in_output() {
        let block = code_block("a ``` b");
        assert!(block.starts_with("````text\n"), "{block}");
    }

    #[test]
    fn long_output_is_shortened_with_a_pointer() {
        let text: Vec<String> = (0..100).map(|i| i.to_string()).collect();
        let block = code_block(&text.join("\n"));
        assert!(block.contains("\n39\n"));
        assert!(!block.contains("\n40\n"));
        assert!(block.contains("(shortened: 100 lines in all"));
    }
}
