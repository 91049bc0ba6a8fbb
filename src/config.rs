//! The validated configuration of a run: the config file (`ufo-batch.toml`), environment
//! variables and command-line flags merged once (flags over env over file over
//! defaults) into domain types. Nothing past this module sees raw option text.

use std::num::NonZeroUsize;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::agent::{AgentSettings, ConfirmPolicy};
use crate::eval::EvalMode;
use crate::executor::sandbox::{Sandbox, SandboxMode};
use crate::executor::{ResourceLimits, ShellSettings};
use crate::llm::{ApiType, LlmConfig, MaxTokensField, Price, ResponseFormat};

/// The config file read when `--config` is not given, if it exists.
pub const DEFAULT_CONFIG_FILE: &str = "ufo-batch.toml";

/// Problems with the configuration; all are reported before anything runs.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The config file could not be read.
    #[error("cannot read the config file {path}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The config file is not valid TOML of the expected shape.
    #[error("bad config file {path}: {message}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// The parser's message, with line and column.
        message: String,
    },
    /// A value is out of range or malformed.
    #[error("{0}")]
    Invalid(String),
}

/// `ufo-batch.toml`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    /// `[run]`: how the batch runs.
    #[serde(default)]
    pub run: RunSection,
    /// `[executor]`: how commands run.
    #[serde(default)]
    pub executor: ExecutorSection,
    /// `[llm]`: the model server.
    #[serde(default)]
    pub llm: LlmSection,
    /// `[agent]`: how LLM agents behave.
    #[serde(default)]
    pub agent: AgentSection,
    /// `[sandbox]`: how commands are confined.
    #[serde(default)]
    pub sandbox: SandboxSection,
}

/// `[sandbox]` of the config file.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SandboxSection {
    /// `auto`, `landlock`, `bwrap` or `none`.
    pub mode: Option<String>,
    /// Address-space limit per process (`"4GiB"`, `"512M"`, `"none"`).
    pub memory: Option<String>,
    /// CPU-time limit per process (`"10m"`, `"none"`).
    pub cpu: Option<String>,
}

/// `[llm]` of the config file; every key is optional.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LlmSection {
    /// Server root (`https://api.openai.com/v1`, `http://127.0.0.1:8080/v1`, ...).
    pub base_url: Option<String>,
    /// Model name (Azure: the deployment).
    pub model: Option<String>,
    /// `openai` or `azure`.
    pub api_type: Option<ApiType>,
    /// Azure's `api-version`.
    pub api_version: Option<String>,
    /// The environment variable that holds the key.
    pub api_key_env: Option<String>,
    /// Sampling temperature.
    pub temperature: Option<f64>,
    /// Token limit per reply.
    pub max_tokens: Option<u32>,
    /// `max_tokens`, `max_completion_tokens` or `none`.
    pub max_tokens_field: Option<MaxTokensField>,
    /// `none`, `json_object` or `json_schema`.
    pub response_format: Option<ResponseFormat>,
    /// Per-request timeout (`"60s"`).
    pub timeout: Option<String>,
    /// Retries after transient failures.
    pub max_retries: Option<u32>,
    /// First backoff delay (`"1s"`).
    pub retry_base: Option<String>,
    /// Longest wait between retries (`"60s"`).
    pub retry_max: Option<String>,
    /// USD per 1k tokens, by model: `[llm.prices."gpt-4o"] input = 0.0025, output = 0.01`.
    #[serde(default)]
    pub prices: std::collections::BTreeMap<String, Price>,
}

/// `[agent]` of the config file.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentSection {
    /// Characters of command results sent back to the model per step.
    pub observation_limit: Option<usize>,
    /// Times an unusable reply is asked again.
    pub reply_retries: Option<u32>,
    /// `deny` (default) or `allow` sensitive actions the model asks to confirm.
    pub confirm: Option<ConfirmPolicy>,
}

/// `[run]` of the config file; every key is optional.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunSection {
    /// Results root.
    pub out: Option<PathBuf>,
    /// Sessions at once.
    pub jobs: Option<usize>,
    /// Per-task wall-clock limit (`"10m"`).
    pub timeout: Option<String>,
    /// Step limit per session.
    pub max_steps: Option<u32>,
    /// Round limit per session.
    pub max_rounds: Option<u32>,
    /// Evaluation mode.
    pub eval: Option<String>,
    /// Retries after an infrastructure error.
    pub retries: Option<u32>,
    /// First delay before a retry (`"2s"`).
    pub retry_delay: Option<String>,
    /// Stop scheduling after this many tasks did not pass.
    pub max_fail: Option<u32>,
    /// Grace period after Ctrl-C / SIGTERM (`"30s"`).
    pub grace: Option<String>,
}

