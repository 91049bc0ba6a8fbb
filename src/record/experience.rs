//! What experience a task was given and what it saved (`status.json` `experience`): the
//! records put in its agents' prompts, each with where it came from and its score, the
//! keys it added to the experience file, and why it saved nothing when it was to save.

use serde::{Deserialize, Serialize};

/// Where a record given to an agent came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum ExampleSource {
    /// An experience file (`--experience`).
    Experience,
    /// A recorded plan (`--demonstrations`).
    Demonstration,
}

impl ExampleSource {
    /// Its name in pages.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::Experience => "experience",
            Self::Demonstration => "demonstration",
        }
    }
}

/// One record put in an agent's prompt.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct GivenExample {
    /// The agent whose prompt it went into (`LinuxAgent`, `AppAgent`).
    pub(crate) agent: String,
    /// Experience or demonstration.
    pub(crate) source: ExampleSource,
    /// Its key in the experience file (`example12`), or the demonstration's plan file.
    pub(crate) key: String,
    /// Its request.
    pub(crate) request: String,
    /// Its BM25 score against the request it was found for (higher is more alike).
    pub(crate) score: f64,
    /// The run and task that saved it (`RUN/TASK_ID`), for a record ufo-batch saved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) from: Option<String>,
}

/// A task's experience: given and saved.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct ExperienceNote {
    /// Records put in its agents' prompts, in the order they were given.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) given: Vec<GivenExample>,
    /// Keys of the records it added to the experience file.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) saved: Vec<String>,
    /// Why it saved nothing, when it was to save and could not (a task the file holds
    /// already is not one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) not_saved: Option<String>,
}

impl ExperienceNote {
    /// True when there is nothing to say.
    pub(crate) fn is_empty(&self) -> bool {
        self.given.is_empty() && self.saved.is_empty() && self.not_saved.is_none()
    }
}
