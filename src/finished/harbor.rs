//! `ufo-batch export --harbor OUT RUN_DIR`: a run dir as a Harbor job that `harbor view
//! OUT` lists and opens. One job (`OUT/RUN_NAME`), one trial per task (a repetition is a
//! trial of its own). The shapes are Harbor's pydantic models (harbor 0.25.0):
//! `harbor/models/job/result.py` (`JobResult{id, started_at, finished_at, n_total_trials,
//! stats: JobStats{n_completed_trials, n_errored_trials, n_cancelled_trials, evals:
//! {"AGENT__MODEL__adhoc": AgentDatasetStats{n_trials, n_errors, metrics, reward_stats,
//! exception_stats}}, n_input_tokens, n_output_tokens, cost_usd}}`) and
//! `harbor/models/trial/result.py` (`TrialResult{task_name, trial_name, trial_uri,
//! task_id{path}, task_checksum, config: TrialConfig{task{path}, trial_name, agent},
//! agent_info{name, version, model_info{name}}, agent_result, verifier_result{rewards},
//! exception_info{exception_type, exception_message, exception_traceback, occurred_at},
//! started_at, finished_at}`). The viewer shows the mean it finds in
//! `stats.evals[...].metrics` (`[{"mean": m}]`) and computes none; Harbor's own mean
//! (`harbor/metrics/mean.py`) counts a trial without a reward as 0, so `m` is the pass
//! rate. A verdict is a reward (1.0 passed, 0.0 failed); an error, a timeout, a
//! cancelled or unfinished task is Harbor's exception info, not a score.
//!
//! Each trial's `agent/trajectory.json` is the task's ATIF trajectory rendered afresh from
//! its stored steps, its screenshots copied beside it; `verifier/reward.json` holds the
//! reward. A task id's folders (`word/insert_table`) become one trial name
//! (`word__insert_table`), as Harbor lists trials one level deep.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::FinishedError;
use super::missing::{Ended, whole_batch};
use super::rerender::stored_trajectory;
use crate::record::{TaskRecord, TaskStatus};
use crate::render::atif;
use crate::rundir::{FileError, read_run_json, write_atomic};

/// The largest screenshot copied into a trial.
const MAX_SCREENSHOT: u64 = 64 << 20;

/// What an export wrote.
#[derive(Debug)]
pub(crate) struct Exported {
    /// The job folder.
    pub(crate) job: PathBuf,
    /// Trials written.
    pub(crate) trials: usize,
    /// Their mean reward (the pass rate).
    pub(crate) mean: f64,
    /// Trials whose stored steps could not be read (their trajectory has the request and
    /// the verdict only), with why.
    pub(crate) problems: Vec<String>,
}