/// `[executor]` of the config file.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExecutorSection {
    /// Default timeout of one command (`"60s"`).
    pub command_timeout: Option<String>,
    /// Longest timeout a command may ask for.
    pub max_command_timeout: Option<String>,
    /// Bytes kept of each command output stream.
    pub output_limit: Option<usize>,
}

impl ConfigFile {
    /// Reads `path`; with `explicit` false a missing file is an empty config.
    pub fn load(path: &Path, explicit: bool) -> Result<Self, ConfigError> {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if !explicit && e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Self::default());
            }
            Err(source) => {
                return Err(ConfigError::Read {
                    path: path.to_path_buf(),
                    source,
                });
            }
        };
        toml::from_str(&text).map_err(|e| ConfigError::Parse {
            path: path.to_path_buf(),
            message: e.to_string().trim().replace('\n', "\n  "),
        })
    }
}

/// Options given on the command line or in the environment (the layer above the file).
#[derive(Debug, Default, Clone)]
pub struct RunOverrides {
    /// Task files and folders.
    pub paths: Vec<PathBuf>,
    /// `--out`.
    pub out: Option<PathBuf>,
    /// `--name`.
    pub name: Option<String>,
    /// `--jobs`.
    pub jobs: Option<usize>,
    /// `--timeout`.
    pub timeout: Option<String>,
    /// `--max-steps`.
    pub max_steps: Option<u32>,
    /// `--max-rounds`.
    pub max_rounds: Option<u32>,
    /// `--eval`.
    pub eval: Option<EvalMode>,
    /// `--command-timeout`.
    pub command_timeout: Option<String>,
    /// `--fresh`.
    pub fresh: bool,
    /// `--rerun-failed`.
    pub rerun_failed: bool,
    /// `--model` (env `UFO_BATCH_MODEL`).
    pub model: Option<String>,
    /// `--llm-base-url` (env `OPENAI_BASE_URL`).
    pub llm_base_url: Option<String>,
    /// `--max-cost`.
    pub max_cost: Option<f64>,
    /// `--request`: requests to run without a file.
    pub requests: Vec<String>,
    /// `--sandbox`.
    pub sandbox: Option<SandboxMode>,
    /// `--retries`.
    pub retries: Option<u32>,
    /// `--max-fail` (`--fail-fast` is 1).
    pub max_fail: Option<u32>,
    /// `--shard I/N`.
    pub shard: Option<String>,
    /// `--shards N`.
    pub shards: Option<u32>,
    /// `--grace`.
    pub grace: Option<String>,
    /// `--repeat`.
    pub repeat: Option<u32>,
}

/// What to do with results already in the run dir.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ResumeMode {
    /// Skip tasks that already have a final result.
    Resume,
    /// Skip only tasks that passed.
    RerunFailed,
    /// Delete the run dir's results and start over.
    Fresh,
}

/// The resolved configuration of `ufo-batch run`.
#[derive(Clone, Debug, Serialize)]
pub struct RunConfig {
    /// Task files and folders, as given.
    pub paths: Vec<PathBuf>,
    /// Results root.
    pub out_root: PathBuf,
    /// The run's name (its folder under `out_root`).
    pub run_name: String,
    /// `out_root/run_name`.
    pub run_dir: PathBuf,
    /// Sessions at once.
    pub jobs: NonZeroUsize,
    /// Per-task wall-clock limit, unless the task sets its own.
    #[serde(serialize_with = "as_human")]
    pub timeout: Duration,
    /// Step limit, unless the task sets its own (default: 50, or a plan's length).
    pub max_steps: Option<u32>,
    /// Round limit (follower sessions always get enough for their steps).
    pub max_rounds: Option<u32>,
    /// Evaluation mode.
    pub eval: EvalMode,
    /// What to do with earlier results.
    pub resume: ResumeMode,
    /// Command execution settings.
    #[serde(skip)]
    pub shell: ShellSettings,
    /// The LLM, when a model is configured.
    pub llm: Option<LlmConfig>,
    /// LLM agent settings.
    pub agent: AgentSettings,
    /// Stop scheduling once the run's LLM spend reaches this many USD.
    pub max_cost: Option<f64>,
    /// Requests given with `--request`.
    pub requests: Vec<String>,
    /// How commands are to be confined (resolved against the machine at run start).
    pub sandbox: SandboxMode,
    /// Retries after an infrastructure error.
    pub retries: u32,
    /// First delay before a retry; doubles, with jitter.
    #[serde(serialize_with = "as_human")]
    pub retry_delay: Duration,
    /// Stop scheduling after this many tasks did not pass.
    pub max_fail: Option<u32>,
    /// The shard this machine runs.
    pub shard: Option<crate::shard::Shard>,
    /// How long running tasks may finish after Ctrl-C / SIGTERM.
    #[serde(serialize_with = "as_human")]
    pub grace: Duration,
    /// Runs per task (`--repeat`); 1 without repeats.
    pub repeat: Option<u32>,
    /// The config file that was read, if any.
    pub config_file: Option<PathBuf>,
}

