//! What a round does after each agent status (ufo.md §6, single-tier agents), and
//! whose failure an `ERROR` is.
//!
//! UFO's `StateManager` maps an unknown status to a `None` state that ends the round
//! silently; here every status is a variant and every variant has a transition, so a
//! step can never end a round without saying why.

use crate::record::AgentStatus;
use crate::tool::Blame;

/// What kind of failure an `ERROR` step reports; it decides the task's status
/// (`attempt::outcome`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ErrorKind {
    /// Whose failure it is: the agent's (replies that could not be used) fails the
    /// task; any other's is an `error`.
    Blamed(Blame),
    /// Every other task would fail the same way (wrong key, unknown model, the server
    /// down): an `error`, whose it is, and the run stops scheduling.
    Fatal(Blame),
}

impl ErrorKind {
    /// The agent could not go on: the task `failed`.
    pub(crate) const AGENT: Self = Self::Blamed(Blame::Agent);
    /// The machine's side failed (LLM unreachable, executor broken): an `error` that
    /// may be retried.
    pub(crate) const INFRASTRUCTURE: Self = Self::Blamed(Blame::Environment);

    /// Whose failure it is.
    pub(crate) fn blame(self) -> Blame {
        match self {
            Self::Blamed(blame) | Self::Fatal(blame) => blame,
        }
    }
}

impl Default for ErrorKind {
    fn default() -> Self {
        Self::AGENT
    }
}

/// What the round does next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Transition {
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
/// in an unattended run and the agent has been told so. `ASSIGN` continues with the
/// AppAgent it assigned a subtask to (the two-tier agents decide their own transitions). `CONFIRM` reaching the round
/// means the unattended policy allowed the action (a denial turns the step into
/// `FAIL` before it gets here).
pub(crate) fn transition(status: AgentStatus) -> Transition {
    match status {
        AgentStatus::Continue
        | AgentStatus::Pending
        | AgentStatus::Confirm
        | AgentStatus::Assign => Transition::Continue,
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
}
