//! Choosing and running a task's evaluation: its checks, the LLM judge, or none, as
//! `--eval` says (auto: checks if the task has any, else the judge if an LLM is
//! configured, else none). The judge's tokens and cost count toward the task.

use super::AttemptSettings;
use crate::agent::{EvaluationAgent, JudgeFailure};
use crate::eval::{EvalMode, run_checks};
use crate::executor::Executor;
use crate::record::{Complete, Evaluation, Evaluator, SubScore};
use crate::session::{Context, SessionEnd};
use crate::task::{RecordedVerdict, Task};

/// Which evaluator judges a task.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Judge {
    /// The task's `evaluate` checks.
    Checks,
    /// The LLM judge.
    Llm,
    /// A replay without checks: the verdict its plan was recorded with.
    Recording,
    /// Nobody: finishing is passing.
    Nobody,
}

/// The evaluator for a task under `mode`. A recorded plan without checks of its own
/// that carries the verdict it was recorded with is judged by that verdict (auto and
/// checks modes), so that replaying a failure cannot pass by merely finishing.
pub(super) fn choose(mode: EvalMode, has_checks: bool, has_llm: bool, recorded: bool) -> Judge {
    match mode {
        EvalMode::Auto | EvalMode::Checks if has_checks => Judge::Checks,
        EvalMode::Auto | EvalMode::Checks if recorded => Judge::Recording,
        EvalMode::Auto if has_llm => Judge::Llm,
        EvalMode::Llm if has_llm => Judge::Llm,
        EvalMode::Auto | EvalMode::Checks | EvalMode::Llm | EvalMode::None => Judge::Nobody,
    }
}

/// The verdict of a replay that rests on its recording: the steps replayed as recorded
/// (the session finished), so the replay is worth what the recording was.
fn recording_verdict(recorded: &RecordedVerdict) -> Evaluation {
    let by = recorded
        .evaluator
        .as_deref()
        .map(|e| format!(" (judged by {e})"))
        .unwrap_or_default();
    let why = recorded
        .reason
        .as_deref()
        .map(|r| format!(": {r}"))
        .unwrap_or_default();
    let (complete, reason) = if recorded.status == "passed" {
        (
            Complete::Yes,
            format!("every step replayed as recorded, and the recording passed{by}{why}"),
        )
    } else {
        (
            Complete::No,
            format!(
                "the steps replayed as recorded, but the recording did not pass ({}{by}{why}); a replay without checks of its own rests on the recorded verdict",
                recorded.status
            ),
        )
    };
    Evaluation {
        reason,
        sub_scores: vec![SubScore {
            name: "recorded verdict".to_string(),
            evaluation: complete,
            detail: None,
        }],
        complete,
        evaluator: Evaluator::Recording,
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
        task.recorded.is_some(),
    ) {
        Judge::Checks => Ok(Some(
            run_checks(&task.checks, &ctx.workspace, executor).await,
        )),
        Judge::Recording => Ok(task.recorded.as_ref().map(recording_verdict)),
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
        assert_eq!(choose(EvalMode::Auto, true, true, true), Judge::Checks);
        assert_eq!(choose(EvalMode::Auto, false, true, false), Judge::Llm);
        assert_eq!(choose(EvalMode::Auto, false, false, false), Judge::Nobody);
        assert_eq!(choose(EvalMode::Llm, true, true, true), Judge::Llm);
        assert_eq!(choose(EvalMode::Checks, false, true, false), Judge::Nobody);
        assert_eq!(choose(EvalMode::None, true, true, true), Judge::Nobody);
        assert_eq!(choose(EvalMode::Auto, false, true, true), Judge::Recording);
        assert_eq!(
            choose(EvalMode::Checks, false, false, true),
            Judge::Recording
        );
    }
}