/// Writes the run dir `run_dir` as a Harbor job under `out`.
pub(crate) fn export_harbor(run_dir: &Path, out: &Path) -> Result<Exported, FinishedError> {
    let _idle = super::error::idle(run_dir)?;
    let Some(run) = read_run_json(run_dir) else {
        return Err(FinishedError::NotRunDir(run_dir.to_path_buf()));
    };
    let batch = whole_batch(run_dir, &Ended::of(&run));
    if let Some(first) = batch.unreadable.first() {
        return Err(FinishedError::Unreadable {
            dir: run_dir.to_path_buf(),
            count: batch.unreadable.len(),
            first: first.to_string(),
        });
    }
    // The job's folder: the run's name as `--name` takes one, else the run folder's,
    // else a fixed one (run.json is read back, not trusted).
    let name = run["name"]
        .as_str()
        .map(str::to_string)
        .into_iter()
        .chain(
            run_dir
                .file_name()
                .map(|n| n.to_string_lossy().into_owned()),
        )
        .find(|n| crate::rundir::layout::is_run_name(n))
        .unwrap_or_else(|| "ufo-batch-run".to_string());
    let job = out.join(&name);
    clear_earlier_export(&job)?;
    let mut trials: Vec<(TaskRecord, Option<crate::rundir::layout::TaskDir>)> = batch
        .stored
        .into_iter()
        .map(|t| (t.record, Some(t.dir)))
        .collect();
    trials.extend(batch.absent.into_iter().map(|r| (r, None)));
    trials.sort_by(|x, y| x.0.id.cmp(&y.0.id));
    let model = trials.iter().find_map(|(r, _)| atif::model_of(r));
    let mut names = BTreeSet::new();
    let mut results = Vec::with_capacity(trials.len());
    let mut problems = Vec::new();
    for (record, dir) in &trials {
        let trial = trial_name(record.id.as_str(), &mut names);
        let (steps, evaluation) = match dir.as_ref().map(stored_trajectory) {
            Some(Ok(stored)) => stored,
            Some(Err(e)) => {
                problems.push(format!("{}: its steps are not exported: {e}", record.id));
                Default::default()
            }
            None => Default::default(),
        };
        let stored = Stored {
            record,
            dir: dir.as_ref(),
            steps,
            evaluation,
        };
        let result = write_trial(&job.join(&trial), &trial, stored, model.as_deref())?;
        results.push((record, trial, result));
    }
    let passed = trials
        .iter()
        .filter(|(r, _)| r.status == TaskStatus::Passed)
        .count();
    let mean = if trials.is_empty() {
        0.0
    } else {
        passed as f64 / trials.len() as f64
    };
    write(
        &job.join("config.json"),
        &json!({"job_name": name, "agents": [{"name": "ufo-batch", "model_name": model}]}),
    )?;
    write(
        &job.join("result.json"),
        &job_result(&run, &name, &results, model.as_deref(), mean),
    )?;
    Ok(Exported {
        job,
        trials: trials.len(),
        mean,
        problems,
    })
}

/// Makes room for the job at `job`: nothing there, an empty folder, or a job exported
/// earlier (removed, so that no trial of an earlier export stays listed). Anything else
/// (a link, a file, a folder of other things) is left alone and refused.
fn clear_earlier_export(job: &Path) -> Result<(), FinishedError> {
    let meta = match std::fs::symlink_metadata(job) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(source) => {
            return Err(FinishedError::Read {
                path: job.to_path_buf(),
                source,
            });
        }
        Ok(meta) => meta,
    };
    if !meta.is_dir() {
        return Err(FinishedError::NotAnExport(job.to_path_buf()));
    }
    let read = |source| FinishedError::Read {
        path: job.to_path_buf(),
        source,
    };
    if std::fs::read_dir(job).map_err(read)?.next().is_none() {
        return Ok(());
    }
    let ours = crate::regular_file::read_text(&job.join("config.json"), 1 << 20)
        .ok()
        .and_then(|text| serde_json::from_str::<Value>(&text).ok())
        .is_some_and(|c| c["agents"][0]["name"] == "ufo-batch" && c["job_name"].is_string());
    if !ours {
        return Err(FinishedError::NotAnExport(job.to_path_buf()));
    }
    std::fs::remove_dir_all(job).map_err(read)
}

/// A task id as one trial name: `word/insert_table` → `word__insert_table`, made unique.
fn trial_name(id: &str, taken: &mut BTreeSet<String>) -> String {
    let base = id.replace('/', "__");
    let mut name = base.clone();
    let mut n = 2;
    while !taken.insert(name.clone()) {
        name = format!("{base}-{n}");
        n += 1;
    }
    name
}

/// A UUID made from `text` (Harbor's ids are UUIDs; the same run gives the same ones).
fn uuid_of(text: &str) -> String {
    let a = crate::hash::fnv1a64(format!("a:{text}").as_bytes());
    let b = crate::hash::fnv1a64(format!("b:{text}").as_bytes());
    let hex = format!("{a:016x}{b:016x}");
    format!(
        "{}-{}-4{}-8{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[13..16],
        &hex[17..20],
        &hex[20..32]
    )
}

/// A verdict's reward: the evaluator's score where it gives one (OSWorld's), else 1.0
/// passed and 0.0 failed; none without a verdict.
fn reward_of(record: &TaskRecord) -> Option<f64> {
    match record.status {
        TaskStatus::Passed => Some(record.score.unwrap_or(1.0)),
        TaskStatus::Failed => Some(record.score.unwrap_or(0.0)),
        _ => None,
    }
}

