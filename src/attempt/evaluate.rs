//! Choosing and running a task's evaluation: its checks, the LLM judge, or none, as
//! `--eval` says (auto: checks if the task has any, else the judge if an LLM is
//! configured, else none). The judge's tokens and cost count toward the task.

use super::AttemptSettings;
use crate::agent::{EvaluationAgent, JudgeFailure};
use crate::eval::{EvalMode, run_checks};
use crate::executor::Executor;
use crate::record::Evaluation;
use crate::session::{Context, SessionEnd};
use crate::task::Task;

/// Which evaluator judges a task.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Judge {
    /// The task's `evaluate` checks.
    Checks,
    /// The LLM judge.
    Llm,
    /// Nobody: finishing is passing.
    Nobody,
}

/// The evaluator for a task under `mode`.
pub(super) fn choose(mode: EvalMode, has_checks: bool, has_llm: bool) -> Judge {
    match mode {
        EvalMode::Auto if has_checks => Judge::Checks,
        EvalMode::Auto if has_llm => Judge::Llm,
        EvalMode::Checks if has_checks => Judge::Checks,
        EvalMode::Llm if has_llm => Judge::Llm,
        EvalMode::Auto | EvalMode::Checks | EvalMode::Llm | EvalMode::None => Judge::Nobody,
    }
}

/// Evaluates a session that got far enough to judge; `Ok(None)` when nobody judges.
pub(super) async fn evaluate(
    task: &Task,
    settings: &AttemptSettings,
    end: &SessionEnd,
    executor: &mut dyn Executor,
    ctx: &mut Context,
) -> Result<Option<Evaluation>, JudgeFailure> {
    let judged = matches!(
        end,
        SessionEnd::Finished
            | SessionEnd::Failed(_)
            | SessionEnd::StepLimit(_)
            | SessionEnd::RoundLimit(_)
    );
    if !judged {
        return Ok(None);
    }
    match choose(
        settings.eval,
        !task.checks.is_empty(),
        settings.llm.is_some(),
    ) {
        Judge::Checks => Ok(Some(
            run_checks(&task.checks, &ctx.workspace, executor).await,
        )),
        Judge::Nobody => Ok(None),
        Judge::Llm => {
            // A session that did not finish has failed already; a verdict would not
            // change that and would cost tokens.
            let Some(llm) = settings
                .llm
                .as_ref()
                .filter(|_| *end == SessionEnd::Finished)
            else {
                return Ok(None);
            };
            let judge = EvaluationAgent::new(llm.clone(), settings.agent.reply_retries);
            ctx.events.info("asking the LLM judge");
            let result = judge
                .judge(&ctx.request, &ctx.trajectory, &ctx.workspace, &ctx.events)
                .await;
            let (usage, cost, stats) = match &result {
                Ok(j) => (j.usage, j.cost, j.llm),
                Err(f) => (f.usage, f.cost, f.llm),
            };
            ctx.usage.add(usage);
            ctx.cost.add(cost);
            ctx.llm.add(stats);
            result.map(|j| Some(j.evaluation))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_prefers_checks_then_the_judge() {
        assert_eq!(choose(EvalMode::Auto, true, true), Judge::Checks);
        assert_eq!(choose(EvalMode::Auto, false, true), Judge::Llm);
        assert_eq!(choose(EvalMode::Auto, false, false), Judge::Nobody);
        assert_eq!(choose(EvalMode::Llm, true, true), Judge::Llm);
        assert_eq!(choose(EvalMode::Checks, false, true), Judge::Nobody);
        assert_eq!(choose(EvalMode::None, true, true), Judge::Nobody);
    }
}
