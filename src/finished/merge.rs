//! `ufo-batch merge OUT RUN_DIR...`: one run dir from the run dirs of shards (or of any
//! runs of one batch). Task folders are copied; totals are rebuilt from the records.
//! A task that no input has (a shard that never ran, or died early) is reported and
//! counted as an `error`, so the totals keep the whole batch as their denominator; a
//! task that two inputs have is reported and the first one kept.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::FinishedError;
use super::copy::copy_dir;
use super::missing::{Ended, answered, mark_interrupted, missing};
use crate::record::{TaskRecord, TaskRow};
use crate::render::{Overview, Totals, task_pages, write_summaries};
use crate::rundir::{
    FileError, RunLayout, TaskFiles, load_batch, read_run_json, read_selection, write_json,
};
use crate::shard::Shard;
use crate::task::TaskId;
use crate::units::Timestamp;

/// What a merge found and did.
#[derive(Debug, Default)]
pub(crate) struct MergeReport {
    /// Tasks in the merged run dir (missing ones included).
    pub(crate) tasks: usize,
    /// Tasks by status.
    pub(crate) totals: Option<Totals>,
    /// Tasks no input had.
    pub(crate) missing: Vec<TaskId>,
    /// Tasks more than one input had, with the two folders.
    pub(crate) duplicates: Vec<(TaskId, PathBuf, PathBuf)>,
    /// Everything else that is wrong with the inputs, in words.
    pub(crate) problems: Vec<String>,
    /// What was left out of the copies without harm to any result (a FIFO a task left
    /// in its workspace), in words.
    pub(crate) notes: Vec<String>,
}

impl MergeReport {
    /// True when the inputs fit together: no missing or duplicate task, no problem.
    pub(crate) fn consistent(&self) -> bool {
        self.missing.is_empty() && self.duplicates.is_empty() && self.problems.is_empty()
    }
}

/// Merges `inputs` into the new run dir `out`. Errors only when nothing could be done
/// (a bad input, an unwritable output); inconsistencies are in the report.
pub(crate) fn merge(out: &Path, inputs: &[PathBuf]) -> Result<MergeReport, FinishedError> {
    let read_error = |source| FinishedError::Read {
        path: out.to_path_buf(),
        source,
    };
    if out.exists() && std::fs::read_dir(out).map_err(read_error)?.next().is_some() {
        return Err(FinishedError::NotEmpty(out.to_path_buf()));
    }
    // No runner may be writing an input meanwhile (its running tasks would be merged as
    // unfinished, its queued ones as missing).
    let _idle = inputs
        .iter()
        .map(|input| super::error::idle(input))
        .collect::<Result<Vec<_>, _>>()?;
    let mut report = MergeReport::default();
    let batch = Inputs::read(inputs)?;
    if batch.selections.windows(2).any(|w| w[0] != w[1]) {
        report.problems.push(format!(
            "the inputs were made from different batches ({:?} tasks)",
            batch.selections
        ));
    }
    report.problems.extend(shard_problems(&batch.shards));

    let layout = RunLayout::new(out);
    std::fs::create_dir_all(out).map_err(|e| FileError::write(out, e))?;
    let mut merged = copy_tasks(&layout, inputs, &mut report)?;
    let found = answered(merged.values().map(|(r, _)| r));
    let absent: Vec<(TaskId, Option<u32>)> = batch
        .expected
        .iter()
        .filter(|(id, _)| !found.contains(*id))
        .map(|(id, repeat)| (id.clone(), *repeat))
        .collect();
    for (id, repeat) in &absent {
        let record = match batch.stopped.get(id) {
            // Cancelled before it began: the run said so, no shard is missing.
            Some(ended) => ended.absent(id, *repeat, String::new),
            None => {
                report.missing.push(id.clone());
                missing_record(id, *repeat, &batch.shards)
            }
        };
        write_missing(&layout, &record)?;
        merged.insert(id.clone(), (record, PathBuf::new()));
    }
    let totals = write_run(&layout, out, &batch, &merged, &report)?;
    report.tasks = merged.len();
    report.totals = Some(totals);
    Ok(report)
}

/// What the inputs' `run.json` and selections say about the batch they are of.
struct Inputs {
    /// Each input, with the shard it is.
    shards: Vec<(PathBuf, Option<Shard>)>,
    /// Every task of the batch, with which repetition it is (`--repeat`).
    expected: BTreeMap<TaskId, Option<u32>>,
    /// How many tasks each input's selection has.
    selections: Vec<usize>,
    /// Each input's `run.json`.
    runs: Vec<Value>,
    /// Tasks of inputs that stopped before starting them (which have no folder), with
    /// how their run ended.
    stopped: BTreeMap<TaskId, Ended>,
}