/// Harbor's exception type for a task that has no verdict.
fn exception_type(status: TaskStatus) -> Option<&'static str> {
    match status {
        TaskStatus::Passed | TaskStatus::Failed => None,
        TaskStatus::Timeout => Some("TimeoutError"),
        TaskStatus::Cancelled => Some("CancelledError"),
        TaskStatus::Unsupported => Some("UnsupportedError"),
        TaskStatus::Error => Some("InfrastructureError"),
        TaskStatus::Pending | TaskStatus::Running => Some("Unfinished"),
    }
}

/// A task as stored: its record, its folder (none for a task of the batch with no
/// result), its steps and its evaluation.
struct Stored<'a> {
    record: &'a TaskRecord,
    dir: Option<&'a crate::rundir::layout::TaskDir>,
    steps: Vec<crate::record::StepRecord>,
    evaluation: Option<crate::record::Evaluation>,
}

/// One trial's folder; its `result.json` is returned too.
fn write_trial(
    dir: &Path,
    trial: &str,
    stored: Stored<'_>,
    model: Option<&str>,
) -> Result<Value, FinishedError> {
    let Stored {
        record,
        dir: task_dir,
        mut steps,
        evaluation,
    } = stored;
    let agent_dir = dir.join("agent");
    std::fs::create_dir_all(&agent_dir).map_err(|e| FileError::write(&agent_dir, e))?;
    copy_screenshots(&mut steps, task_dir, &agent_dir)?;
    let trajectory = atif::render(record, &steps, evaluation.as_ref(), &[]);
    let path = agent_dir.join("trajectory.json");
    write_atomic(&path, trajectory.as_bytes()).map_err(|e| FileError::write(&path, e))?;
    let config = json!({
        "task": {"path": record.source},
        "trial_name": trial,
        "agent": {"name": "ufo-batch", "model_name": model},
    });
    write(&dir.join("config.json"), &config)?;
    let reward = reward_of(record);
    if let Some(reward) = reward {
        write(
            &dir.join("verifier/reward.json"),
            &json!({"reward": reward}),
        )?;
    }
    let result = trial_result(dir, trial, record, config, model, reward);
    write(&dir.join("result.json"), &result)?;
    Ok(result)
}

/// The trial's screenshots, copied beside its trajectory.
fn copy_screenshots(
    steps: &mut [crate::record::StepRecord],
    task_dir: Option<&crate::rundir::layout::TaskDir>,
    agent_dir: &Path,
) -> Result<(), FinishedError> {
    // Each screenshot is copied beside the trajectory; one that cannot be (gone, a link,
    // not a screenshot's name) is not named by it, so that every image it names is there.
    for step in steps {
        for path in [
            &mut step.annotated_screenshot_path,
            &mut step.clean_screenshot_path,
        ] {
            let copied = match (path.as_deref(), task_dir) {
                (Some(name), Some(dir)) => copy_screenshot(&dir.file(name), agent_dir, name)?,
                _ => false,
            };
            if !copied {
                *path = None;
            }
        }
    }
    Ok(())
}

/// A time as Harbor writes it, when there is one.
fn at(t: Option<crate::units::Timestamp>) -> Option<String> {
    t.map(|t| t.to_string())
}

/// The trial's `result.json`: the task, the agent and its use, the reward or the exception.
fn trial_result(
    dir: &Path,
    trial: &str,
    record: &TaskRecord,
    config: Value,
    model: Option<&str>,
    reward: Option<f64>,
) -> Value {
    json!({
        "id": uuid_of(&format!("trial:{}:{}", record.id, record.source_hash)),
        // Repetitions are trials of one task, as Harbor groups them.
        "task_name": record.base_id().as_str(),
        "trial_name": trial,
        "trial_uri": format!(
            "file://{}",
            std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf()).display()
        ),
        "task_id": {"path": record.source},
        "task_checksum": record.source_hash,
        "config": config,
        "agent_info": {
            "name": "ufo-batch",
            "version": env!("CARGO_PKG_VERSION"),
            "model_info": model.map(|m| json!({"name": m})),
        },
        "agent_result": {
            "n_input_tokens": record.usage.prompt_tokens,
            "n_output_tokens": record.usage.completion_tokens,
            "cost_usd": record.cost_usd,
        },
        "verifier_result": reward.map(|r| json!({"rewards": {"reward": r}})),
        "exception_info": exception_info(record),
        "started_at": at(record.started),
        "finished_at": at(record.finished),
        "agent_execution": {"started_at": at(record.started), "finished_at": at(record.finished)},
    })
}

