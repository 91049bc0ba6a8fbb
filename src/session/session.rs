//! A Session: rounds run one after another until there are no more requests or one
//! round ends the session (UFO's BaseSession.run), within step and round limits.
//!
//! Unlike UFO, a failed follower step stops the steps after it, and a follower session
//! gets as many rounds as it has steps (no MAX_ROUND trap).

use std::collections::VecDeque;

use super::{Context, Round, RoundEnd};
use crate::agent::Agent;
use crate::executor::Executor;
use crate::task::SessionKind;

/// Step and round limits of one session.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Steps in the whole session (UFO's MAX_STEP).
    pub max_steps: u32,
    /// Rounds in the session (UFO's MAX_ROUND).
    pub max_rounds: u32,
}

/// How a session ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SessionEnd {
    /// Every round finished.
    Finished,
    /// The agent gave up or a replay diverged, with the reason.
    Failed(String),
    /// The agent reported an error, with the reason.
    Error(String),
    /// The step limit was reached.
    StepLimit(u32),
    /// The round limit was reached with rounds still to run.
    RoundLimit(u32),
}

impl SessionEnd {
    /// One line on how the session ended.
    pub fn describe(&self) -> String {
        match self {
            Self::Finished => "finished".to_string(),
            Self::Failed(why) => format!("failed: {why}"),
            Self::Error(why) => format!("error: {why}"),
            Self::StepLimit(n) => format!(
                "stopped at the step limit ({n} steps); raise --max-steps or the task's max_steps"
            ),
            Self::RoundLimit(n) => {
                format!("stopped at the round limit ({n} rounds); raise --max-rounds")
            }
        }
    }
}

/// A session: an agent, the rounds it works through, and their shared context.
pub struct Session {
    /// FromFileSession or FollowerSession.
    pub kind: SessionKind,
    rounds: VecDeque<Round>,
    agent: Box<dyn Agent>,
    limits: Limits,
    /// Shared state; readable after `run` (or after its future is dropped on timeout).
    pub ctx: Context,
}

impl Session {
    /// A session that will run `rounds` in order with `agent`.
    pub fn new(
        kind: SessionKind,
        rounds: Vec<Round>,
        agent: Box<dyn Agent>,
        limits: Limits,
        ctx: Context,
    ) -> Self {
        Self {
            kind,
            rounds: rounds.into(),
            agent,
            limits,
            ctx,
        }
    }

    /// Runs rounds until the session ends.
    pub async fn run(&mut self, executor: &mut dyn Executor) -> SessionEnd {
        while let Some(round) = self.rounds.pop_front() {
            if self.ctx.rounds() >= self.limits.max_rounds {
                return SessionEnd::RoundLimit(self.limits.max_rounds);
            }
            self.ctx.round_num = self.ctx.rounds();
            let end = round
                .run(
                    self.agent.as_mut(),
                    &mut self.ctx,
                    executor,
                    self.limits.max_steps,
                )
                .await;
            match end {
                RoundEnd::Finished => {}
                RoundEnd::Failed(why) => return SessionEnd::Failed(why),
                RoundEnd::Error(why) => return SessionEnd::Error(why),
                RoundEnd::StepLimit => return SessionEnd::StepLimit(self.limits.max_steps),
            }
        }
        SessionEnd::Finished
    }
}