impl RunConfig {
    /// Merges flags/env over the file over defaults, and validates the result.
    pub fn resolve(
        o: RunOverrides,
        file: ConfigFile,
        config_file: Option<PathBuf>,
    ) -> Result<Self, ConfigError> {
        if o.paths.is_empty() && o.requests.is_empty() {
            return Err(ConfigError::Invalid(
                "give at least one task file or folder to run, or --request TEXT".into(),
            ));
        }
        if o.fresh && o.rerun_failed {
            return Err(ConfigError::Invalid(
                "--fresh and --rerun-failed cannot be used together".into(),
            ));
        }
        let out_root = o
            .out
            .or(file.run.out)
            .unwrap_or_else(|| PathBuf::from("results"));
        let shard = match (o.shard, o.shards) {
            (Some(text), _) => {
                Some(crate::shard::Shard::parse(&text).map_err(ConfigError::Invalid)?)
            }
            (None, Some(n)) => Some(
                crate::shard::Shard::from_env(n, |v| std::env::var(v).ok())
                    .map_err(ConfigError::Invalid)?,
            ),
            (None, None) => None,
        };
        let run_name = match (o.name, o.paths.first()) {
            (Some(name), _) => name,
            (None, first) => {
                let base = match first {
                    Some(path) => default_run_name(path)?,
                    None => request_run_name(),
                };
                // Shards of one batch must not share a run dir; `merge` joins them.
                match &shard {
                    Some(s) => format!("{base}-shard-{}-of-{}", s.index + 1, s.count),
                    None => base,
                }
            }
        };
        check_run_name(&run_name)?;
        let jobs = o.jobs.or(file.run.jobs).unwrap_or_else(default_jobs);
        let jobs = NonZeroUsize::new(jobs)
            .ok_or_else(|| ConfigError::Invalid("--jobs must be at least 1".into()))?;
        let timeout = duration_option("--timeout", o.timeout.or(file.run.timeout))?
            .unwrap_or(Duration::from_secs(600));
        let eval = match (o.eval, file.run.eval) {
            (Some(mode), _) => mode,
            (None, Some(text)) => text
                .parse()
                .map_err(|e| ConfigError::Invalid(format!("[run] eval: {e}")))?,
            (None, None) => EvalMode::Auto,
        };
        let max_steps = nonzero("--max-steps", o.max_steps.or(file.run.max_steps))?;
        let max_rounds = nonzero("--max-rounds", o.max_rounds.or(file.run.max_rounds))?;
        let sandbox = match (o.sandbox, &file.sandbox.mode) {
            (Some(mode), _) => mode,
            (None, Some(text)) => text
                .parse()
                .map_err(|e| ConfigError::Invalid(format!("[sandbox] mode: {e}")))?,
            (None, None) => SandboxMode::Auto,
        };
        let retry_delay = duration_option("[run] retry_delay", file.run.retry_delay)?
            .unwrap_or(Duration::from_secs(2));
        let grace = duration_option("--grace", o.grace.or(file.run.grace))?
            .unwrap_or(Duration::from_secs(30));
        let max_fail = nonzero("--max-fail", o.max_fail.or(file.run.max_fail))?;
        let mut shell = shell_settings(o.command_timeout, file.executor)?;
        shell.limits = resource_limits(&file.sandbox)?;
        let llm = llm_config(o.model, o.llm_base_url, file.llm)?;
        let agent = agent_settings(file.agent)?;
        check_llm_needs(eval, o.max_cost, llm.as_ref())?;
        let resume = if o.fresh {
            ResumeMode::Fresh
        } else if o.rerun_failed {
            ResumeMode::RerunFailed
        } else {
            ResumeMode::Resume
        };
        Ok(Self {
            run_dir: out_root.join(&run_name),
            paths: o.paths,
            out_root,
            run_name,
            jobs,
            timeout,
            max_steps,
            max_rounds,
            eval,
            resume,
            shell,
            llm,
            agent,
            max_cost: o.max_cost,
            requests: o.requests,
            sandbox,
            retries: o.retries.or(file.run.retries).unwrap_or(0),
            retry_delay,
            max_fail,
            shard,
            grace,
            repeat: nonzero("--repeat", o.repeat)?,
            config_file,
        })
    }

