//! Choosing and running a task's evaluation: its checks, the LLM judge, or none, as
//! `--eval` says (auto: checks if the task has any, else the judge if an LLM is
//! configured, else none; `both`: as auto, and the judge's verdict beside the checks'). The
//! judge's tokens and cost count toward the task. An OSWorld task is scored by OSWorld's
//! own evaluator, whatever `--eval` says but `none` (with `both`, the judge beside it).

use super::settings::AttemptSettings;
use crate::agent::{EvaluationAgent, JudgeFailure, JudgeScreen};
use crate::desktop::screenshot::Image;
use crate::eval::{EvalMode, run_checks};
use crate::executor::Executor;
use crate::record::{Complete, Evaluation, Evaluator, JudgeOpinion, SubScore};
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
        EvalMode::Auto | EvalMode::Both | EvalMode::Checks if has_checks => Judge::Checks,
        EvalMode::Auto | EvalMode::Both | EvalMode::Checks if recorded => Judge::Recording,
        EvalMode::Auto | EvalMode::Both | EvalMode::Llm if has_llm => Judge::Llm,
        EvalMode::Auto | EvalMode::Both | EvalMode::Checks | EvalMode::Llm | EvalMode::None => {
            Judge::Nobody
        }
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
        judge: None,
        score: None,
    }
}

/// Why a session that got far enough has no verdict.
pub(super) enum Unjudged {
    /// The LLM judge could not give one.
    Judge(JudgeFailure),
    /// The task's evaluator (OSWorld's) failed, as the failure says whose fault.
    Evaluator(crate::tool::Failure),
}

/// Evaluates a session that got far enough to judge; `Ok(None)` when nobody judges.
pub(super) async fn evaluate(
    task: &Task,
    settings: &AttemptSettings,
    end: &SessionEnd,
    executor: &mut dyn Executor,
    ctx: &mut Context,
) -> Result<Option<Evaluation>, Unjudged> {
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
    if task.osworld.is_some() && settings.eval != EvalMode::None {
        let last = last_action(end, &ctx.trajectory);
        let scored = match executor.osworld_evaluate(last).await {
            Some(Ok(scored)) => scored,
            Some(Err(failure)) => return Err(Unjudged::Evaluator(failure)),
            None => {
                return Err(Unjudged::Evaluator(crate::tool::Failure::environment(
                    "OSWorld's evaluator is not running on this task's desktop",
                )));
            }
        };
        let mut evaluation = super::osworld_score::verdict(task, &scored, last);
        if settings.eval == EvalMode::Both {
            evaluation.judge = second_opinion(task, settings, end, ctx).await;
        }
        return Ok(Some(evaluation));
    }
    match choose(
        settings.eval,
        !task.checks.is_empty(),
        settings.llm.is_some(),
        task.recorded.is_some(),
    ) {
        Judge::Checks => {
            // A remote executor's files come home for the checks; when they cannot, the
            // checks are not made (the executor's fault ends the attempt in `error`).
            let wanted: Vec<crate::executor::Fetch> = task
                .checks
                .iter()
                .filter_map(crate::executor::Fetch::of)
                .collect();
            if let Err(why) = executor.fetch(&wanted).await {
                ctx.events.warn(why.message);
                return Ok(None);
            }
            let mut evaluation = run_checks(&task.checks, &ctx.workspace, executor).await;
            // A session that failed stopped before its end: its own failure is why the
            // task failed, and the checks judged what it left, which the reason says
            // rather than giving a second, unrelated cause.
            if matches!(end, SessionEnd::Failed(_)) && evaluation.complete != Complete::Yes {
                evaluation.reason = format!(
                    "the session failed first, so the checks judged an unfinished workspace: {}",
                    evaluation.reason
                );
            }
            if settings.eval == EvalMode::Both {
                evaluation.judge = second_opinion(task, settings, end, ctx).await;
            }
            Ok(Some(evaluation))
        }

        Judge::Recording => Ok(task.recorded.as_ref().map(recording_verdict)),
        Judge::Nobody => Ok(None),
        Judge::Llm => {
            // A session that did not finish has failed already; a verdict would not
            // change that and would cost tokens.
            if *end != SessionEnd::Finished {
                return Ok(None);
            }
            ask_judge(task, settings, ctx)
                .await
                .map_err(Unjudged::Judge)
        }
    }
}

/// How the agent ended, as OSWorld's action history would have it: `FAIL` when its last
/// step said so (not a replay that diverged, nor a step's error), `DONE` when it
/// finished, nothing when a limit stopped it.
fn last_action(
    end: &SessionEnd,
    steps: &[crate::record::StepRecord],
) -> crate::osworld::LastAction {
    use crate::osworld::LastAction;
    match end {
        SessionEnd::Finished => LastAction::Done,
        SessionEnd::Failed(_) => match steps.last() {
            Some(step)
                if step.status == crate::record::AgentStatus::Fail && step.error.is_none() =>
            {
                LastAction::Fail
            }
            _ => LastAction::None,
        },
        _ => LastAction::None,
    }
}

