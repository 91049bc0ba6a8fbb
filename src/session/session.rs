//! A Session: rounds run one after another until there are no more requests or one
//! round ends the session (UFO's BaseSession.run), within step and round limits.
//!
//! Unlike UFO, a failed follower step stops the steps after it, and a follower session
//! gets as many rounds as it has steps (no MAX_ROUND trap).

use std::collections::VecDeque;

use super::Agent;
use super::{Context, ErrorKind, Round, RoundEnd};
use crate::executor::Executor;
use crate::record::SessionType;

/// Step and round limits of one session.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Limits {
    /// Steps in the whole session (UFO's MAX_STEP).
    pub(crate) max_steps: u32,
    /// Rounds in the session (UFO's MAX_ROUND).
    pub(crate) max_rounds: u32,
}

/// How a session ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum SessionEnd {
    /// Every round finished.
    Finished,
    /// The agent gave up or a replay diverged, with the reason.
    Failed(String),
    /// The agent reported an error, with the reason and whose failure it is.
    Error(String, ErrorKind),
    /// The step limit was reached.
    StepLimit(u32),
    /// The round limit was reached with rounds still to run.
    RoundLimit(u32),
}

impl SessionEnd {
    /// One line on how the session ended.
    pub(crate) fn describe(&self) -> String {
        match self {
            Self::Finished => "finished".to_string(),
            Self::Failed(why) => format!("failed: {why}"),
            Self::Error(why, _) => format!("error: {why}"),
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
pub(crate) struct Session {
    /// FromFileSession or FollowerSession.
    pub(crate) session_type: SessionType,
    rounds: VecDeque<Round>,
    agent: Box<dyn Agent>,
    limits: Limits,
    /// Shared state; readable after `run` (or after its future is dropped on timeout).
    pub(crate) ctx: Context,
}

impl Session {
    /// A session that will run `rounds` in order with `agent`.
    pub(crate) fn new(
        session_type: SessionType,
        rounds: Vec<Round>,
        agent: Box<dyn Agent>,
        limits: Limits,
        ctx: Context,
    ) -> Self {
        Self {
            session_type,
            rounds: rounds.into(),
            agent,
            limits,
            ctx,
        }
    }

    /// Runs rounds until the session ends.
    pub(crate) async fn run(&mut self, executor: &mut dyn Executor) -> SessionEnd {
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
                RoundEnd::Error(why, kind) => return SessionEnd::Error(why, kind),
                RoundEnd::StepLimit => return SessionEnd::StepLimit(self.limits.max_steps),
            }
        }
        SessionEnd::Finished
    }
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;

    use async_trait::async_trait;

    use super::*;
    use crate::event::Event;
    use crate::record::AgentStatus;
    use crate::session::AgentStep;
    use crate::testutil::RecordingExecutor;

    /// Answers each step with the next scripted status; CONTINUE when the script ends.
    struct Scripted(VecDeque<AgentStatus>);

    #[async_trait]
    impl Agent for Scripted {
        async fn handle(&mut self, _ctx: &mut Context, _executor: &mut dyn Executor) -> AgentStep {
            let status = self.0.pop_front().unwrap_or(AgentStatus::Continue);
            AgentStep::new("TestAgent", "test", status)
        }
    }

    fn session(
        script: &[AgentStatus],
        rounds: usize,
        limits: Limits,
    ) -> (Session, crate::event::EventReceiver) {
        let (tx, rx) = crate::event::channel();
        let ctx = Context::new(
            "r".into(),
            "/tmp".into(),
            tx.for_task(crate::task::TaskId::parse("t").unwrap()),
        );
        let rounds = (0..rounds)
            .map(|i| Round {
                request: format!("round {i}"),
                subtask: None,
            })
            .collect();
        let agent = Box::new(Scripted(script.iter().copied().collect()));
        (
            Session::new(SessionType::FollowerSession, rounds, agent, limits, ctx),
            rx,
        )
    }

    const WIDE: Limits = Limits {
        max_steps: 100,
        max_rounds: 100,
    };
    use AgentStatus::{Continue as C, Error as E, Fail as F, Finish as D};

    #[tokio::test]
    async fn rounds_run_in_order_with_per_round_counts() {
        let (mut s, mut rx) = session(&[C, D, D, C, C, D], 3, WIDE);
        assert_eq!(
            s.run(&mut RecordingExecutor::default()).await,
            SessionEnd::Finished
        );
        assert_eq!(s.ctx.round_steps, vec![2, 1, 3]);
        assert_eq!(s.ctx.session_step, 6);
        let mut seen = Vec::new();
        while let Ok(Event::StepFinished { step, .. }) = rx.try_recv() {
            seen.push((
                step.session_step,
                step.round_num,
                step.round_step,
                step.request.clone(),
            ));
        }
        assert_eq!(seen[3], (4, 2, 1, "round 2".to_string()));
        assert_eq!(seen.len(), 6);
    }

    #[tokio::test]
    async fn step_limit_is_session_wide() {
        let (mut s, _rx) = session(
            &[C, D, C, C, C],
            2,
            Limits {
                max_steps: 4,
                max_rounds: 10,
            },
        );
        assert_eq!(
            s.run(&mut RecordingExecutor::default()).await,
            SessionEnd::StepLimit(4)
        );
        assert_eq!(s.ctx.round_steps, vec![2, 2]);
    }

    #[tokio::test]
    async fn round_limit_stops_before_the_next_round() {
        let (mut s, _rx) = session(
            &[D, D, D],
            3,
            Limits {
                max_steps: 10,
                max_rounds: 2,
            },
        );
        assert_eq!(
            s.run(&mut RecordingExecutor::default()).await,
            SessionEnd::RoundLimit(2)
        );
        assert_eq!(s.ctx.rounds(), 2);
    }

    #[tokio::test]
    async fn fail_and_error_end_the_session_early() {
        let (mut s, _rx) = session(&[D, F, D], 3, WIDE);
        assert_eq!(
            s.run(&mut RecordingExecutor::default()).await,
            SessionEnd::Failed("the agent said FAIL".into())
        );
        assert_eq!(
            s.ctx.round_steps,
            vec![1, 1],
            "the third round never starts"
        );
        let (mut s, _rx) = session(&[C, E], 1, WIDE);
        assert_eq!(
            s.run(&mut RecordingExecutor::default()).await,
            SessionEnd::Error("the agent said ERROR".into(), ErrorKind::AGENT)
        );
    }
}
