//! Deterministic checks a task declares under `evaluate` (design.md §4). This module
//! owns their file format; `eval` owns running them.

use serde::{Deserialize, Serialize};

/// One check; all of a task's checks must hold for it to pass.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub(crate) enum Check {
    /// The path exists in the workspace.
    FileExists {
        /// Path relative to the workspace.
        path: String,
    },
    /// The file's text matches a regular expression somewhere.
    FileContains {
        /// Path relative to the workspace.
        path: String,
        /// Regular expression (Rust `regex` syntax), searched anywhere in the file.
        pattern: String,
    },
    /// The file's text is exactly this.
    FileEquals {
        /// Path relative to the workspace.
        path: String,
        /// The whole expected content.
        content: String,
    },
    /// The text of a document (`.docx`, `.odt`, `.pptx`, `.odp`, a spreadsheet or a
    /// plain-text file) matches a regular expression somewhere.
    DocumentContains {
        /// Path relative to the workspace.
        path: String,
        /// Regular expression, searched in the document's text (one line per paragraph).
        pattern: String,
    },
    /// A spreadsheet cell holds this value (the value its formula last computed).
    CellEquals {
        /// Path relative to the workspace (`.xlsx`, `.xls`, `.ods`).
        path: String,
        /// The sheet's name (default: the first sheet).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        sheet: Option<String>,
        /// The cell, as `B3`.
        cell: String,
        /// The value: a number compares as a number, anything else as text.
        value: serde_json::Value,
    },
    /// A shell command run in the workspace has this exit code and output.
    Command {
        /// The command line, run with `sh -c`.
        run: String,
        /// Required exit code (default 0).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        exit_code: Option<i64>,
        /// Regular expression its standard output must match.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        stdout: Option<String>,
    },
}

impl Check {
    /// A short name for reports: `file_equals sorted.csv`.
    pub(crate) fn name(&self) -> String {
        match self {
            Self::FileExists { path } => format!("file_exists {path}"),
            Self::FileContains { path, pattern } => format!("file_contains {path} /{pattern}/"),
            Self::FileEquals { path, .. } => format!("file_equals {path}"),
            Self::DocumentContains { path, pattern } => {
                format!("document_contains {path} /{pattern}/")
            }
            Self::CellEquals {
                path, sheet, cell, ..
            } => match sheet {
                Some(sheet) => format!("cell_equals {path} {sheet}!{cell}"),
                None => format!("cell_equals {path} {cell}"),
            },
            Self::Command { run, .. } => format!("command `{}`", crate::text::shorten(run, 80)),
        }
    }

    /// The workspace path the check reads, if it reads one.
    pub(crate) fn path(&self) -> Option<&str> {
        match self {
            Self::FileExists { path }
            | Self::FileContains { path, .. }
            | Self::FileEquals { path, .. }
            | Self::DocumentContains { path, .. }
            | Self::CellEquals { path, .. } => Some(path),
            Self::Command { .. } => None,
        }
    }

    /// Compiles a check's pattern: multi-line, so `^` and `$` match at line ends, as a
    /// user reading a file line by line expects.
    pub(crate) fn regex(pattern: &str) -> Result<regex::Regex, regex::Error> {
        regex::RegexBuilder::new(pattern).multi_line(true).build()
    }

    /// The regular expressions in the check, with the key each sits under.
    pub(crate) fn patterns(&self) -> Vec<(&'static str, &str)> {
        match self {
            Self::FileContains { pattern, .. } | Self::DocumentContains { pattern, .. } => {
                vec![("pattern", pattern)]
            }
            Self::Command {
                stdout: Some(re), ..
            } => vec![("stdout", re)],
            _ => Vec::new(),
        }
    }
}