    /// The configuration as recorded in `run.json`: no secret, only where it comes from.
    pub fn to_json(&self) -> serde_json::Value {
        let mut v = serde_json::to_value(self).unwrap_or_default();
        if let Some(llm) = &self.llm {
            v["llm"]["base_url"] = without_userinfo(&llm.base_url).into();
            let key = if std::env::var_os(&llm.api_key_env).is_some() {
                "set"
            } else {
                "not set"
            };
            v["llm"]["api_key"] = format!("{key} (from ${})", llm.api_key_env).into();
        }
        v["command_timeout"] = humantime::format_duration(self.shell.command_timeout)
            .to_string()
            .into();
        v["output_limit"] = self.shell.output_limit.into();
        v["limits"] = serde_json::to_value(self.shell.limits).unwrap_or_default();
        v
    }
}

fn shell_settings(
    command_timeout: Option<String>,
    file: ExecutorSection,
) -> Result<ShellSettings, ConfigError> {
    let defaults = ShellSettings::default();
    let command_timeout = duration_option(
        "--command-timeout",
        command_timeout.or(file.command_timeout),
    )?
    .unwrap_or(defaults.command_timeout);
    let max_command_timeout =
        duration_option("[executor] max_command_timeout", file.max_command_timeout)?
            .unwrap_or(defaults.max_command_timeout)
            .max(command_timeout);
    let output_limit = file.output_limit.unwrap_or(defaults.output_limit);
    if output_limit < 1024 {
        return Err(ConfigError::Invalid(
            "[executor] output_limit must be at least 1024 bytes".into(),
        ));
    }
    Ok(ShellSettings {
        command_timeout,
        max_command_timeout,
        output_limit,
        sandbox: Sandbox::none(),
        limits: ResourceLimits::default(),
    })
}

fn llm_config(
    model: Option<String>,
    base_url: Option<String>,
    f: LlmSection,
) -> Result<Option<LlmConfig>, ConfigError> {
    let Some(model) = model.or(f.model).filter(|m| !m.trim().is_empty()) else {
        return Ok(None);
    };
    let mut c = LlmConfig::new(model);
    if let Some(url) = base_url.or(f.base_url) {
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            return Err(ConfigError::Invalid(format!(
                "--llm-base-url {url:?}: give an http:// or https:// URL"
            )));
        }
        c.base_url = url;
    }
    c.api_type = f.api_type.unwrap_or(c.api_type);
    c.api_version = f.api_version;
    c.api_key_env = f.api_key_env.unwrap_or(c.api_key_env);
    c.temperature = f.temperature.unwrap_or(c.temperature);
    c.max_tokens = f.max_tokens.unwrap_or(c.max_tokens);
    c.max_tokens_field = f.max_tokens_field.unwrap_or(c.max_tokens_field);
    c.response_format = f.response_format.unwrap_or(c.response_format);
    c.timeout = duration_option("[llm] timeout", f.timeout)?.unwrap_or(c.timeout);
    c.max_retries = f.max_retries.unwrap_or(c.max_retries);
    c.retry_base = duration_option("[llm] retry_base", f.retry_base)?.unwrap_or(c.retry_base);
    c.retry_max = duration_option("[llm] retry_max", f.retry_max)?.unwrap_or(c.retry_max);
    c.prices = f.prices;
    Ok(Some(c))
}

fn agent_settings(f: AgentSection) -> Result<AgentSettings, ConfigError> {
    let d = AgentSettings::default();
    let observation_limit = f.observation_limit.unwrap_or(d.observation_limit);
    if observation_limit < 200 {
        return Err(ConfigError::Invalid(
            "[agent] observation_limit must be at least 200 characters".into(),
        ));
    }
    Ok(AgentSettings {
        observation_limit,
        reply_retries: f.reply_retries.unwrap_or(d.reply_retries),
        confirm: f.confirm.unwrap_or(d.confirm),
    })
}

