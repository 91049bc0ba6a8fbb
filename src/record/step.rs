//! One agent step as written to `response.log` (one JSON line each), with UFO's key
//! names where they apply (ufo.md §4), plus the keys UFO drops (`observation`,
//! `thought`, `plan`, `comment`).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::AgentStatus;
use crate::tool::ToolResult;

/// One action of a step and its result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct ActionRecord {
    /// The tool called.
    pub(crate) function: String,
    /// Its arguments.
    pub(crate) arguments: Map<String, Value>,
    /// The agent's status for this action.
    pub(crate) status: AgentStatus,
    /// `tool(key="value")`.
    pub(crate) action_string: String,
    /// What the executor returned.
    pub(crate) result: ToolResult,
    /// How a replayed action differed from its recording, if it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) divergence: Option<String>,
    /// How long the command took, in seconds.
    #[serde(deserialize_with = "super::checked::seconds")]
    pub(crate) duration_s: f64,
}

impl ActionRecord {
    /// What the action came to, as every page names it: `diverged` when a replayed
    /// result differed from its recording (whatever the tool said), else the tool's
    /// status (`success`, `failure`, `skipped`).
    pub(crate) fn outcome(&self) -> String {
        if self.divergence.is_some() {
            "diverged".to_string()
        } else {
            self.result.status.to_string()
        }
    }
}

/// One agent step.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct StepRecord {
    /// `ReplayAgent`, `LinuxAgent`, ...
    pub(crate) agent_type: String,
    /// The agent's name (the recorded `agent` for replays).
    pub(crate) agent_name: String,
    /// 1-based step number in the session.
    pub(crate) session_step: u32,
    /// 1-based step number in the round.
    pub(crate) round_step: u32,
    /// 0-based round number.
    pub(crate) round_num: u32,
    /// The step's status.
    pub(crate) status: AgentStatus,
    /// The round's request.
    pub(crate) request: String,
    /// The subtask (for follower steps: the step text).
    #[serde(default)]
    pub(crate) subtask: Option<String>,
    /// What the agent saw.
    #[serde(default)]
    pub(crate) observation: Option<String>,
    /// Why it acted.
    #[serde(default)]
    pub(crate) thought: Option<String>,
    /// What it plans next.
    #[serde(default)]
    pub(crate) plan: Option<Value>,
    /// A remark to the user.
    #[serde(default)]
    pub(crate) comment: Option<String>,
    /// The actions taken, in order.
    pub(crate) action: Vec<ActionRecord>,
    /// Cost of the LLM calls of this step, when priced.
    #[serde(default, deserialize_with = "super::checked::cost")]
    pub(crate) llm_cost: Option<f64>,
    /// Tokens used by this step's LLM calls.
    #[serde(default)]
    pub(crate) prompt_tokens: u64,
    /// Tokens produced by this step's LLM calls.
    #[serde(default)]
    pub(crate) completion_tokens: u64,
    /// What went wrong in this step, if anything.
    #[serde(default)]
    pub(crate) error: Option<String>,
    /// A desktop step's screenshot as it began (a file of the task folder), UFO's key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) clean_screenshot_path: Option<String>,
    /// The same with every listed control boxed and labelled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) annotated_screenshot_path: Option<String>,
    /// When the step started.
    pub(crate) started: crate::units::Timestamp,
    /// How long it took, in seconds.
    #[serde(deserialize_with = "super::checked::seconds")]
    pub(crate) duration_s: f64,
    /// The agent's own keys (UFO's HostAgent keys such as `current_subtask` and
    /// `application`, its AppAgent keys such as `app_root` and `action_success`).
    #[serde(flatten)]
    pub(crate) extra: Map<String, Value>,
}

impl StepRecord {
    /// The step's error when it says something its actions do not: an error that only
    /// repeats an action's divergence or the tool's own error is shown once, with the
    /// action.
    pub(crate) fn own_error(&self) -> Option<&str> {
        let e = self.error.as_deref()?;
        let repeats = self.action.iter().any(|a| {
            [a.divergence.as_deref(), a.result.error.as_deref()]
                .into_iter()
                .flatten()
                .any(|said| {
                    !said.is_empty() && e.contains(crate::text::shorten(said, 300).as_str())
                })
        });
        (!repeats).then_some(e)
    }
}