/// With `--eval both`, the judge's verdict beside the checks' on a finished session
/// (their agreement is what `--eval both` measures): it decides nothing, and when it
/// cannot give one the task is not the worse for it.
async fn second_opinion(
    task: &Task,
    settings: &AttemptSettings,
    end: &SessionEnd,
    ctx: &mut Context,
) -> Option<JudgeOpinion> {
    if *end != SessionEnd::Finished {
        return None;
    }
    match ask_judge(task, settings, ctx).await {
        Ok(Some(verdict)) => Some(JudgeOpinion {
            complete: verdict.complete,
            reason: verdict.reason,
        }),
        Ok(None) => None,
        Err(failure) => {
            ctx.events.warn(format!(
                "the LLM judge gave no verdict beside the checks': {}",
                failure.reason
            ));
            None
        }
    }
}

/// Asks the LLM judge; its tokens and cost count toward the task. `Ok(None)` when no
/// LLM is configured.
async fn ask_judge(
    task: &Task,
    settings: &AttemptSettings,
    ctx: &mut Context,
) -> Result<Option<Evaluation>, JudgeFailure> {
    let Some(llm) = settings.llm.as_ref() else {
        return Ok(None);
    };
    let judge = EvaluationAgent::new(llm.clone(), settings.agent.reply_retries);
    let screens = if task.is_desktop() && settings.agent.vision {
        judge_screens(task, settings, &ctx.trajectory).await
    } else {
        Vec::new()
    };
    let desktop = task.is_desktop().then_some(screens.as_slice());
    ctx.events.info(format!(
        "asking the LLM judge{}",
        match screens.len() {
            0 => String::new(),
            n => format!(" ({n} screenshots)"),
        }
    ));
    let result = judge
        .judge(
            &ctx.request,
            &ctx.trajectory,
            &ctx.workspace,
            desktop,
            &ctx.events,
        )
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

/// The screenshots a desktop session's judge sees: up to `judge_screenshots` of the
/// steps' screens (spread over the session, the last ones first to be kept), then the
/// final screen; each scaled down to the agents' bound.
async fn judge_screens(
    task: &Task,
    settings: &AttemptSettings,
    steps: &[crate::record::StepRecord],
) -> Vec<JudgeScreen> {
    let dir = settings.layout.task(&task.id);
    let shots: Vec<(u32, String)> = steps
        .iter()
        .filter_map(|s| Some((s.session_step, s.clean_screenshot_path.clone()?)))
        .collect();
    let wanted = settings.agent.judge_screenshots as usize;
    let picked: Vec<&(u32, String)> = spread(shots.len(), wanted)
        .into_iter()
        .map(|i| &shots[i])
        .collect();
    let mut files: Vec<(String, std::path::PathBuf)> = picked
        .into_iter()
        .map(|(n, name)| (format!("Screenshot of step {n}"), dir.file(name)))
        .collect();
    files.push(("Final Screenshot".to_string(), dir.screenshot(None, false)));
    let max_side = settings.agent.image_max_side;
    tokio::task::spawn_blocking(move || {
        files
            .into_iter()
            .filter_map(|(label, path)| {
                let file = crate::regular_file::read_bounded(&path, MAX_SCREENSHOT, None).ok()?;
                let image = Image::from_png(&file.bytes, MAX_PIXELS).ok()?;
                let png = image.bounded(max_side).png().ok()?;
                Some(JudgeScreen { label, png })
            })
            .collect()
    })
    .await
    .unwrap_or_default()
}

/// `wanted` indices of `0..len`, evenly spread, the last one always among them.
fn spread(len: usize, wanted: usize) -> Vec<usize> {
    match (len, wanted) {
        (_, 0) | (0, _) => Vec::new(),
        (len, wanted) if len <= wanted => (0..len).collect(),
        (len, 1) => vec![len - 1],
        (len, wanted) => (0..wanted).map(|i| i * (len - 1) / (wanted - 1)).collect(),
    }
}

/// The largest screenshot file read for the judge.
const MAX_SCREENSHOT: u64 = 64 << 20;
/// The most pixels of a screenshot decoded for the judge.
const MAX_PIXELS: u64 = 64 << 20;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_judges_screenshots_are_spread_over_the_session() {
        assert_eq!(spread(3, 8), [0, 1, 2]);
        assert_eq!(spread(10, 4), [0, 3, 6, 9]);
        assert_eq!(spread(10, 1), [9]);
        assert!(spread(10, 0).is_empty() && spread(0, 3).is_empty());
    }

    #[test]
    fn auto_prefers_checks_then_the_judge() {
        assert_eq!(choose(EvalMode::Auto, true, true, true), Judge::Checks);
        assert_eq!(choose(EvalMode::Auto, false, true, false), Judge::Llm);
        assert_eq!(choose(EvalMode::Auto, false, false, false), Judge::Nobody);
        assert_eq!(choose(EvalMode::Llm, true, true, true), Judge::Llm);
        assert_eq!(choose(EvalMode::Checks, false, true, false), Judge::Nobody);
        assert_eq!(choose(EvalMode::None, true, true, true), Judge::Nobody);
        assert_eq!(choose(EvalMode::Auto, false, true, true), Judge::Recording);
        assert_eq!(choose(EvalMode::Both, true, true, false), Judge::Checks);
        assert_eq!(choose(EvalMode::Both, false, true, false), Judge::Llm);
        assert_eq!(
            choose(EvalMode::Checks, false, false, true),
            Judge::Recording
        );
    }
}
