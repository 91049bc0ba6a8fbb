//! Option values given as text: durations, sizes, run names, counts; and how they are
//! shown again in `run.json`.

use std::num::NonZeroUsize;
use std::path::Path;
use std::time::Duration;

use super::ConfigError;
use crate::units::parse_duration;

/// The run name of a run with only `--request`s: `request-20261122-101500` (UTC).
pub(super) fn request_run_name() -> String {
    let now = crate::units::Timestamp::now().to_string();
    let digits: String = now.chars().filter(char::is_ascii_digit).take(14).collect();
    let (day, time) = digits.split_at(8.min(digits.len()));
    format!("request-{day}-{time}")
}

pub(super) fn default_jobs() -> usize {
    std::thread::available_parallelism()
        .map(NonZeroUsize::get)
        .unwrap_or(1)
}

pub(super) fn nonzero(flag: &str, value: Option<u32>) -> Result<Option<u32>, ConfigError> {
    match value {
        Some(0) => Err(ConfigError::Invalid(format!("{flag} must be at least 1"))),
        v => Ok(v),
    }
}

pub(super) fn duration_option(
    flag: &str,
    text: Option<String>,
) -> Result<Option<Duration>, ConfigError> {
    text.map(|t| parse_duration(&t).map_err(|e| ConfigError::Invalid(format!("{flag}: {e}"))))
        .transpose()
}

/// The folder UFO keeps a project's task files in.
const UFO_TASKS: &str = "tasks";

/// The run name a path gives: a folder's name, or a file's name without `.json`.
pub(super) fn default_run_name(path: &Path) -> Result<String, ConfigError> {
    let absolute = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    let name = if absolute.is_file() {
        absolute.file_stem()
    } else {
        absolute.file_name()
    };
    let mut name = name
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if name == UFO_TASKS
        && let Some(project) = absolute.parent().and_then(Path::file_name)
    {
        // UFO keeps every project's tasks in `PROJECT/tasks`: name the run after PROJECT.
        name = project.to_string_lossy().into_owned();
    }
    if absolute.is_dir() && crate::rundir::is_run_dir(&absolute) {
        // Replaying an earlier run must not resume that same run dir.
        name.push_str("-replay");
    }
    let safe: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    let safe = safe.trim_start_matches('.').to_string();
    if safe.is_empty() {
        return Err(ConfigError::Invalid(format!(
            "cannot name the run after {}; give --name",
            path.display()
        )));
    }
    Ok(safe)
}

pub(super) fn check_run_name(name: &str) -> Result<(), ConfigError> {
    let ok = !name.is_empty()
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c));
    if ok {
        Ok(())
    } else {
        Err(ConfigError::Invalid(format!(
            "--name {name:?}: use letters, digits, '.', '_' and '-' (it names a folder)"
        )))
    }
}
