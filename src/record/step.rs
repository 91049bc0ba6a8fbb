//! One agent step as written to `response.log` (one JSON line each), with UFO's key
//! names where they apply (ufo.md §4), plus the keys UFO drops (`observation`,
//! `thought`, `plan`, `comment`).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::AgentStatus;
use crate::tool::ToolResult;

/// One action of a step and its result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ActionRecord {
    /// The tool called.
    pub function: String,
    /// Its arguments.
    pub arguments: Map<String, Value>,
    /// The agent's status for this action.
    pub status: AgentStatus,
    /// `tool(key="value")`.
    pub action_string: String,
    /// What the executor returned.
    pub result: ToolResult,
    /// How a replayed action differed from its recording, if it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub divergence: Option<String>,
    /// How long the command took, in seconds.
    pub duration_s: f64,
}

/// One agent step.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StepRecord {
    /// `ReplayAgent`, `LinuxAgent`, ...
    pub agent_type: String,
    /// The agent's name (the recorded `agent` for replays).
    pub agent_name: String,
    /// 1-based step number in the session.
    pub session_step: u32,
    /// 1-based step number in the round.
    pub round_step: u32,
    /// 0-based round number.
    pub round_num: u32,
    /// The step's status.
    pub status: AgentStatus,
    /// The round's request.
    pub request: String,
    /// The subtask (for follower steps: the step text).
    #[serde(default)]
    pub subtask: Option<String>,
    /// What the agent saw.
    #[serde(default)]
    pub observation: Option<String>,
    /// Why it acted.
    #[serde(default)]
    pub thought: Option<String>,
    /// What it plans next.
    #[serde(default)]
    pub plan: Option<Value>,
    /// A remark to the user.
    #[serde(default)]
    pub comment: Option<String>,
    /// The actions taken, in order.
    pub action: Vec<ActionRecord>,
    /// Cost of the LLM calls of this step, when priced.
    #[serde(default)]
    pub llm_cost: Option<f64>,
    /// Tokens used by this step's LLM calls.
    #[serde(default)]
    pub prompt_tokens: u64,
    /// Tokens produced by this step's LLM calls.
    #[serde(default)]
    pub completion_tokens: u64,
    /// What went wrong in this step, if anything.
    #[serde(default)]
    pub error: Option<String>,
    /// When the step started.
    pub started: crate::units::Timestamp,
    /// How long it took, in seconds.
    pub duration_s: f64,
}
