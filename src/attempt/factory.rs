//! Building the session a task's shape calls for (UFO's SessionFactory): a recorded
//! plan becomes a FollowerSession replayed by the ReplayAgent.

use super::AttemptSettings;
use crate::agent::ReplayAgent;
use crate::session::{Context, Limits, Round, Session};
use crate::task::{Shape, Task, TaskKind};

/// The session for `task`, or why there is none.
pub(super) fn build(
    task: &Task,
    settings: &AttemptSettings,
    ctx: Context,
) -> Result<Session, String> {
    match &task.kind {
        TaskKind::RecordedPlan { actions } => {
            let needed = actions.len().max(1) as u32;
            let limits = Limits {
                max_steps: task.max_steps.or(settings.max_steps).unwrap_or(needed),
                // Follower sessions always get the rounds their steps need.
                max_rounds: settings.max_rounds.unwrap_or(1).max(1),
            };
            let rounds = vec![Round {
                request: task.request.clone(),
                subtask: None,
            }];
            let agent = Box::new(ReplayAgent::new(actions.clone()));
            Ok(Session::new(
                task.kind.session(),
                rounds,
                agent,
                limits,
                ctx,
            ))
        }
        TaskKind::UfoRequest | TaskKind::UfoStepPlan { .. } | TaskKind::SeedRequest => {
            Err(format!(
                "this {} needs an LLM agent to run, and this version of ufo-batch only replays recorded plans \
             (files with \"request\" and \"actions\")",
                shape_words(task.kind.shape())
            ))
        }
    }
}

fn shape_words(shape: Shape) -> &'static str {
    match shape {
        Shape::UfoRequest => "UFO request file",
        Shape::UfoStepPlan => "UFO step plan",
        Shape::SeedRequest => "seed-doc request",
        Shape::RecordedPlan => "recorded plan",
        Shape::CommandLine => "command-line request",
        Shape::Invalid => "task file",
    }
}
