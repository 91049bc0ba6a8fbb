//! Reading one task file: JSON syntax, key types, shape, and the meaning of every key,
//! with every problem collected (not just the first) and located precisely.

use std::path::Path;

use serde_json::Value;

use super::{Problem, Task, TaskId};
use crate::tool::ToolSpec;
use checker::Checker;
use keys::UnknownKeys;
use locate::locate;
use raw::RawTask;

mod checker;
mod keys;
mod locate;
mod raw;
mod words;

/// What reading one file gave.
pub(crate) struct FileOutcome {
    /// The id the file declares, if it declares a valid one (used even when the file
    /// has other problems, so its error lands in the right folder).
    pub(crate) declared_id: Option<TaskId>,
    /// The task, or everything wrong with the file.
    pub(crate) result: Result<Task, Vec<Problem>>,
    /// A bad file's warnings (a task carries its own).
    pub(crate) warnings: Vec<String>,
}

/// Reads one task file's text. `default_id` is the id its path gives; `tools` are the
/// tools recorded actions may call.
pub(crate) fn parse_task(
    file: &Path,
    text: &str,
    default_id: Result<TaskId, super::IdError>,
    tools: &[ToolSpec],
) -> FileOutcome {
    let mut outcome = read(file, text, default_id, tools);
    // Every problem at its line and column (the parser knows only the first's): a
    // place's at its key or item, the file's at its start; a syntax error keeps the
    // parser's.
    if let Err(problems) = &mut outcome.result {
        for p in problems {
            let found = match (&p.at, p.position) {
                (Some(at), _) => locate(text, at),
                (None, None) => locate(text, ""),
                (None, Some(_)) => None,
            };
            if found.is_some() {
                p.position = found;
            }
        }
    }
    outcome
}

fn read(
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
        // An OSWorld task file's `id` is OSWorld's, not the task's.
        let declared_id = raw
            .id
            .as_deref()
            .filter(|_| raw.instruction.is_none())
            .and_then(|s| TaskId::parse(s).ok());
        return check(file, raw, &unknown, declared_id, default_id, tools, text);
    }
    // A file with a problem is read step by step, so that each problem is said
    // precisely (and the checks below find every one).
    let fail = |declared_id, problems, warnings| FileOutcome {
        declared_id,
        result: Err(problems),
        warnings,
    };
    // Syntax first, so a broken file gets the parser's line and column.
    let value: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => return fail(None, vec![syntax_problem(file, text, &e)], Vec::new()),
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
        return fail(None, vec![p], Vec::new());
    };
    let declared_id = object
        .get("id")
        .filter(|_| !object.contains_key("instruction"))
        .and_then(Value::as_str)
        .and_then(|s| TaskId::parse(s).ok());

    // Types second, located by the document path and the parser's position; every
    // value of a wrong type is found, not only the first.
    let (raw, problems, set_aside) = typed(file, text, &value);
    let unknown = UnknownKeys::of(object);
    let Some(raw) = raw else {
        return fail(declared_id, problems, unknown.warnings(&[]).collect());
    };
    let mut outcome = check(file, raw, &unknown, declared_id, default_id, tools, text);
    if !problems.is_empty() {
        let later = match outcome.result {
            Ok(task) => {
                outcome.warnings = task.warnings;
                Vec::new()
            }
            Err(later) => later,
        };
        let later = later.into_iter().map(|mut p| {
            p.at = p.at.map(|at| set_aside.original(&at));
            p
        });
        outcome.result = Err(problems.into_iter().chain(later).collect());
    }
    outcome
}

/// Most values of a wrong type said for one file.
const MAX_TYPE_PROBLEMS: usize = 50;

/// The task's keys with their types, and every value of a wrong type: the item of a
/// list (or the key) holding one is set aside and the rest read again, so a single
/// `validate` says every problem of the file.
fn typed(file: &Path, text: &str, value: &Value) -> (Option<RawTask>, Vec<Problem>, SetAside) {
    let mut set_aside = SetAside::default();
    // The first read is of the text, for the parser's line and column.
    let deserializer = &mut serde_json::Deserializer::from_str(text);
    let mut error = match serde_path_to_error::deserialize::<_, RawTask>(deserializer) {
        Ok(raw) => return (Some(raw), Vec::new(), set_aside),
        Err(e) => e,
    };
    let mut tree = value.clone();
    let mut problems = Vec::new();
    loop {
        let at = set_aside.original(&error.path().to_string());
        problems.push(json_problem(file, error.inner(), &at));
        if problems.len() >= MAX_TYPE_PROBLEMS || !set_aside.take(&mut tree, error.path()) {
            return (None, problems, set_aside);
        }
        match serde_path_to_error::deserialize::<_, RawTask>(tree.clone()) {
            Ok(raw) => return (Some(raw), problems, set_aside),
            Err(e) => error = e,
        }
    }
}

