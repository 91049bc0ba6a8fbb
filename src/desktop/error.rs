//! What can go wrong on a task's desktop, and whose failure each is: the one error
//! type of the desktop backends (`Backend`) and the tools above them. The parts below
//! (the display, the accessibility bus, the desktop's programs, UI Automation, the
//! Office API helpers) have typed errors of their own that know whose failure they are
//! (`Blamed`); each becomes the variant its blame says ([`DesktopError::classified`]).

use crate::tool::{Blame, Blamed};

/// A lower error, kept as the cause of a `DesktopError`.
type Cause = Box<dyn std::error::Error + Send + Sync>;

/// A desktop action or observation that failed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum DesktopError {
    /// What was asked cannot be done on this screen: a control or window that is not
    /// there, a control that does not take the action or value, arguments a tool
    /// refuses, an app closed by an earlier action. The agent's: the step fails and the
    /// agent sees why.
    #[error("{what}")]
    Refused {
        /// Why, in words (a lower error's own words when there is one).
        what: String,
        /// The lower error that refused, when there is one.
        #[source]
        source: Option<Cause>,
    },
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
        source: Option<Cause>,
    },
    /// A file or folder of the desktop's that cannot be used (its temporary folder, a
    /// screenshot's file). The machine's.
    #[error("{what}: {source}")]
    Io {
        /// What was being done (`cannot write PATH`).
        what: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// What the task file names cannot be used: an app no one knows, a document the
    /// app cannot open.
    #[error("{0}")]
    TaskFile(String),
}

impl DesktopError {
    /// What the agent asked cannot be done, saying `what`.
    pub(crate) fn refused(what: impl Into<String>) -> Self {
        Self::Refused {
            what: what.into(),
            source: None,
        }
    }

    /// What the agent asked cannot be done, as `source` says (in its own words).
    pub(crate) fn refused_because(source: impl std::error::Error + Send + Sync + 'static) -> Self {
        Self::Refused {
            what: source.to_string(),
            source: Some(Box::new(source)),
        }
    }

    /// The desktop's means failed, saying `what`.
    pub(crate) fn desktop(what: impl Into<String>) -> Self {
        Self::Desktop {
            what: what.into(),
            source: None,
        }
    }

    /// `what` (`cannot write PATH`) failed on the machine's files: `source`.
    pub(crate) fn io(what: impl Into<String>, source: std::io::Error) -> Self {
        Self::Io {
            what: what.into(),
            source,
        }
    }

    /// A lower error of the desktop as the variant its blame says, in its own words
    /// (which render its causes), kept as the cause. No desktop error is the
    /// configuration's or the runner's; one that said so would be the machine's here.
    pub(crate) fn classified(e: impl Blamed + Send + Sync + 'static) -> Self {
        let what = e.to_string();
        match e.blame() {
            Blame::Agent => Self::Refused {
                what,
                source: Some(Box::new(e)),
            },
            Blame::TaskFile => Self::TaskFile(what),
            Blame::Environment | Blame::Config | Blame::Runner => Self::Desktop {
                what,
                source: Some(Box::new(e)),
            },
        }
    }
}

impl Blamed for DesktopError {
    fn blame(&self) -> Blame {
        match self {
            Self::Refused { .. } => Blame::Agent,
            Self::AppCrashed(_) | Self::Desktop { .. } | Self::Io { .. } => Blame::Environment,
            Self::TaskFile(_) => Blame::TaskFile,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("the thing failed: {0}")]
    struct Lower(#[source] std::io::Error, Blame);

    impl Blamed for Lower {
        fn blame(&self) -> Blame {
            self.1
        }
    }

    fn lower(blame: Blame) -> Lower {
        Lower(std::io::Error::other("no"), blame)
    }

    #[test]
    fn a_lower_error_becomes_the_variant_of_its_blame_in_its_own_words() {
        let refused = DesktopError::classified(lower(Blame::Agent));
        assert!(matches!(refused, DesktopError::Refused { .. }));
        let env = DesktopError::classified(lower(Blame::Environment));
        assert!(matches!(env, DesktopError::Desktop { .. }));
        let task = DesktopError::classified(lower(Blame::TaskFile));
        assert!(matches!(task, DesktopError::TaskFile(_)));
        for e in [refused, env, task] {
            // The causes are in the words already: nothing is said twice.
            assert_eq!(e.to_string(), "the thing failed: no");
            assert_eq!(e.failure().message, "the thing failed: no");
        }
    }

    #[test]
    fn an_io_failure_is_the_machines_and_says_its_cause_once() {
        let e = DesktopError::io("cannot write x.png", std::io::Error::other("disk full"));
        assert_eq!(e.to_string(), "cannot write x.png: disk full");
        assert_eq!(
            e.failure(),
            crate::tool::Failure::environment("cannot write x.png: disk full")
        );
    }
}