/// The trial's exception info, for a task that has no verdict.
fn exception_info(record: &TaskRecord) -> Option<Value> {
    exception_type(record.status).map(|kind| {
        json!({
            "exception_type": kind,
            "exception_message": record.error.clone().unwrap_or_else(|| record.status.to_string()),
            "exception_traceback": "",
            "occurred_at": at(record.finished.or(record.started)).unwrap_or_else(|| "1970-01-01T00:00:00Z".into()),
        })
    })
}

/// The job's `result.json`: totals, and the mean the viewer shows.
fn job_result(
    run: &Value,
    name: &str,
    trials: &[(&TaskRecord, String, Value)],
    model: Option<&str>,
    mean: f64,
) -> Value {
    let key = match model {
        Some(m) => format!("ufo-batch__{m}__adhoc"),
        None => "ufo-batch__adhoc".to_string(),
    };
    let mut rewards: serde_json::Map<String, Value> = serde_json::Map::new();
    let mut exceptions: serde_json::Map<String, Value> = serde_json::Map::new();
    let (mut errored, mut cancelled, mut rewarded) = (0, 0, 0);
    for (record, trial, _) in trials {
        if let Some(kind) = exception_type(record.status) {
            errored += 1;
            cancelled += usize::from(record.status == TaskStatus::Cancelled);
            push(&mut exceptions, kind, trial);
        } else {
            rewarded += 1;
            let reward = format!("{:?}", reward_of(record).unwrap_or_default());
            push(&mut rewards, &reward, trial);
        }
    }
    let cost: Option<f64> = trials
        .iter()
        .try_fold(0.0, |sum, (r, _, _)| r.cost_usd.map(|c| sum + c));
    json!({
        "id": uuid_of(&format!("job:{name}:{}", run["started"])),
        "started_at": run["started"],
        "finished_at": run["finished"],
        "n_total_trials": trials.len(),
        "stats": {
            "n_completed_trials": trials.len(),
            "n_errored_trials": errored,
            "n_cancelled_trials": cancelled,
            "evals": {key: {
                "n_trials": rewarded,
                "n_errors": errored,
                "metrics": [{"mean": mean}],
                "reward_stats": {"reward": rewards},
                "exception_stats": exceptions,
            }},
            "n_input_tokens": trials.iter().map(|(r, _, _)| r.usage.prompt_tokens).sum::<u64>(),
            "n_output_tokens": trials.iter().map(|(r, _, _)| r.usage.completion_tokens).sum::<u64>(),
            "cost_usd": cost,
        },
    })
}

fn push(map: &mut serde_json::Map<String, Value>, key: &str, trial: &str) {
    if let Value::Array(list) = map.entry(key).or_insert_with(|| json!([])) {
        list.push(json!(trial));
    }
}

/// Copies a task's screenshot into the trial, read as a regular file of bounded size (a
/// link or a FIFO in its place is refused, not followed); true when copied. Only a
/// screenshot's own name in the task folder is copied (`action_step3_annotated.png`): a
/// `response.log` naming another path (`../../secret`) copies nothing.
fn copy_screenshot(from: &Path, to_dir: &Path, name: &str) -> Result<bool, FinishedError> {
    if !atif::is_screenshot_name(name) {
        return Ok(false);
    }
    let Ok(file) = crate::regular_file::read_stored(from, MAX_SCREENSHOT) else {
        return Ok(false);
    };
    let to = to_dir.join(name);
    write_atomic(&to, &file.bytes).map_err(|e| FileError::write(&to, e))?;
    Ok(true)
}

fn write(path: &Path, value: &Value) -> Result<(), FinishedError> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| FileError::write(dir, e))?;
    }
    let bytes = serde_json::to_vec_pretty(value).unwrap_or_default();
    write_atomic(path, &bytes).map_err(|e| FileError::write(path, e).into())
}