/// The items set aside from the file's top lists, by their index in the file, so that
/// later problems are said at the place they have in the file.
#[derive(Default)]
struct SetAside(Vec<(String, usize)>);

impl SetAside {
    /// Sets aside what holds the value at `path`: its item when it is in a top list,
    /// else its top key. False when there is nothing left to set aside.
    fn take(&mut self, tree: &mut Value, path: &serde_path_to_error::Path) -> bool {
        use serde_path_to_error::Segment;
        let mut segments = path.iter();
        let Some(Segment::Map { key }) = segments.next() else {
            return false;
        };
        let Some(object) = tree.as_object_mut() else {
            return false;
        };
        if let (Some(Segment::Seq { index }), Some(Value::Array(items))) =
            (segments.next(), object.get_mut(key))
            && *index < items.len()
        {
            items.remove(*index);
            let original = self.index_in_file(key, *index);
            self.0.push((key.clone(), original));
            return true;
        }
        object.remove(key).is_some()
    }

    /// The index in the file of item `index` of `list` as read now.
    fn index_in_file(&self, list: &str, index: usize) -> usize {
        let mut gone: Vec<usize> = self
            .0
            .iter()
            .filter(|(l, _)| l == list)
            .map(|(_, i)| *i)
            .collect();
        gone.sort_unstable();
        gone.into_iter()
            .fold(index, |at, g| if g <= at { at + 1 } else { at })
    }

    /// `at` (`evaluate[1].path`, as read now) as the place it has in the file.
    fn original(&self, at: &str) -> String {
        let Some((list, rest)) = at.split_once('[') else {
            return at.to_string();
        };
        let Some((index, tail)) = rest.split_once(']') else {
            return at.to_string();
        };
        match index.parse::<usize>() {
            Ok(i) if !list.contains(['.', '[']) => {
                format!("{list}[{}]{tail}", self.index_in_file(list, i))
            }
            _ => at.to_string(),
        }
    }
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
    let misspelt = unknown.misspelt_shape_keys(|key| raw.has(key));
    let keys: Vec<&str> = misspelt.iter().map(|(k, _)| *k).collect();
    let mut checker = Checker {
        file,
        problems: Vec::new(),
        warnings: unknown.warnings(&keys).collect(),
    };
    for (key, meant) in &misspelt {
        checker.problems.push(
            Problem::new(
                file,
                format!("unknown key `{key}`: did you mean `{meant}`? Without it the task is not what the file means"),
            )
            .at(*key)
            .fix(format!("spell it `{meant}` (or remove `{key}`)")),
        );
    }
    let task = checker.build(raw, default_id, tools, text);
    match (task, checker.problems.is_empty()) {
        (Some(task), true) => FileOutcome {
            declared_id,
            result: Ok(Task {
                warnings: checker.warnings,
                ..task
            }),
            warnings: Vec::new(),
        },
        _ => FileOutcome {
            declared_id,
            result: Err(checker.problems),
            warnings: checker.warnings,
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
    } else if let Some(near) = meant(&message) {
        format!("did you mean `{near}`?")
    } else if at.is_empty() {
        "see docs/task-files.md for the task file shapes".to_string()
    } else {
        format!("give `{at}` a value of the expected type")
    };
    Problem::new(file, words::plain(&message))
        .position(e.line(), e.column())
        .at(at)
        .fix(fix)
}

/// The word a serde "unknown variant `file_exist`, expected one of `file_exists`, ..."
/// (or "unknown field") message most likely meant.
fn meant(message: &str) -> Option<&str> {
    let (_, rest) = message
        .split_once("unknown variant `")
        .or_else(|| message.split_once("unknown field `"))?;
    let (word, expected) = rest.split_once('`')?;
    let candidates = expected.split('`').skip(1).step_by(2);
    crate::text::closest(word, candidates)
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod mutations;
