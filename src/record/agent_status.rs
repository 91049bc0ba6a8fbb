//! The status an agent gives each step (UFO's AgentStatus), as response.log and
//! `plan.json` persist it. What a round does after each is the session's business.

use std::fmt;

use serde::{Deserialize, Serialize};

/// The status an agent gives each step (UFO's AgentStatus).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub(crate) enum AgentStatus {
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
    /// The HostAgent hands a subtask to an AppAgent.
    Assign,
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
            Self::Assign => "ASSIGN",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
