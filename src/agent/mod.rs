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

pub use evaluation::{EvaluationAgent, JudgeFailure, Judgement, parse_verdict};
pub use json_text::extract_object;
pub use linux::{AgentSettings, ConfirmPolicy, LinuxAgent};
pub use replay::ReplayAgent;
pub use reply::{Reply, ReplyAction, parse_reply};
