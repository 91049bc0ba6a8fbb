//! The values a parameter, or a call's parameters together, may take beyond their JSON
//! types, and the words a call outside them is refused with.

use serde_json::{Map, Value};

/// The values a parameter takes beyond its JSON type, checked before a call (in a task
/// file by `validate` and `run` alike, in a model's call before it is carried out) and
/// said in the parameter's description: a call outside it is the caller's failure, told
/// to it, and never reaches the app, so that no argument sizes work past it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Bound {
    /// An integer from the first to the second, both included.
    Range(i64, i64),
    /// A string of at most this many characters, or an array of at most this many items.
    Length(usize),
    /// One file name of at most this many characters: no `/` or `\\`, no NUL, not `.`
    /// or `..` (a folder is another parameter's).
    Name(usize),
    /// A path relative to the workspace that stays in it (`relpath`'s rule: not absolute,
    /// no `..` above it, not too long); the workspace itself (`.`) only when `true`.
    Path(bool),
}

impl Bound {
    /// Why `value` is outside it, if it is.
    pub(super) fn refuses(self, value: &Value) -> Option<String> {
        match (self, value) {
            (Self::Range(low, high), Value::Number(n)) => {
                let inside = n.as_i64().is_some_and(|i| (low..=high).contains(&i));
                (!inside).then(|| format!("{} is not from {low} to {high}", shortened(value)))
            }
            (Self::Length(max), Value::String(s)) => {
                let len = s.chars().count();
                (len > max).then(|| format!("it is {len} characters long; it may be at most {max}"))
            }
            (Self::Length(max), Value::Array(items)) => (items.len() > max)
                .then(|| format!("it has {} items; it may have at most {max}", items.len())),
            (Self::Path(root), Value::String(s)) => crate::relpath::normalize_relative(s, root)
                .err()
                .map(|e| e.to_string()),
            (Self::Name(max), Value::String(s)) => {
                if s.contains(['/', '\\', '\0']) || s == "." || s == ".." {
                    Some(format!(
                        "{} is not a file name (no / or \\, not . or ..): give the folder on its own",
                        shortened(value)
                    ))
                } else {
                    Self::Length(max).refuses(value)
                }
            }
            _ => None,
        }
    }

    /// The bound in words, as a description ends with it (a path's description says
    /// its rule already).
    pub(super) fn said(self) -> Option<String> {
        match self {
            Self::Range(low, high) => Some(format!("from {low} to {high}")),
            Self::Length(max) => Some(format!("at most {max} long")),
            Self::Name(max) => Some(format!("a name of at most {max} characters, no folder")),
            Self::Path(_) => None,
        }
    }
}

/// A value as an error quotes it: never more than 80 characters of it.
fn shortened(value: &Value) -> String {
    crate::text::shorten(&value.to_string(), 80)
}

/// A bound over several parameters of a call (Office's cells), checked before the call
/// like each parameter's [`Bound`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Limit {
    /// At most this many cells from (`start_row`, `start_col`) to (`end_row`,
    /// `end_col`) when both ends are given (an end of -1 is the app's to find, and the
    /// app checks the range it finds).
    Range(u64),
    /// At most this many cells of `rows` × `columns`.
    Grid(u64),
    /// At most this many values over the rows of `table`.
    Table(u64),
}

impl Limit {
    /// Why `arguments` go beyond it, if they do.
    pub(super) fn refuses(self, arguments: &Map<String, Value>) -> Option<String> {
        let int = |key: &str| arguments.get(key).and_then(Value::as_i64);
        let over = |cells: u64, max: u64, what: &str| {
            (cells > max).then(|| format!("{what} {cells} cells; a call may take at most {max}"))
        };
        match self {
            Self::Range(max) => {
                if let Some(end) = ["end_row", "end_col"]
                    .into_iter()
                    .find(|k| int(k) == Some(0))
                {
                    return Some(format!(
                        "`{end}` is 0, no row or column: give -1 (to the end) or a number from 1"
                    ));
                }
                let span = |from: &str, to: &str| match (int(from), int(to)) {
                    (Some(a), Some(b)) if b >= a => Some((b - a + 1) as u64),
                    _ => None,
                };
                let (rows, cols) = (span("start_row", "end_row")?, span("start_col", "end_col")?);
                over(rows.saturating_mul(cols), max, "the range holds")
            }
            Self::Grid(max) => {
                let cells =
                    (int("rows")?.max(0) as u64).saturating_mul(int("columns")?.max(0) as u64);
                over(cells, max, "the table would have")
            }
            Self::Table(max) => {
                let rows = arguments.get("table")?.as_array()?;
                let cells = rows
                    .iter()
                    .map(|r| r.as_array().map_or(1, Vec::len) as u64)
                    .sum::<u64>();
                over(cells, max, "the table has")
            }
        }
    }
}
