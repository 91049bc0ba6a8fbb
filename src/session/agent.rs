//! What a session drives: the `Agent` trait, and the `AgentStep` an agent reports for
//! each step it takes. The agents themselves live in `agent`.

use async_trait::async_trait;
use serde_json::Value;

use super::{Context, ErrorKind, Transition, transition};
use crate::executor::{Executor, Scope};
use crate::record::{ActionRecord, AgentStatus, LlmStats};
use crate::units::{Cost, Usage};

/// One step as an agent reports it; the round adds the counters and timing.
#[derive(Clone, Debug)]
pub(crate) struct AgentStep {
    /// The agent's kind (`ReplayAgent`, `LinuxAgent`).
    pub(crate) agent_type: &'static str,
    /// The agent's name.
    pub(crate) agent_name: String,
    /// What the round should do next.
    pub(crate) status: AgentStatus,
    /// The subtask this step works on, when the agent has its own (a HostAgent's
    /// assignment); else the round's.
    pub(crate) subtask: Option<String>,
    /// The actions taken and their results.
    pub(crate) actions: Vec<ActionRecord>,
    /// What the agent saw.
    pub(crate) observation: Option<String>,
    /// Why it acted.
    pub(crate) thought: Option<String>,
    /// What it plans next.
    pub(crate) plan: Option<Value>,
    /// A remark.
    pub(crate) comment: Option<String>,
    /// Tokens used by this step.
    pub(crate) usage: Usage,
    /// Cost of this step.
    pub(crate) cost: Cost,
    /// What went wrong, if anything.
    pub(crate) error: Option<String>,
    /// With status ERROR: whose failure it is.
    pub(crate) error_kind: ErrorKind,
    /// LLM calls made for this step.
    pub(crate) llm: LlmStats,
    /// The agent's own keys for response.log (UFO's HostAgent and AppAgent keys).
    pub(crate) extra: serde_json::Map<String, Value>,
}

impl AgentStep {
    /// A step with the given status and nothing else.
    pub(crate) fn new(
        agent_type: &'static str,
        agent_name: impl Into<String>,
        status: AgentStatus,
    ) -> Self {
        Self {
            agent_type,
            agent_name: agent_name.into(),
            status,
            subtask: None,
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
            extra: serde_json::Map::new(),
        }
    }
}

/// What a model says besides its actions: what it saw, why, what next, a remark.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Words {
    /// What it saw.
    pub(crate) observation: Option<String>,
    /// Why it acts.
    pub(crate) thought: Option<String>,
    /// What it plans next.
    pub(crate) plan: Option<Value>,
    /// A remark (the final answer, on FINISH).
    pub(crate) comment: Option<String>,
}

impl AgentStep {
    /// Takes the model's words from its reply.
    pub(crate) fn reasoning(&mut self, words: &Words) {
        self.observation = words.observation.clone();
        self.thought = words.thought.clone();
        self.plan = words.plan.clone();
        self.comment = words.comment.clone();
    }
}

/// Decides and carries out the steps of a session.
#[async_trait]
pub(crate) trait Agent: Send {
    /// Called when a round begins (a follower step starts with a fresh memory).
    fn begin_round(&mut self, _ctx: &Context) {}

    /// What the next step looks at: the app window (its controls) or, for a HostAgent,
    /// the desktop (its application windows).
    fn scope(&self) -> Scope {
        Scope::App
    }

    /// Takes one step.
    async fn handle(&mut self, ctx: &mut Context, executor: &mut dyn Executor) -> AgentStep;

    /// What the round does after `step` (UFO's `next_state`): by its status, unless the
    /// agent has tiers of its own (an AppAgent's FINISH hands back to the HostAgent).
    fn next(&self, step: &AgentStep) -> Transition {
        transition(step.status)
    }
}