impl Inputs {
    /// Reads every input's `run.json` and selection; an input without `run.json` is no
    /// run dir.
    fn read(inputs: &[PathBuf]) -> Result<Self, FinishedError> {
        let mut batch = Inputs {
            shards: Vec::new(),
            expected: BTreeMap::new(),
            selections: Vec::new(),
            runs: Vec::new(),
            stopped: BTreeMap::new(),
        };
        for input in inputs {
            let Some(run) = read_run_json(input) else {
                return Err(FinishedError::NotRunDir(input.clone()));
            };
            let ended = Ended::of(&run);
            batch.runs.push(run);
            // (An unreadable one is told with the input's other unreadable files.)
            let selection = read_selection(input).ok().flatten();
            batch
                .shards
                .push((input.clone(), selection.as_ref().and_then(|s| s.shard)));
            let Some(selection) = selection else {
                continue;
            };
            batch.selections.push(selection.ids.len());
            for id in &selection.ids {
                batch.expected.insert(id.clone(), selection.repetition(id));
            }
            if matches!(ended, Ended::Stopped(_)) {
                for id in selection.members() {
                    batch.stopped.insert(id.clone(), ended.clone());
                }
            }
        }
        Ok(batch)
    }
}

/// Copies every input's task folders into `layout`, the first of a task two inputs have;
/// returns each task's record with the folder it came from.
fn copy_tasks(
    layout: &RunLayout,
    inputs: &[PathBuf],
    report: &mut MergeReport,
) -> Result<BTreeMap<TaskId, (TaskRecord, PathBuf)>, FinishedError> {
    let mut merged: BTreeMap<TaskId, (TaskRecord, PathBuf)> = BTreeMap::new();
    for input in inputs {
        let (stored, unreadable, _) = load_batch(input);
        report
            .problems
            .extend(unreadable.into_iter().map(|p| format!("unreadable: {p}")));
        for mut task in stored {
            let interrupted = mark_interrupted(&mut task.record);
            if let Some((_, first)) = merged.get(&task.record.id) {
                report.duplicates.push((
                    task.record.id.clone(),
                    first.clone(),
                    task.dir.path().to_path_buf(),
                ));
                continue;
            }
            let from = task.dir.path();
            let copy_error = |source| FinishedError::Copy {
                path: from.to_path_buf(),
                source,
            };
            // A link copied with an earlier task's folder must not lead this one out.
            layout
                .unlink_task_path(&task.record.id)
                .map_err(copy_error)?;
            copy_dir(from, layout.task(&task.record.id).path(), &mut report.notes)
                .map_err(copy_error)?;
            if interrupted {
                // The copy says what the summaries say.
                TaskFiles(layout.task(&task.record.id)).status_durably(&task.record)?;
            }
            merged.insert(task.record.id.clone(), (task.record, from.to_path_buf()));
        }
    }
    Ok(merged)
}

/// Writes the merged run's summaries, `run.json` and selection; returns its totals.
fn write_run(
    layout: &RunLayout,
    out: &Path,
    batch: &Inputs,
    merged: &BTreeMap<TaskId, (TaskRecord, PathBuf)>,
    report: &MergeReport,
) -> Result<Totals, FinishedError> {
    let rows: Vec<TaskRow> = merged.values().map(|(r, _)| TaskRow::of(r)).collect();
    let name = layout.name();
    let overview = Overview::of(&rows);
    let totals = overview.totals.clone();
    let (started, settings) = shared_settings(&batch.runs, &name, out);
    let run = json!({
        "tool": "ufo-batch",
        "version": env!("CARGO_PKG_VERSION"),
        "name": name,
        "state": "merged",
        "invocation": 1,
        "started": started,
        "finished": Timestamp::now(),
        "jobs": settings.get("jobs"),
        "sandbox": settings.get("sandbox"),
        "config": settings.get("config"),
        "merged_from": batch.shards.iter().map(|(p, s)| json!({"run_dir": p.display().to_string(), "shard": s.map(|s| s.to_string())})).collect::<Vec<Value>>(),
        "missing": report.missing,
        "duplicates": report.duplicates.iter().map(|(id, _, _)| id).collect::<Vec<_>>(),
        "totals": totals,
    });
    write_summaries(layout, &name, Some(&run), &rows, &overview)?;
    let path = layout.run_json();
    write_json(&path, &run).map_err(|e| FileError::write(&path, e))?;
    let selection: Vec<&TaskId> = merged.keys().collect();
    let path = layout.selection();
    write_json(&path, &json!({"shard": null, "tasks": selection}))
        .map_err(|e| FileError::write(&path, e))?;
    Ok(totals)
}

