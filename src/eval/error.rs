//! Why a check does not hold, in words that say what was found instead of what was
//! expected (each becomes its sub-score's `detail`), and an `--eval` mode that is none.
//!
//! A check that does not hold, or cannot be made on what the task left, is a verdict on
//! the session (the evaluation's `no`), not a failure of a layer below it: these errors
//! carry no blame. A check that cannot be made because the executor cannot bring the
//! task's files home is the executor's fault, said before the checks run.

use crate::document::{BadCellRef, CellRef, ReaderError};
use crate::regular_file::FileAccessError;
use crate::relpath::PathError;

/// Why a check does not hold.
#[derive(Debug, thiserror::Error)]
pub(crate) enum CheckError {
    /// The path is not one in the workspace.
    #[error(transparent)]
    Path(#[from] PathError),
    /// The workspace cannot be opened.
    #[error("cannot open the workspace: {0}")]
    Workspace(#[source] FileAccessError),
    /// Nothing is there.
    #[error("`{0}` does not exist")]
    Missing(String),
    /// A link is there.
    #[error("`{0}` is a symbolic link; links are not followed")]
    Link(String),
    /// The file cannot be read.
    #[error("cannot read `{path}`: {source}")]
    Unreadable {
        /// The path.
        path: String,
        /// Why.
        #[source]
        source: FileAccessError,
    },
    /// The check's pattern is not a regular expression.
    #[error(transparent)]
    Pattern(#[from] regex::Error),
    /// The file's text has no match.
    #[error("no match for /{pattern}/ in `{path}` ({size})")]
    NoMatch {
        /// The pattern.
        pattern: String,
        /// The file.
        path: String,
        /// How much was read (`3 lines read`, `the file is empty`).
        size: String,
    },
    /// The file's text is not the one expected: where they differ, described.
    #[error("{0}")]
    Differs(String),
    /// The document reader gave no text.
    #[error("`{path}`: {source}")]
    Document {
        /// The document.
        path: String,
        /// Why.
        #[source]
        source: ReaderError,
    },
    /// The document's text has no match.
    #[error("no match for /{pattern}/ in the text of `{path}` ({size}: {start:?})")]
    NoMatchInDocument {
        /// The pattern.
        pattern: String,
        /// The document.
        path: String,
        /// How much was read.
        size: String,
        /// The text's start.
        start: String,
    },
    /// The cell named is not a cell reference.
    #[error(transparent)]
    Cell(#[from] BadCellRef),
    /// The cell holds another value.
    #[error("`{path}` cell {at} is {got:?}, expected {want}")]
    CellDiffers {
        /// The document.
        path: String,
        /// The cell.
        at: CellRef,
        /// What it holds (its start).
        got: String,
        /// What was expected, as the task file gives it (JSON).
        want: String,
    },
    /// The command exited with another code.
    #[error("exit code {got}, expected {want}{}", hint.as_ref().map(|h| format!(" ({h})")).unwrap_or_default())]
    ExitCode {
        /// Its exit code.
        got: i64,
        /// The one expected.
        want: i64,
        /// The first line of its stderr, when it wrote one.
        hint: Option<String>,
    },
    /// The command could not run: the executor's words.
    #[error("{0}")]
    CommandFailed(String),
    /// The command ran and gave no exit code.
    #[error("the command gave no exit code")]
    NoExitCode,
    /// The command's output has no match.
    #[error("stdout {out:?} does not match /{pattern}/")]
    Stdout {
        /// Its output (its start).
        out: String,
        /// The pattern.
        pattern: String,
    },
}

/// An `--eval` that names no evaluation mode.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown evaluation mode `{0}` (use auto, checks, llm, both or none)")]
pub(crate) struct UnknownEvalMode(pub(crate) String);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_says_what_was_found_word_for_word() {
        let exit = |hint: Option<&str>| CheckError::ExitCode {
            got: 1,
            want: 0,
            hint: hint.map(str::to_string),
        };
        assert_eq!(exit(None).to_string(), "exit code 1, expected 0");
        assert_eq!(exit(Some("no")).to_string(), "exit code 1, expected 0 (no)");
        let cell = CheckError::CellDiffers {
            path: "book.xlsx".into(),
            at: CellRef::parse("b4").unwrap(),
            got: "41".into(),
            want: serde_json::json!(42).to_string(),
        };
        assert_eq!(
            cell.to_string(),
            r#"`book.xlsx` cell B4 is "41", expected 42"#
        );
        let text = CheckError::NoMatchInDocument {
            pattern: "^x".into(),
            path: "a.docx".into(),
            size: "1 line read".into(),
            start: "hello".into(),
        };
        assert_eq!(
            text.to_string(),
            r#"no match for /^x/ in the text of `a.docx` (1 line read: "hello")"#
        );
        assert_eq!(
            "nope"
                .parse::<crate::eval::EvalMode>()
                .unwrap_err()
                .to_string(),
            "unknown evaluation mode `nope` (use auto, checks, llm, both or none)"
        );
    }
}
