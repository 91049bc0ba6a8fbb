//! Building the session a task's shape calls for (UFO's SessionFactory): a recorded
//! plan becomes a FollowerSession replayed by the ReplayAgent; a UFO step plan a
//! FollowerSession with one LinuxAgent round per step; a UFO or seed-doc request a
//! FromFileSession with one LinuxAgent round.

use super::AttemptSettings;
use crate::agent::{LinuxAgent, ReplayAgent};
use crate::executor::shell_tools;
use crate::session::{Context, Limits, Round, Session};
use crate::task::{Task, TaskKind};

/// UFO's MAX_STEP.
const DEFAULT_MAX_STEPS: u32 = 50;

/// The session for `task`, or why there is none.
pub(super) fn build(
    task: &Task,
    settings: &AttemptSettings,
    ctx: Context,
) -> Result<Session, String> {
    let kind = task.kind.session();
    match &task.kind {
        TaskKind::RecordedPlan { actions } => {
            let needed = actions.len().max(1) as u32;
            let limits = Limits {
                max_steps: task.max_steps.or(settings.max_steps).unwrap_or(needed),
                max_rounds: settings.max_rounds.unwrap_or(1).max(1),
            };
            let rounds = vec![Round {
                request: task.request.clone(),
                subtask: None,
            }];
            let agent = Box::new(ReplayAgent::new(actions.clone()));
            Ok(Session::new(kind, rounds, agent, limits, ctx))
        }
        TaskKind::UfoStepPlan { steps } => {
            let llm = settings
                .llm
                .clone()
                .ok_or_else(|| needs_llm("UFO step plan"))?;
            // One round per step, always: UFO's default MAX_ROUND of 1 ran no step at all.
            let limits = Limits {
                max_steps: task
                    .max_steps
                    .or(settings.max_steps)
                    .unwrap_or(DEFAULT_MAX_STEPS),
                max_rounds: settings.max_rounds.unwrap_or(0).max(steps.len() as u32),
            };
            let rounds = steps
                .iter()
                .map(|s| Round {
                    request: s.clone(),
                    subtask: Some(s.clone()),
                })
                .collect();
            let agent = LinuxAgent::new(
                llm,
                shell_tools().to_vec(),
                settings.agent.clone(),
                task.object.clone(),
                Some(steps.clone()),
            );
            Ok(Session::new(kind, rounds, Box::new(agent), limits, ctx))
        }
        TaskKind::UfoRequest | TaskKind::SeedRequest => {
            let what = if matches!(task.kind, TaskKind::UfoRequest) {
                "UFO request file"
            } else {
                "request"
            };
            let llm = settings.llm.clone().ok_or_else(|| needs_llm(what))?;
            let limits = Limits {
                max_steps: task
                    .max_steps
                    .or(settings.max_steps)
                    .unwrap_or(DEFAULT_MAX_STEPS),
                max_rounds: settings.max_rounds.unwrap_or(1).max(1),
            };
            let rounds = vec![Round {
                request: task.request.clone(),
                subtask: None,
            }];
            let agent = LinuxAgent::new(
                llm,
                shell_tools().to_vec(),
                settings.agent.clone(),
                task.object.clone(),
                None,
            );
            Ok(Session::new(kind, rounds, Box::new(agent), limits, ctx))
        }
    }
}

fn needs_llm(what: &str) -> String {
    format!(
        "this {what} needs an LLM agent and none is configured: run with --model MODEL \
         (the key goes in $OPENAI_API_KEY; --llm-base-url for another server)"
    )
}
