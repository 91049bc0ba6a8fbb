//! Agents: what decides the next step of a session. Each agent turns the context into
//! one step (status, actions taken, reasoning) and acts only through the executor it is
//! handed. The ReplayAgent replays recorded actions with no LLM; the LinuxAgent asks an
//! LLM; the EvaluationAgent judges a finished session.

mod ask;
mod conversation;
mod evaluation;
mod json_text;
mod linux;
mod prompt;
mod replay;
mod reply;

use async_trait::async_trait;
use serde_json::Value;

pub use evaluation::{EvaluationAgent, JudgeFailure, Judgement, parse_verdict};
pub use json_text::extract_object;
pub use linux::{AgentSettings, ConfirmPolicy, LinuxAgent};
pub use replay::ReplayAgent;
pub use reply::{Reply, ReplyAction, parse_reply};

use crate::executor::Executor;
use crate::record::{ActionRecord, LlmStats, Usage};
use crate::session::{AgentStatus, Context, Cost, ErrorKind};

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
