//! What made a result: the task file, the file it was given (UFO's `object`), and the
//! settings that change an outcome (the model, the server, evaluation, limits, the
//! agent's prompt). Stored in each `status.json`, so a resumed run keeps a result only
//! when it would be made the same way again, and says what changed when not.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

/// The inputs of one task's result.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Inputs {
    /// Hash of the task file's bytes.
    pub(crate) task_file: String,
    /// Hash of the object file copied in, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) object: Option<String>,
    /// Settings that change an outcome, by name (`model`, `eval`, `timeout`, ...):
    /// shared by the tasks that have the same (most of a batch).
    #[serde(default)]
    pub(crate) settings: Arc<BTreeMap<String, String>>,
}

/// The inputs of a task not started yet, held in a pointer: without the task file's
/// hash, which the task's source holds (see [`HeldInputs::with_task_file`]), and shared
/// by the tasks whose inputs are the same (most of a batch).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub(crate) struct HeldInputs(Arc<HeldParts>);

#[derive(Debug, Default, PartialEq, Eq, Hash)]
struct HeldParts {
    object: Option<Box<str>>,
    settings: Arc<BTreeMap<String, String>>,
}

impl HeldInputs {
    /// The inputs of a task whose file hashes to `task_file`.
    pub(crate) fn with_task_file(&self, task_file: String) -> Inputs {
        Inputs {
            task_file,
            object: self.0.object.as_deref().map(str::to_string),
            settings: Arc::clone(&self.0.settings),
        }
    }

    /// Whether the task was given a file of its own (such inputs are its alone).
    pub(crate) fn has_object(&self) -> bool {
        self.0.object.is_some()
    }
}

impl From<Inputs> for HeldInputs {
    fn from(inputs: Inputs) -> Self {
        Self(Arc::new(HeldParts {
            object: inputs.object.map(String::into_boxed_str),
            settings: inputs.settings,
        }))
    }
}

impl Inputs {
    /// How `now` differs from these (the inputs of an earlier result), in a few words:
    /// `model changed gpt-4o → o4-mini`; `None` when nothing differs.
    pub(crate) fn change_to(&self, now: &Inputs) -> Option<String> {
        if self.task_file != now.task_file {
            return Some("its task file changed".to_string());
        }
        if self.object != now.object {
            return Some("its object file changed".to_string());
        }
        let names = self.settings.keys().chain(now.settings.keys());
        for name in names {
            let (was, is) = (self.settings.get(name), now.settings.get(name));
            if was != is {
                let shown = |v: Option<&String>| v.map_or("(none)", String::as_str).to_string();
                return Some(format!("{name} changed {} → {}", shown(was), shown(is)));
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inputs(model: &str) -> Inputs {
        Inputs {
            task_file: "h".into(),
            object: None,
            settings: Arc::new(BTreeMap::from([("model".into(), model.into())])),
        }
    }

    #[test]
    fn says_what_changed() {
        assert_eq!(inputs("a").change_to(&inputs("a")), None);
        assert_eq!(
            inputs("gpt-4o").change_to(&inputs("o4-mini")).unwrap(),
            "model changed gpt-4o → o4-mini"
        );
        let mut edited = inputs("a");
        edited.task_file = "other".into();
        assert_eq!(
            inputs("a").change_to(&edited).unwrap(),
            "its task file changed"
        );
        let mut judged = inputs("a");
        Arc::make_mut(&mut judged.settings).insert("eval".into(), "llm".into());
        assert_eq!(
            inputs("a").change_to(&judged).unwrap(),
            "eval changed (none) → llm"
        );
    }
}
