//! Reading one task file: JSON syntax, key types, shape, and the meaning of every key,
//! with every problem collected (not just the first) and located precisely.

use std::path::Path;

use serde_json::Value;

use super::{Problem, Task, TaskId};
use crate::tool::ToolSpec;
use checker::Checker;
use keys::UnknownKeys;
use raw::RawTask;

mod checker;
mod keys;
mod raw;

/// What reading one file gave.
pub(crate) struct FileOutcome {
    /// The id the file declares, if it declares a valid one (used even when the file
    /// has other problems, so its error lands in the right folder).
    pub(crate) declared_id: Option<TaskId>,
    /// The task, or everything wrong with the file.
    pub(crate) result: Result<Task, Vec<Problem>>,
}

/// Reads one task file's text. `default_id` is the id its path gives; `tools` are the
/// tools recorded actions may call.
pub(crate) fn parse_task(
    file: &Path,
    text: &str,
    default_id: Result<TaskId, super::IdError>,
    tools: &[ToolSpec],
) -> FileOutcome {
    // Most files are well made: read as the task's keys directly, and once more for
    // the keys that mean nothing (each value skipped), never as a tree.
    if let Ok(raw) = serde_json::from_str::<RawTask>(text)
        && let Ok(unknown) = serde_json::from_str::<UnknownKeys>(text)
    {
        let declared_id = raw.id.as_deref().and_then(|s| TaskId::parse(s).ok());
        return check(file, raw, &unknown, declared_id, default_id, tools, text);
    }
    // A file with a problem is read step by step, so that each problem is said
    // precisely (and the checks below find every one).
    let fail = |declared_id, problems| FileOutcome {
        declared_id,
        result: Err(problems),
    };
    // Syntax first, so a broken file gets the parser's line and column.
    let value: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => return fail(None, vec![syntax_problem(file, text, &e)]),
    };
    let Some(object) = value.as_object() else {
        let p = Problem::new(
            file,
            format!(
                "a task file must hold a JSON object, not {}",
                crate::text::json_type(&value)
            ),
        )
        .fix("wrap the task in { ... } with a \"request\" or \"task\" key");
        return fail(None, vec![p]);
    };
    let declared_id = object
        .get("id")
        .and_then(Value::as_str)
        .and_then(|s| TaskId::parse(s).ok());

    // Types second, located by the document path and the parser's position.
    let deserializer = &mut serde_json::Deserializer::from_str(text);
    let raw: RawTask = match serde_path_to_error::deserialize(deserializer) {
        Ok(raw) => raw,
        Err(e) => {
            let at = e.path().to_string();
            return fail(declared_id, vec![json_problem(file, e.inner(), &at)]);
        }
    };

    let unknown = UnknownKeys::of(object);
    check(file, raw, &unknown, declared_id, default_id, tools, text)
}

/// Meaning last: every remaining problem of a file whose keys have their types is
/// collected.
fn check(
    file: &Path,
    raw: RawTask,
    unknown: &UnknownKeys,
    declared_id: Option<TaskId>,
    default_id: Result<TaskId, super::IdError>,
    tools: &[ToolSpec],
    text: &str,
) -> FileOutcome {
    let mut checker = Checker {
        file,
        problems: Vec::new(),
        warnings: unknown.warnings().collect(),
    };
    let task = checker.build(raw, default_id, tools, text);
    match (task, checker.problems.is_empty()) {
        (Some(task), true) => FileOutcome {
            declared_id,
            result: Ok(Task {
                warnings: checker.warnings,
                ..task
            }),
        },
        _ => FileOutcome {
            declared_id,
            result: Err(checker.problems),
        },
    }
}

/// A JSON syntax error as a problem, said in UFO's terms when the cause is one UFO's
/// own docs and Python habits lead to: `False`/`True`/`None`, or comments.
fn syntax_problem(file: &Path, text: &str, e: &serde_json::Error) -> Problem {
    let problem = json_problem(file, e, "");
    let at = text
        .lines()
        .nth(e.line().saturating_sub(1))
        .map(|line| {
            let start = line
                .char_indices()
                .nth(e.column().saturating_sub(1))
                .map_or(line.len(), |(i, _)| i);
            line[start..].trim_start()
        })
        .unwrap_or("");
    let python = [("True", "true"), ("False", "false"), ("None", "null")]
        .into_iter()
        .find(|(word, _)| at.starts_with(word));
    if let Some((word, json)) = python {
        return Problem {
            message: format!("`{word}` is Python, not JSON (JSON writes {json})"),
            fix: Some(format!(
                "write {json} in lower case (UFO's older docs show Python's {word})"
            )),
            ..problem
        };
    }
    if at.starts_with("//") || at.starts_with("/*") || text.trim_start().starts_with("//") {
        return Problem {
            message: "JSON has no comments".to_string(),
            fix: Some("remove the `//` and `/* */` comments (or move the note into a \"comment\" of an action)".to_string()),
            ..problem
        };
    }
    problem
}

/// A serde_json error as a problem, with its position split out of the message.
fn json_problem(file: &Path, e: &serde_json::Error, at: &str) -> Problem {
    let full = e.to_string();
    let suffix = format!(" at line {} column {}", e.line(), e.column());
    let message = full.strip_suffix(&suffix).unwrap_or(&full).to_string();
    let fix = if e.is_syntax() || e.is_eof() {
        "correct the JSON syntax there (a missing comma, quote or bracket is the usual cause)"
            .to_string()
    } else if at.is_empty() {
        "see design.md §2 for the task file shapes".to_string()
    } else {
        format!("give `{at}` a value of the expected type")
    };
    Problem::new(file, message)
        .position(e.line(), e.column())
        .at(at)
        .fix(fix)
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod mutations;