/// Options that only make sense with an LLM, checked before anything runs.
fn check_llm_needs(
    eval: EvalMode,
    max_cost: Option<f64>,
    llm: Option<&LlmConfig>,
) -> Result<(), ConfigError> {
    if eval == EvalMode::Llm && llm.is_none() {
        return Err(ConfigError::Invalid(
            "--eval llm needs an LLM: give --model".into(),
        ));
    }
    if let Some(max) = max_cost {
        if !(max.is_finite() && max > 0.0) {
            return Err(ConfigError::Invalid(
                "--max-cost must be a positive number of USD".into(),
            ));
        }
        let Some(llm) = llm else {
            return Err(ConfigError::Invalid(
                "--max-cost limits LLM spend, but no LLM is configured (--model)".into(),
            ));
        };
        if llm.price().is_none() {
            return Err(ConfigError::Invalid(format!(
                "--max-cost needs the price of {m:?}: add [llm.prices.\"{m}\"] with input and \
                 output (USD per 1k tokens) to ufo-batch.toml",
                m = llm.model
            )));
        }
    }
    Ok(())
}

/// Per-process limits: 8 GiB of address space and 10 minutes of CPU unless set.
fn resource_limits(f: &SandboxSection) -> Result<ResourceLimits, ConfigError> {
    let memory_bytes = match f.memory.as_deref() {
        None => Some(8 << 30),
        Some(text) => {
            parse_size(text).map_err(|e| ConfigError::Invalid(format!("[sandbox] memory: {e}")))?
        }
    };
    let cpu_seconds = match f.cpu.as_deref().map(str::trim) {
        None => Some(600),
        Some("none") => None,
        Some(text) => Some(
            parse_duration(text)
                .map_err(|e| ConfigError::Invalid(format!("[sandbox] cpu: {e}")))?
                .as_secs()
                .max(1),
        ),
    };
    Ok(ResourceLimits {
        memory_bytes,
        cpu_seconds,
    })
}

/// A size: `512M`, `4G`, `4GiB`, `1.5g`, a number of bytes, or `none`.
pub fn parse_size(text: &str) -> Result<Option<u64>, String> {
    let t = text.trim().to_ascii_lowercase();
    if t == "none" {
        return Ok(None);
    }
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let factor: u64 = match unit.trim() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        "t" | "tb" | "tib" => 1 << 40,
        other => {
            return Err(format!(
                "unknown unit `{other}` in {text:?} (use K, M, G or T)"
            ));
        }
    };
    let n: f64 = number
        .parse()
        .map_err(|_| format!("{text:?} is not a size such as 512M or 4G"))?;
    if !(n.is_finite() && n > 0.0) {
        return Err(format!("{text:?} is not a positive size"));
    }
    Ok(Some((n * factor as f64) as u64))
}

/// A URL without `user:password@`.
pub fn without_userinfo(url: &str) -> String {
    match (url.find("://"), url.find('@')) {
        (Some(scheme), Some(at)) if at > scheme && !url[scheme + 3..at].contains('/') => {
            format!("{}***@{}", &url[..scheme + 3], &url[at + 1..])
        }
        _ => url.to_string(),
    }
}

/// The run name of a run with only `--request`s: `request-20261122-101500` (UTC).
fn request_run_name() -> String {
    let now = crate::timestamp::Timestamp::now().to_string();
    let digits: String = now.chars().filter(char::is_ascii_digit).take(14).collect();
    let (day, time) = digits.split_at(8.min(digits.len()));
    format!("request-{day}-{time}")
}

/// Serializes a duration as `90s`, `10m`.
pub fn as_human<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(&humantime::format_duration(*d))
}

fn default_jobs() -> usize {
    std::thread::available_parallelism()
        .map(NonZeroUsize::get)
        .unwrap_or(1)
}

fn nonzero(flag: &str, value: Option<u32>) -> Result<Option<u32>, ConfigError> {
    match value {
        Some(0) => Err(ConfigError::Invalid(format!("{flag} must be at least 1"))),
        v => Ok(v),
    }
}

fn duration_option(flag: &str, text: Option<String>) -> Result<Option<Duration>, ConfigError> {
    text.map(|t| parse_duration(&t).map_err(|e| ConfigError::Invalid(format!("{flag}: {e}"))))
        .transpose()
}

