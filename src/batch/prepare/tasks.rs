//! The batch's tasks: the task files' and the `--request`s, loaded and held by their
//! inputs; every id of the batch, and this machine's shard, repeated.

use std::sync::Arc;

use super::queued::Queued;
use crate::batch::inputs::SharedSettings;
use crate::batch::sources::load_tasks_as;
use crate::batch::{BatchError, RunSettings};
use crate::task::{Identified, LoadedTasks, REQUEST_SOURCE, Task, TaskId, TaskShape};
use crate::tool::ToolSpec;

/// The task files' tasks and the `--request`s, each held by its inputs.
pub(super) fn load(
    config: &RunSettings,
    tools: Arc<[ToolSpec]>,
    shared: &SharedSettings,
) -> Result<LoadedTasks<Queued>, BatchError> {
    let keep = |task: Task, file| Queued::of(task, Some(file), config, shared);
    let mut loaded = if config.paths.is_empty() {
        LoadedTasks::default()
    } else {
        load_tasks_as(&config.paths, Some(&config.out_root), tools, keep)?
    };
    loaded.tasks.extend(
        request_tasks(&config.requests)
            .into_iter()
            .map(|task| Queued::of(task, None, config, shared)),
    );
    Ok(loaded)
}

/// Every id of the batch (returned), and the tasks this run makes of it: this machine's
/// shard, each repeated `--repeat` times. More runs than one run takes refuse it.
pub(super) fn select(
    loaded: &mut LoadedTasks<Queued>,
    config: &RunSettings,
) -> Result<Vec<TaskId>, BatchError> {
    let runs = (loaded.tasks.len() as u64) * u64::from(config.repeat.unwrap_or(1));
    if runs > MAX_TASK_RUNS {
        return Err(BatchError::Refused(format!(
            "{} × --repeat {} is {runs} task runs, more than the {MAX_TASK_RUNS} one run takes: repeat fewer times, or shard the batch (--shard I/N)",
            crate::text::plural(loaded.tasks.len(), "task"),
            config.repeat.unwrap_or(1)
        )));
    }
    let selection = all_ids(loaded, config.repeat.unwrap_or(1));
    if let Some(shard) = config.shard {
        loaded.tasks.retain(|t| shard.contains(t.id()));
        loaded.invalid.retain(|t| shard.contains(&t.id));
    }
    if let Some(k) = config.repeat.filter(|k| *k > 1) {
        loaded.tasks = loaded
            .tasks
            .iter()
            .flat_map(|t| (1..=k).map(|n| t.repetition(n)))
            .collect();
    }
    Ok(selection)
}

/// The most task runs (tasks × `--repeat`) one run takes: what it holds per task was
/// measured at a million (139 MB).
const MAX_TASK_RUNS: u64 = 10_000_000;

/// Every id of the batch, valid and invalid, sorted: with `--repeat K`, the K
/// repetitions of each valid task (they are what the run dir holds).
fn all_ids(loaded: &LoadedTasks<Queued>, repeat: u32) -> Vec<TaskId> {
    let repeat = repeat.max(1);
    // Made to its size and sorted in place: a million ids are the largest list of a run.
    let mut ids = Vec::with_capacity(loaded.tasks.len() * repeat as usize + loaded.invalid.len());
    for task in &loaded.tasks {
        match repeat {
            1 => ids.push(task.id().clone()),
            k => ids.extend((1..=k).map(|n| task.id().repetition(n))),
        }
    }
    ids.extend(loaded.invalid.iter().map(|t| t.id.clone()));
    ids.sort_unstable();
    ids
}

/// Tasks for `--request` texts: ids `request`, `request-2`, ...
fn request_tasks(requests: &[String]) -> Vec<Task> {
    requests
        .iter()
        .enumerate()
        .map(|(i, text)| {
            let id = if i == 0 {
                "request".to_string()
            } else {
                format!("request-{}", i + 1)
            };
            let id = TaskId::parse(&id).expect("request ids are valid");
            Task::new(id, REQUEST_SOURCE, TaskShape::SeedRequest, text.clone())
        })
        .collect()
}
