//! Problems found in task files: one precise message per problem, naming the file, the
//! place in it where known, and how to fix it.

use std::fmt;
use std::path::{Path, PathBuf};

use super::id::TaskId;

/// One problem in one task file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Problem {
    /// The file.
    pub(crate) file: PathBuf,
    /// 1-based line and column, where the parser knows them.
    pub(crate) position: Option<(usize, usize)>,
    /// Where in the document (`actions[2].parameters`), where known.
    pub(crate) at: Option<String>,
    /// What is wrong.
    pub(crate) message: String,
    /// What to do about it.
    pub(crate) fix: Option<String>,
}

impl Problem {
    /// A problem with the file as a whole.
    pub(crate) fn new(file: &Path, message: impl Into<String>) -> Self {
        Self {
            file: file.to_path_buf(),
            position: None,
            at: None,
            message: message.into(),
            fix: None,
        }
    }

    /// Adds where in the document it is.
    pub(crate) fn at(mut self, at: impl Into<String>) -> Self {
        let at = at.into();
        if !at.is_empty() && at != "." {
            self.at = Some(at);
        }
        self
    }

    /// Adds the line and column.
    pub(crate) fn position(mut self, line: usize, column: usize) -> Self {
        if line > 0 {
            self.position = Some((line, column));
        }
        self
    }

    /// Adds how to fix it.
    pub(crate) fn fix(mut self, fix: impl Into<String>) -> Self {
        self.fix = Some(fix.into());
        self
    }

    /// The message without the file name, for a task's own error field.
    pub(crate) fn short(&self) -> String {
        let mut out = String::new();
        if let Some((line, col)) = self.position {
            out.push_str(&format!("line {line} column {col}: "));
        }
        if let Some(at) = &self.at {
            out.push_str(&format!("`{at}`: "));
        }
        out.push_str(&self.message);
        if let Some(fix) = &self.fix {
            out.push_str(&format!(" (fix: {fix})"));
        }
        out
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if let Some((line, col)) = self.position {
            write!(f, ":{line}:{col}")?;
        }
        write!(f, ": ")?;
        if let Some(at) = &self.at {
            write!(f, "`{at}`: ")?;
        }
        write!(f, "{}", self.message)?;
        if let Some(fix) = &self.fix {
            write!(f, "\n  fix: {fix}")?;
        }
        Ok(())
    }
}

/// A task file that cannot run, kept so its error is reported in the results.
#[derive(Clone, Debug)]
pub(crate) struct InvalidTask {
    /// Where its error result is written (its own id when it has a usable one).
    pub(crate) id: TaskId,
    /// The file.
    pub(crate) source: PathBuf,
    /// A hash of its bytes, so a resumed run notices when it was fixed.
    pub(crate) source_hash: String,
    /// The request the file states, when it states one as text (else empty).
    pub(crate) request: String,
    /// Everything wrong with it.
    pub(crate) problems: Vec<Problem>,
    /// What it has that means nothing (unknown keys), said beside its problems so that
    /// one `validate` shows all of it.
    pub(crate) warnings: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn displays_file_position_path_and_fix() {
        let p = Problem::new(
            Path::new("plans/a.json"),
            "invalid type: string \"yes\", expected a boolean",
        )
        .position(3, 15)
        .at("close")
        .fix("use true or false");
        assert_eq!(
            p.to_string(),
            "plans/a.json:3:15: `close`: invalid type: string \"yes\", expected a boolean\n  fix: use true or false"
        );
        assert_eq!(
            p.short(),
            "line 3 column 15: `close`: invalid type: string \"yes\", expected a boolean (fix: use true or false)"
        );
    }
}
