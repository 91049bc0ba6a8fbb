//! The keys of a task file with their JSON types, before they are given meaning.

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::task::{Action, App, Check, RecordedVerdict};

/// Keys a task file may have; anything else is a warning.
pub(super) const KNOWN_KEYS: &[&str] = &[
    "id",
    "task",
    "object",
    "close",
    "steps",
    "request",
    "actions",
    "tags",
    "timeout",
    "max_steps",
    "files",
    "setup",
    "evaluate",
    "recorded",
    "last_action",
    "app",
    "unique_id",
    "refined_steps",
    "mode",
    // OSWorld's task files (and plans recorded from one: `osworld`).
    "osworld",
    "instruction",
    "config",
    "evaluator",
    "related_apps",
    "snapshot",
    "source",
    "trajectory",
    "proxy",
    "fixed_ip",
    "possibility_of_env_change",
    "env_may_change",
    "hint",
];
/// Keys an action may have.
pub(super) const ACTION_KEYS: &[&str] = &["agent", "action", "parameters", "expect", "comment"];

/// The keys of a task file with their JSON types; meaning comes later.
#[derive(Deserialize)]
pub(super) struct RawTask {
    pub(super) id: Option<String>,
    pub(super) task: Option<String>,
    pub(super) object: Option<String>,
    pub(super) close: Option<BoolLike>,
    pub(super) steps: Option<Vec<String>>,
    pub(super) request: Option<String>,
    pub(super) actions: Option<Vec<Action>>,
    pub(super) tags: Option<Vec<String>>,
    pub(super) timeout: Option<Seconds>,
    pub(super) max_steps: Option<u32>,
    pub(super) files: Option<BTreeMap<String, String>>,
    pub(super) setup: Option<Vec<Action>>,
    pub(super) evaluate: Option<Vec<Check>>,
    pub(super) recorded: Option<RecordedVerdict>,
    pub(super) app: Option<App>,
    pub(super) unique_id: Option<UniqueId>,
    pub(super) refined_steps: Option<Vec<String>>,
    pub(super) mode: Option<crate::task::SessionMode>,
    /// An OSWorld task file's instruction (its request).
    pub(super) instruction: Option<String>,
    /// The OSWorld task a recorded plan was recorded from.
    pub(super) osworld: Option<serde_json::Value>,
    /// A recorded plan's last word after its actions: `FAIL` (the task cannot be done).
    pub(super) last_action: Option<String>,
}

impl RawTask {
    /// True when the file has `key`, one of the keys that decide its shape
    /// ([`super::keys::SHAPE_KEYS`]).
    pub(super) fn has(&self, key: &str) -> bool {
        match key {
            "request" => self.request.is_some(),
            "task" => self.task.is_some(),
            "actions" => self.actions.is_some(),
            "steps" => self.steps.is_some(),
            "refined_steps" => self.refined_steps.is_some(),
            "instruction" => self.instruction.is_some(),
            "evaluate" => self.evaluate.is_some(),
            _ => false,
        }
    }
}

/// UFO dataflow's `unique_id`: a string or a number.
#[derive(Deserialize)]
#[serde(untagged, expecting = "a string or a number")]
pub(super) enum UniqueId {
    Text(String),
    Number(u64),
}

impl UniqueId {
    pub(super) fn text(&self) -> String {
        match self {
            Self::Text(t) => t.clone(),
            Self::Number(n) => n.to_string(),
        }
    }
}

/// UFO's `close` is a bool, but dataflow writes the string `"True"`.
#[derive(Deserialize)]
#[serde(untagged, expecting = "true or false")]
pub(super) enum BoolLike {
    Bool(bool),
    Text(String),
}

/// A timeout in seconds, or a duration text such as `"90s"`.
#[derive(Deserialize)]
#[serde(
    untagged,
    expecting = "a number of seconds or a duration such as \"90s\""
)]
pub(super) enum Seconds {
    Number(f64),
    Text(String),
}
