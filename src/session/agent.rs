//! What a session drives: the `Agent` trait, and the `AgentStep` an agent reports for
//! each step it takes. The agents themselves live in `agent`.

use async_trait::async_trait;
use serde_json::Value;

use super::{Context, ErrorKind};
use crate::executor::Executor;
use crate::record::{ActionRecord, AgentStatus, LlmStats};
use crate::units::{Cost, Usage};

/// One step as an agent reports it; the round adds the counters and timing.
#[derive(Clone, Debug)]
pub struct AgentStep {
    /// The agent's kind (`ReplayAgent`, `LinuxAgent`).
    pub agent_type: &'static str,
    /// The agent's name.
    pub agent_name: String,
    /// What the round should do next.
    pub status: AgentStatus,
    /// The actions taken and their results.
    pub actions: Vec<ActionRecord>,
    /// What the agent saw.
    pub observation: Option<String>,
    /// Why it acted.
    pub thought: Option<String>,
    /// What it plans next.
    pub plan: Option<Value>,
    /// A remark.
    pub comment: Option<String>,
    /// Tokens used by this step.
    pub usage: Usage,
    /// Cost of this step.
    pub cost: Cost,
    /// What went wrong, if anything.
    pub error: Option<String>,
    /// With status ERROR: whose failure it is.
    pub error_kind: ErrorKind,
    /// LLM calls made for this step.
    pub llm: LlmStats,
}

impl AgentStep {
    /// A step with the given status and nothing else.
    pub fn new(
        agent_type: &'static str,
        agent_name: impl Into<String>,
        status: AgentStatus,
    ) -> Self {
        Self {
            agent_type,
            agent_name: agent_name.into(),
            status,
            actions: Vec::new(),
            observation: None,
            thought: None,
            plan: None,
            comment: None,
            usage: Usage::default(),
            cost: Cost::default(),
            error: None,
            error_kind: ErrorKind::default(),
            llm: LlmStats::default(),
        }
    }
}

/// Decides and carries out the steps of a session.
#[async_trait]
pub trait Agent: Send {
    /// Called when a round begins (a follower step starts with a fresh memory).
    fn begin_round(&mut self, _ctx: &Context) {}

    /// Takes one step.
    async fn handle(&mut self, ctx: &mut Context, executor: &mut dyn Executor) -> AgentStep;
}
