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

pub(crate) use evaluation::{EvaluationAgent, JudgeFailure};
pub(crate) use linux::{AgentSettings, ConfirmPolicy, LinuxAgent};
pub(crate) use replay::ReplayAgent;
