//! Setup, session and evaluation: what the attempt's wall-clock limit covers, and where
//! it got to when it ended (the trajectory survives a timeout or a kill: the session
//! lives outside the future that is abandoned).

use super::evaluate;
use super::factory;
use super::outcome::Ended;
use super::settings::AttemptSettings;
use crate::event::TaskEvents;
use crate::executor::Executor;
use crate::session::{Context, Session};
use crate::task::Task;
use crate::tool::{Blame, Failure, ToolCall};

/// Where an attempt got to; read after the attempt ends, however it ended.
#[derive(Default)]
pub(super) struct Progress {
    pub(super) stage: Stage,
    pub(super) session: Option<Session>,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) enum Stage {
    #[default]
    Setup,
    Session,
    Evaluation,
}

/// Setup, session and evaluation: everything the wall-clock limit covers.
pub(super) async fn body(
    task: &Task,
    settings: &AttemptSettings,
    executor: &mut dyn Executor,
    progress: &mut Progress,
    events: &TaskEvents,
) -> Ended {
    progress.stage = Stage::Setup;
    if let Err(ended) = run_setup(task, executor, events).await {
        return ended;
    }
    match executor.prepare().await {
        Ok(Some(note)) => events.info(note),
        Ok(None) => {}
        Err(failure) => return Ended::Broken(failure),
    }
    progress.stage = Stage::Session;
    let ctx = Context::new(
        task.request.clone(),
        settings.layout.task(&task.id).workspace(),
        events.clone(),
    );
    let session = match factory::build(task, settings, ctx, executor.tools()) {
        Ok(s) => progress.session.insert(s),
        Err(failure) => return Ended::Broken(failure),
    };
    events.info(format!(
        "{} started: {}",
        session.session_type.as_str(),
        crate::text::shorten(&task.request, 200)
    ));
    let end = session.run(executor).await;
    events.info(format!("session {}", end.describe()));
    if let Some(note) = executor.end_session().await {
        events.info(note);
    }
    progress.stage = Stage::Evaluation;
    let faulted_before = executor.fault().is_some();
    let evaluation =
        match evaluate::evaluate(task, settings, &end, executor, &mut session.ctx).await {
            Ok(evaluation) => evaluation,
            Err(evaluate::Unjudged::Evaluator(failure)) => {
                events.log(
                    crate::event::Level::Error,
                    format!("the evaluation failed: {}", failure.message),
                );
                return Ended::Unscored { end, failure };
            }
            Err(evaluate::Unjudged::Judge(failure)) => {
                events.log(
                    crate::event::Level::Error,
                    format!("the LLM judge failed: {}", failure.reason),
                );
                return Ended::JudgeFailed {
                    end,
                    reason: failure.reason,
                    kind: failure.kind,
                };
            }
        };
    if !faulted_before && let Some(fault) = executor.fault() {
        // The checks could not see what the task did (a device gone while they ran).
        return Ended::Broken(fault.context(|f| format!("evaluation could not finish: {f}")));
    }
    if let Some(e) = &evaluation {
        events.info(format!(
            "evaluation ({:?}): complete={} ({})",
            e.evaluator, e.complete, e.reason
        ));
    }
    Ended::Session { end, evaluation }
}

/// Runs the task's setup actions: one whose result differs from its expectation fails the
/// task; one the executor could not carry out (its means failed: a jail, an MCP server)
/// leaves it unprepared, an infrastructure error that is retried.
async fn run_setup(
    task: &Task,
    executor: &mut dyn Executor,
    events: &TaskEvents,
) -> Result<(), Ended> {
    for (i, action) in task.setup.iter().enumerate() {
        let command = ToolCall::action(&action.action, action.parameters.clone());
        events.info(format!(
            "setup {}/{}: {}",
            i + 1,
            task.setup.len(),
            command.action_string()
        ));
        let result = executor.execute(&command).await;
        if let Some(fault) = executor.fault() {
            return Err(Ended::Broken(fault.context(|f| {
                format!(
                    "setup step {} `{}` could not run: {f}",
                    i + 1,
                    crate::text::shorten(&command.action_string(), 120)
                )
            })));
        }
        let diffs = action.differences(&result);
        if !diffs.is_empty() {
            return Err(Ended::Broken(Failure::new(
                Blame::TaskFile,
                format!(
                    "setup step {} `{}` failed: {}",
                    i + 1,
                    crate::text::shorten(&command.action_string(), 120),
                    diffs.join("; ")
                ),
            )));
        }
    }
    Ok(())
}

pub(super) fn stage_name(stage: Stage) -> &'static str {
    match stage {
        Stage::Setup => "setup",
        Stage::Session => "the session",
        Stage::Evaluation => "evaluation",
    }
}
