//! Agent statuses and what a round does after each (ufo.md §6, single-tier agents).
//!
//! UFO's `StateManager` maps an unknown status to a `None` state that ends the round
//! silently; here every status is a variant and every variant has a transition, so a
//! step can never end a round without saying why.

use std::fmt;

use serde::{Deserialize, Serialize};

/// The status an agent gives each step (UFO's AgentStatus).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum AgentStatus {
    /// More to do in this round.
    Continue,
    /// The round's request is done.
    Finish,
    /// The agent gives up.
    Fail,
    /// Something broke (bad replies, executor failure).
    Error,
    /// The agent asks the user a question; unattended runs answer nobody and go on.
    Pending,
    /// The agent asks to confirm a sensitive action; the unattended policy decides.
    Confirm,
}

impl fmt::Display for AgentStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Continue => "CONTINUE",
            Self::Finish => "FINISH",
            Self::Fail => "FAIL",
            Self::Error => "ERROR",
            Self::Pending => "PENDING",
            Self::Confirm => "CONFIRM",
        })
    }
}

/// What kind of failure an `ERROR` step reports; it decides the task's status.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ErrorKind {
    /// The agent could not go on (replies that could not be used): the task `failed`.
    #[default]
    Agent,
    /// The runner's side failed (LLM unreachable, executor broken): the task is an
    /// `error` and may be retried.
    Infrastructure,
    /// As `Infrastructure`, and every other task would fail the same way (wrong key,
    /// unknown model): the run stops scheduling.
    Fatal,
}

/// What the round does next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transition {
    /// Same agent, next step.
    Continue,
    /// The round is done; the session moves to its next round.
    EndRound,
    /// The session ends as failed.
    Fail,
    /// The session ends in error.
    Error,
}

/// The transition after a step with `status`. `PENDING` continues: nobody will answer
/// in an unattended run and the agent has been told so. `CONFIRM` reaching the round
/// means the unattended policy allowed the action (a denial turns the step into
/// `FAIL` before it gets here).
pub fn transition(status: AgentStatus) -> Transition {
    match status {
        AgentStatus::Continue | AgentStatus::Pending | AgentStatus::Confirm => Transition::Continue,
        AgentStatus::Finish => Transition::EndRound,
        AgentStatus::Fail => Transition::Fail,
        AgentStatus::Error => Transition::Error,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_status_has_a_transition() {
        assert_eq!(transition(AgentStatus::Continue), Transition::Continue);
        assert_eq!(transition(AgentStatus::Pending), Transition::Continue);
        assert_eq!(transition(AgentStatus::Confirm), Transition::Continue);
        assert_eq!(transition(AgentStatus::Finish), Transition::EndRound);
        assert_eq!(transition(AgentStatus::Fail), Transition::Fail);
        assert_eq!(transition(AgentStatus::Error), Transition::Error);
    }

    #[test]
    fn statuses_use_ufo_names() {
        assert_eq!(
            serde_json::to_string(&AgentStatus::Finish).unwrap(),
            "\"FINISH\""
        );
        let s: AgentStatus = serde_json::from_str("\"CONTINUE\"").unwrap();
        assert_eq!(s, AgentStatus::Continue);
    }
}
