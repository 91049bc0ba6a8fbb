//! Option values given as text: durations, sizes, run names, counts; and how they are
//! shown again in `run.json`.

use std::num::NonZeroUsize;
use std::path::Path;
use std::time::Duration;

use super::ConfigError;
use crate::units::parse_duration;

/// The run name of a run with only `--request`s, from the requests themselves
/// (`request-1f3a9c2e`): the same command resumes the same run.
pub(super) fn request_run_name(requests: &[String]) -> String {
    let hash = crate::hash::hex(requests.join("\n").as_bytes());
    format!("request-{}", &hash[..8])
}

pub(super) fn default_jobs() -> usize {
    std::thread::available_parallelism()
        .map(NonZeroUsize::get)
        .unwrap_or(1)
}

/// An option's value from the command line (or the environment) or else the config
/// file, with the name to use in a message about it: the flag, or the file's key.
pub(super) fn layered<T>(
    flag: &'static str,
    key: &'static str,
    given: Option<T>,
    file: Option<T>,
) -> Option<(T, &'static str)> {
    given.map(|v| (v, flag)).or(file.map(|v| (v, key)))
}

pub(super) fn nonzero<T: PartialEq + Default>(
    value: Option<(T, &str)>,
) -> Result<Option<T>, ConfigError> {
    match value {
        Some((v, name)) if v == T::default() => {
            Err(ConfigError::Invalid(format!("{name} must be at least 1")))
        }
        v => Ok(v.map(|(v, _)| v)),
    }
}

/// The most sessions at once (`--jobs`) and LLM calls in flight (`--max-connections`).
pub(crate) const MAX_JOBS: usize = 65_536;
/// The most runs of each task (`--repeat`).
pub(crate) const MAX_REPEAT: u32 = 10_000;
/// The most steps or rounds of a session.
pub(crate) const MAX_STEPS: u32 = 1_000_000;
/// The most retries of an infrastructure error.
pub(crate) const MAX_RETRIES: u32 = 100;

/// The most bytes kept of a command's output or a file read (`[executor] output_limit`),
/// and characters of an observation shown to a model.
pub(crate) const MAX_OUTPUT_LIMIT: usize = 64 << 20;

/// A value of at most `max`, when given; more is refused, saying which key.
pub(super) fn at_most<T: PartialOrd + std::fmt::Display>(
    value: Option<T>,
    name: &str,
    max: T,
) -> Result<Option<T>, ConfigError> {
    match value {
        Some(v) if v > max => Err(ConfigError::Invalid(format!(
            "{name} {v} is too large: it may be at most {max}"
        ))),
        v => Ok(v),
    }
}

/// A count from 1 to `max`: 0 and more than `max` are refused, saying which option.
pub(super) fn counted<T>(value: Option<(T, &str)>, max: T) -> Result<Option<T>, ConfigError>
where
    T: PartialOrd + Default + std::fmt::Display,
{
    match value {
        Some((v, name)) if v == T::default() => {
            Err(ConfigError::Invalid(format!("{name} must be at least 1")))
        }
        Some((v, name)) if v > max => Err(ConfigError::Invalid(format!(
            "{name} {v} is too large: it may be at most {max}"
        ))),
        v => Ok(v.map(|(v, _)| v)),
    }
}

pub(super) fn duration_option(
    value: Option<(String, &str)>,
) -> Result<Option<Duration>, ConfigError> {
    value
        .map(|(t, name)| {
            parse_duration(&t).map_err(|e| ConfigError::Invalid(format!("{name}: {e}")))
        })
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
    if crate::rundir::layout::is_run_name(name) {
        Ok(())
    } else {
        Err(ConfigError::Invalid(format!(
            "--name {:?}: use letters, digits, '.', '_' and '-', at most 200 (it names a folder)",
            crate::text::shorten(name, 80)
        )))
    }
}
