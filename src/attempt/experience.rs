//! Saving an attempt as experience (UFO's `Session.experience_saver`), once its status
//! is known: a task the run's policy saves has each subtask of its session condensed
//! into one record, by the run's model (`agent::summarize`, whose cost counts as the
//! task's) or, for a replayed plan, which has no model, from its actions. The records
//! go to the run's experience file; a failure to save is a warning that leaves the
//! task's status as it is.

use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;

use super::outcome::AttemptOutcome;
use super::settings::AttemptSettings;
use crate::agent::{Spent, summarize};
use crate::event::TaskEvents;
use crate::experience::from_actions::{Done, record_of, task_apps};
use crate::experience::record::{ExperienceRecord, Origin};
use crate::experience::trajectory::{Part, parts};
use crate::experience::{Appended, Experience};
use crate::record::{StepRecord, TaskStatus};
use crate::task::{Task, TaskShape};
use crate::tool::ToolSpec;

/// The least a save waits for another writer's lock, even for a task whose time is up
/// (a task that timed out is saved under `--save-experience always`).
const LEAST_WAIT: Duration = Duration::from_secs(2);

/// Saves the session `trajectory` of `task` when the run's policy saves a task that
/// ended as `outcome` did; what it did (keys saved, or why none) goes on `outcome`.
/// It stops when `kill` is cancelled, and waits for another writer of the experience
/// file until `until` (the end of the task's time; at least [`LEAST_WAIT`]).
pub(super) async fn save(
    task: &Task,
    settings: &AttemptSettings,
    trajectory: &[StepRecord],
    outcome: &mut AttemptOutcome,
    events: &TaskEvents,
    (kill, until): (&CancellationToken, Instant),
) {
    let Some(experience) = &settings.experience else {
        return;
    };
    if !experience.saves(outcome.status) {
        return;
    }
    let parts = parts(trajectory, &task.request);
    if parts.is_empty() {
        outcome.experience.not_saved = Some("its session took no step to learn from".into());
        return;
    }
    let mut spent = Spent::default();
    let made = tokio::select! {
        made = records(task, settings, experience, &parts, outcome.status, events, &mut spent) => made,
        () = kill.cancelled() => Err(NotSummarized::Stopped),
    };
    outcome.usage.add(spent.usage);
    outcome.cost.add(spent.cost);
    outcome.llm.add(spent.llm);
    let (origin, records) = match made {
        Ok(made) => made,
        Err(why) => {
            events.warn(format!("not saved as experience: {why}"));
            outcome.experience.not_saved = Some(why.to_string());
            return;
        }
    };
    let wait = until
        .saturating_duration_since(Instant::now())
        .max(LEAST_WAIT);
    match experience.save(&origin, records, wait).await {
        Ok(Appended::Saved(keys)) => {
            events.info(format!("saved as experience: {}", keys.join(", ")));
            outcome.experience.saved = keys;
        }
        Ok(Appended::AlreadySaved) => {
            events.info(format!(
                "not saved as experience again: the experience file already holds this task from run {}",
                origin.run
            ));
        }
        Err(e) => {
            let why = e.to_string();
            events.warn(format!("not saved as experience: {why}"));
            outcome.experience.not_saved = Some(why);
        }
    }
}

/// Why a task's records could not be made (its experience is not saved; a warning).
#[derive(Debug, thiserror::Error)]
enum NotSummarized {
    /// An agent task with no model to write its summary.
    #[error("no model is configured to summarize it")]
    NoModel,
    /// The model's summary failed (the LLM's error, or its last unusable reply's).
    #[error("the model's summary failed: {0}")]
    Failed(String),
    /// The run was killed meanwhile.
    #[error("the run stopped while its summary was being made")]
    Stopped,
}

/// The records of `parts`, with where they come from.
async fn records(
    task: &Task,
    settings: &AttemptSettings,
    experience: &Experience,
    parts: &[Part<'_>],
    status: TaskStatus,
    events: &TaskEvents,
    spent: &mut Spent,
) -> Result<(Origin, Vec<ExperienceRecord>), NotSummarized> {
    let replayed = matches!(task.shape, TaskShape::RecordedPlan { .. });
    let llm = if replayed {
        None
    } else {
        Some(settings.llm.as_ref().ok_or(NotSummarized::NoModel)?)
    };
    let origin = Origin {
        task_id: task.id.to_string(),
        run: experience.run().to_string(),
        model: llm.map_or("recorded plan", |l| l.model()).to_string(),
    };
    let mut records = Vec::with_capacity(parts.len());
    for part in parts {
        let apps = task_apps(task, part.application.as_deref());
        let record = match llm {
            None => {
                let done: Vec<Done<'_>> = part
                    .steps
                    .iter()
                    .flat_map(|s| {
                        s.action.iter().map(|a| Done {
                            function: &a.function,
                            arguments: &a.arguments,
                            thought: s.thought.as_deref(),
                        })
                    })
                    .collect();
                let comment = format!("Replayed from a recorded plan; its verdict: {status}.");
                record_of(
                    &part.subtask,
                    apps,
                    &done,
                    comment,
                    Some(origin.clone()),
                    Some(status.to_string()),
                )
            }
            Some(llm) => {
                let tools = tools_used(settings, part);
                let tries = settings.agent.reply_retries + 1;
                let fields = summarize(llm, &tools, part, tries, events, spent)
                    .await
                    .map_err(NotSummarized::Failed)?;
                ExperienceRecord {
                    example: ExperienceRecord::example_from(&fields),
                    tips: crate::text::shorten(
                        &match fields.get("Tips") {
                            Some(serde_json::Value::String(s)) => s.clone(),
                            Some(serde_json::Value::Null) | None => String::new(),
                            Some(other) => other.to_string(),
                        },
                        crate::experience::record::MAX_TIPS,
                    ),
                    request: part.subtask.clone(),
                    subtask: part.subtask.clone(),
                    app_list: apps,
                    origin: Some(origin.clone()),
                    verdict: Some(status.to_string()),
                }
            }
        };
        records.push(record);
    }
    Ok((origin, records))
}

/// The tools the part's steps called, as the agent was told of them.
fn tools_used(settings: &AttemptSettings, part: &Part<'_>) -> Vec<ToolSpec> {
    let mut known: Vec<ToolSpec> = crate::executor::all_tools().to_vec();
    if let Some(hub) = &settings.mcp {
        known.extend(hub.specs());
    }
    let mut used: Vec<ToolSpec> = Vec::new();
    for action in part.steps.iter().flat_map(|s| s.action.iter()) {
        if used.iter().any(|t| t.name == action.function) {
            continue;
        }
        if let Some(spec) = known.iter().find(|t| t.name == action.function) {
            used.push(spec.clone());
        }
    }
    used
}
