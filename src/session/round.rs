//! A Round: one request worked on by an agent, step by step, until the agent finishes,
//! fails or errs, or the session's step limit is reached (UFO's BaseRound.run).

use std::time::Instant;

use super::{Agent, AgentStep, Context, ErrorKind, Transition};
use crate::executor::Executor;
use crate::record::AgentStatus;
use crate::record::StepRecord;
use crate::units::{Timestamp, seconds};

/// The most characters of a model's words (its observation, thought, comment) a
/// step's record keeps: every result file copies them, and a model may say megabytes.
const MAX_SAID: usize = 8000;

/// `text`, cut to [`MAX_SAID`] characters (saying so).
fn bounded(text: String) -> String {
    if text.chars().count() <= MAX_SAID {
        return text;
    }
    let total = text.chars().count();
    let mut kept: String = text.chars().take(MAX_SAID).collect();
    kept.push_str(&format!(
        " … ({} more characters not kept)",
        total - MAX_SAID
    ));
    kept
}

/// One round's request.
#[derive(Clone, Debug)]
pub(crate) struct Round {
    /// What the agent is asked in this round.
    pub(crate) request: String,
    /// The follower step this round carries out, if any.
    pub(crate) subtask: Option<String>,
}

/// How a round ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum RoundEnd {
    /// The agent said FINISH.
    Finished,
    /// The agent said FAIL (or a replayed step diverged), with the reason.
    Failed(String),
    /// The agent said ERROR, with the reason and whose failure it is.
    Error(String, ErrorKind),
    /// The session's step limit was reached.
    StepLimit,
}

impl Round {
    /// Runs the round to its end. `max_steps` is the session-wide step limit.
    pub(crate) async fn run(
        &self,
        agent: &mut dyn Agent,
        ctx: &mut Context,
        executor: &mut dyn Executor,
        max_steps: u32,
    ) -> RoundEnd {
        ctx.round_request = self.request.clone();
        ctx.subtask = self.subtask.clone();
        ctx.round_step = 0;
        ctx.round_steps.push(0);
        agent.begin_round(ctx);
        loop {
            if ctx.session_step >= max_steps {
                return RoundEnd::StepLimit;
            }
            let started = Timestamp::now();
            let clock = Instant::now();
            let screens = executor
                .begin_step(ctx.session_step + 1, agent.scope())
                .await;
            if let Some(s) = &screens {
                ctx.events
                    .info(format!("step {}: {}", ctx.session_step + 1, s.note));
            }
            ctx.screen = screens.as_ref().map(|s| s.view.clone());
            let mut step = agent.handle(ctx, executor).await;
            ctx.screen = None;
            // Whatever the agent concluded, the means of acting broke, or an action
            // failed through no doing of the agent's (an app that crashed, a device
            // that refused the runner's own argument).
            let broke = executor
                .fault()
                .or_else(|| step.actions.iter().find_map(|a| a.result.not_the_agents()));
            if let Some(failure) = &broke {
                step.status = AgentStatus::Error;
                step.error_kind = ErrorKind::Blamed(failure.blame);
                step.error = Some(format!("the executor failed: {failure}"));
            }
            ctx.session_step += 1;
            ctx.round_step += 1;
            if let Some(n) = ctx.round_steps.last_mut() {
                *n += 1;
            }
            let status = step.status;
            let next = if broke.is_some() {
                Transition::Error
            } else {
                agent.next(&step)
            };
            let reason = step.error.clone();
            let comment = step.comment.clone().filter(|c| !c.trim().is_empty());
            let kind = step.error_kind;
            let mut record = self.record(ctx, step, started, seconds(clock.elapsed()));
            if let Some(screens) = screens {
                record.clean_screenshot_path = Some(screens.clean);
                record.annotated_screenshot_path = Some(screens.annotated);
            }
            ctx.events.step(record.clone());
            ctx.trajectory.push(record);
            // A step's error, else what the agent said, with its comment (its why).
            let why = || {
                reason.clone().unwrap_or_else(|| match &comment {
                    Some(c) => format!("the agent said {status}: {}", c.trim()),
                    None => format!("the agent said {status}"),
                })
            };
            match next {
                Transition::Continue => {}
                Transition::EndRound => return RoundEnd::Finished,
                Transition::Fail => return RoundEnd::Failed(why()),
                Transition::Error => return RoundEnd::Error(why(), kind),
            }
        }
    }

    /// The response.log record of a step, with the session's counters.
    fn record(
        &self,
        ctx: &mut Context,
        step: AgentStep,
        started: Timestamp,
        duration_s: f64,
    ) -> StepRecord {
        ctx.usage.add(step.usage);
        ctx.cost.add(step.cost);
        ctx.llm.add(step.llm);
        StepRecord {
            agent_type: step.agent_type.to_string(),
            agent_name: step.agent_name,
            session_step: ctx.session_step,
            round_step: ctx.round_step,
            round_num: ctx.round_num,
            status: step.status,
            request: self.request.clone(),
            subtask: step.subtask.or_else(|| self.subtask.clone()),
            observation: step.observation.map(bounded),
            thought: step.thought.map(bounded),
            plan: step.plan,
            comment: step.comment.map(bounded),
            action: step.actions,
            llm_cost: if step.usage.total() > 0 {
                step.cost.usd()
            } else {
                None
            },
            prompt_tokens: step.usage.prompt_tokens,
            completion_tokens: step.usage.completion_tokens,
            error: step.error,
            clean_screenshot_path: None,
            annotated_screenshot_path: None,
            started,
            duration_s,
            extra: step.extra,
        }
    }
}