/// The run name a path gives: a folder's name, or a file's name without `.json`.
fn default_run_name(path: &Path) -> Result<String, ConfigError> {
    let absolute = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    let name = if absolute.is_file() {
        absolute.file_stem()
    } else {
        absolute.file_name()
    };
    let mut name = name
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if absolute.is_dir() && crate::layout::is_run_dir(&absolute) {
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

fn check_run_name(name: &str) -> Result<(), ConfigError> {
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

/// A duration: `90s`, `10m`, `1h 30m`, `500ms`, or a plain number of seconds.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let t = text.trim();
    let parsed = match t.parse::<f64>() {
        Ok(secs) if secs.is_finite() && secs > 0.0 => Ok(Duration::from_secs_f64(secs)),
        Ok(_) => Err(format!("{t:?} is not a positive duration")),
        Err(_) => humantime::parse_duration(t)
            .map_err(|e| format!("{t:?} is not a duration ({e}); write e.g. 90s, 10m or 1h")),
    }?;
    if parsed.is_zero() {
        return Err(format!("{t:?} is not a positive duration"));
    }
    Ok(parsed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn overrides(paths: &[&str]) -> RunOverrides {
        RunOverrides {
            paths: paths.iter().map(PathBuf::from).collect(),
            ..Default::default()
        }
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("512M").unwrap(), Some(512 << 20));
        assert_eq!(parse_size("4GiB").unwrap(), Some(4 << 30));
        assert_eq!(parse_size("1.5g").unwrap(), Some(3 << 29));
        assert_eq!(parse_size("none").unwrap(), None);
        assert!(
            parse_size("4 parsecs")
                .unwrap_err()
                .contains("unknown unit")
        );
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("90s").unwrap(), Duration::from_secs(90));
        assert_eq!(parse_duration("10m").unwrap(), Duration::from_secs(600));
        assert_eq!(parse_duration("1h 30m").unwrap(), Duration::from_secs(5400));
        assert_eq!(parse_duration("2.5").unwrap(), Duration::from_millis(2500));
        assert!(parse_duration("0").is_err());
        assert!(
            parse_duration("soon")
                .unwrap_err()
                .contains("write e.g. 90s")
        );
    }

    #[test]
    fn flags_win_over_the_file() {
        let file: ConfigFile = toml::from_str(
            "[run]\njobs = 3\ntimeout = \"5m\"\n[executor]\ncommand_timeout = \"5s\"",
        )
        .unwrap();
        let mut o = overrides(&["plans"]);
        o.jobs = Some(7);
        let c = RunConfig::resolve(o, file, None).unwrap();
        assert_eq!(c.jobs.get(), 7);
        assert_eq!(c.timeout, Duration::from_secs(300));
        assert_eq!(c.shell.command_timeout, Duration::from_secs(5));
        assert_eq!(c.run_name, "plans");
        assert_eq!(c.run_dir, PathBuf::from("results/plans"));
    }

    #[test]
    fn bad_values_are_rejected_with_the_option_named() {
        let mut o = overrides(&["plans"]);
        o.jobs = Some(0);
        let e = RunConfig::resolve(o, ConfigFile::default(), None).unwrap_err();
        assert_eq!(e.to_string(), "--jobs must be at least 1");
        let mut o = overrides(&["plans"]);
        o.name = Some("../x".into());
        assert!(
            RunConfig::resolve(o, ConfigFile::default(), None)
                .unwrap_err()
                .to_string()
                .starts_with("--name")
        );
        let mut o = overrides(&["plans"]);
        o.timeout = Some("forever".into());
        let e = RunConfig::resolve(o, ConfigFile::default(), None)
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("--timeout: \"forever\" is not a duration"),
            "{e}"
        );
    }

    #[test]
    fn unknown_config_keys_are_errors_with_position() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ufo-batch.toml");
        std::fs::write(&path, "[run]\njbos = 3\n").unwrap();
        let e = ConfigFile::load(&path, true).unwrap_err().to_string();
        assert!(e.contains("line 2"), "{e}");
        assert!(e.contains("unknown field `jbos`"), "{e}");
        assert!(ConfigFile::load(&dir.path().join("none.toml"), false).is_ok());
        assert!(ConfigFile::load(&dir.path().join("none.toml"), true).is_err());
    }

    #[test]
    fn run_name_from_files_and_folders() {
        assert_eq!(default_run_name(Path::new("some/dir/")).unwrap(), "dir");
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("one task.json");
        std::fs::write(&f, "{}").unwrap();
        assert_eq!(default_run_name(&f).unwrap(), "one_task");
    }
}