/// When the merged runs started (the earliest), and the settings they ran with: the
/// first input's `jobs`, `sandbox` and `config` (the shards of a batch share them), with
/// the config's run folder and name made the merged run's and no shard.
fn shared_settings(runs: &[Value], name: &str, out: &Path) -> (Option<String>, Value) {
    let started = runs
        .iter()
        .filter_map(|r| r.get("started")?.as_str())
        .min()
        .map(str::to_string);
    let mut settings = runs.first().cloned().unwrap_or_default();
    if let Some(config) = settings.get_mut("config").and_then(Value::as_object_mut) {
        config.insert("run_name".into(), name.into());
        config.insert("run_dir".into(), out.display().to_string().into());
        config.insert("shard".into(), Value::Null);
    }
    (started, settings)
}

/// Shards that do not fit together: different counts, the same shard twice, shards
/// missing.
fn shard_problems(shards: &[(PathBuf, Option<Shard>)]) -> Vec<String> {
    let found: Vec<Shard> = shards.iter().filter_map(|(_, s)| *s).collect();
    if found.is_empty() {
        return Vec::new();
    }
    let mut problems = Vec::new();
    if found.len() != shards.len() {
        problems.push("some inputs are shards and some are not".to_string());
    }
    let counts: BTreeSet<u32> = found.iter().map(|s| s.count).collect();
    if counts.len() > 1 {
        problems.push(format!(
            "the shards come from different splits ({counts:?} shards)"
        ));
        return problems;
    }
    let count = found[0].count;
    let mut seen = BTreeSet::new();
    for s in &found {
        if !seen.insert(s.index) {
            problems.push(format!("shard {s} is given twice"));
        }
    }
    let absent: Vec<String> = (0..count)
        .filter(|i| !seen.contains(i))
        .map(|i| Shard { index: i, count }.to_string())
        .collect();
    if !absent.is_empty() {
        problems.push(format!(
            "shard {} of the split is not among the inputs",
            absent.join(", ")
        ));
    }
    problems
}

/// The `error` record of a task no input has.
fn missing_record(
    id: &TaskId,
    repeat: Option<u32>,
    shards: &[(PathBuf, Option<Shard>)],
) -> TaskRecord {
    // Shards are drawn on tasks, before their repetitions are made.
    let task = match repeat {
        Some(_) => TaskId::parse(id.group()).unwrap_or_else(|_| id.clone()),
        None => id.clone(),
    };
    let owner = shards
        .iter()
        .find_map(|(_, s)| *s)
        .and_then(|s| Shard::of(&task, s.count));
    let whose = owner
        .map(|s| format!(" (it belongs to shard {s})"))
        .unwrap_or_default();
    missing(
        id,
        repeat,
        format!("missing: no merged run dir has a result for this task{whose}"),
    )
}

fn write_missing(layout: &RunLayout, record: &TaskRecord) -> Result<(), FileError> {
    let dir = layout.task(&record.id);
    layout
        .unlink_task_path(&record.id)
        .map_err(|e| FileError::write(dir.path(), e))?;
    let files = TaskFiles(dir);
    files.status_durably(record)?;
    files.pages(&task_pages(record, &[], None, &[]))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shard(i: u32, n: u32) -> Option<Shard> {
        Some(Shard { index: i, count: n })
    }

    #[test]
    fn shard_sets_that_do_not_fit() {
        let p = |s| (PathBuf::from("x"), s);
        assert!(shard_problems(&[p(shard(0, 2)), p(shard(1, 2))]).is_empty());
        assert_eq!(
            shard_problems(&[p(shard(0, 3)), p(shard(2, 3))]),
            ["shard 2/3 of the split is not among the inputs"]
        );
        assert_eq!(
            shard_problems(&[p(shard(0, 2)), p(shard(0, 2)), p(shard(1, 2))]),
            ["shard 1/2 is given twice"]
        );
        assert_eq!(shard_problems(&[p(shard(0, 2)), p(shard(0, 3))]).len(), 1);
        assert!(shard_problems(&[p(None), p(None)]).is_empty());
    }
}
