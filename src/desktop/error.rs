//! What can go wrong on a task's desktop, and whose failure each is: the one error
//! type of the desktop backends (`Backend`) and the tools above them.

use crate::tool::{Blame, Blamed};

/// A desktop action or observation that failed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum DesktopError {
    /// What was asked cannot be done on this screen: a control or window that is not
    /// there, a control that does not take the action or value, arguments a tool
    /// refuses, an app closed by an earlier action. The agent's: the step fails and the
    /// agent sees why.
    #[error("{0}")]
    Refused(String),
    /// The app crashed (it was killed, or exited with an error) while the task ran.
    #[error("{0}")]
    AppCrashed(String),
    /// The desktop's own means failed: the display, the accessibility bus, a helper or
    /// a program it runs, the app that would not start. The machine's.
    #[error("{what}")]
    Desktop {
        /// What failed.
        what: String,
        /// Why, when a lower error says.
        #[source]
        source: Option<Box<dyn std::error::Error + Send + Sync>>,
    },
    /// What the task file names cannot be used: an app no one knows, a document the
    /// app cannot open.
    #[error("{0}")]
    TaskFile(String),
}

impl DesktopError {
    /// The desktop's means failed, saying `what`.
    pub(crate) fn desktop(what: impl Into<String>) -> Self {
        Self::Desktop {
            what: what.into(),
            source: None,
        }
    }

    /// The desktop's means failed, saying `what`, because of `source`.
    pub(crate) fn caused(
        what: impl Into<String>,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        Self::Desktop {
            what: what.into(),
            source: Some(Box::new(source)),
        }
    }
}

impl Blamed for DesktopError {
    fn blame(&self) -> Blame {
        match self {
            Self::Refused(_) => Blame::Agent,
            Self::AppCrashed(_) | Self::Desktop { .. } => Blame::Environment,
            Self::TaskFile(_) => Blame::TaskFile,
        }
    }
}

/// The words of an action the agent asked for that cannot be done: the agent's.
impl From<String> for DesktopError {
    fn from(refused: String) -> Self {
        Self::Refused(refused)
    }
}

impl From<&str> for DesktopError {
    fn from(refused: &str) -> Self {
        Self::Refused(refused.to_string())
    }
}
