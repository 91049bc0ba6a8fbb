//! Resolving a run's configuration: flags and environment over the file over defaults,
//! validated into `RunConfig`, whose values are domain types.

use std::num::NonZeroUsize;
use std::path::PathBuf;
use std::time::Duration;

use serde::Serialize;

use super::ConfigError;
use super::file::ConfigFile;
use super::sections::{
    agent_settings, check_llm_needs, llm_config, resource_limits, shell_settings,
};
use super::values::{
    check_run_name, default_jobs, default_run_name, duration_option, nonzero, request_run_name,
    without_userinfo,
};
use crate::agent::AgentSettings;
use crate::eval::EvalMode;
use crate::executor::ShellSettings;
use crate::executor::sandbox::SandboxMode;
use crate::llm::LlmConfig;
use crate::units::as_human;

/// Options given on the command line or in the environment (the layer above the file).
#[derive(Debug, Default, Clone)]
pub(crate) struct RunOverrides {
    /// Task files and folders.
    pub(crate) paths: Vec<PathBuf>,
    /// `--out`.
    pub(crate) out: Option<PathBuf>,
    /// `--name`.
    pub(crate) name: Option<String>,
    /// `--jobs`.
    pub(crate) jobs: Option<usize>,
    /// `--timeout`.
    pub(crate) timeout: Option<String>,
    /// `--max-steps`.
    pub(crate) max_steps: Option<u32>,
    /// `--max-rounds`.
    pub(crate) max_rounds: Option<u32>,
    /// `--eval`.
    pub(crate) eval: Option<EvalMode>,
    /// `--command-timeout`.
    pub(crate) command_timeout: Option<String>,
    /// `--fresh`.
    pub(crate) fresh: bool,
    /// `--rerun-failed`.
    pub(crate) rerun_failed: bool,
    /// `--model` (env `UFO_BATCH_MODEL`).
    pub(crate) model: Option<String>,
    /// `--llm-base-url` (env `OPENAI_BASE_URL`).
    pub(crate) llm_base_url: Option<String>,
    /// `--max-cost`.
    pub(crate) max_cost: Option<f64>,
    /// `--request`: requests to run without a file.
    pub(crate) requests: Vec<String>,
    /// `--sandbox`.
    pub(crate) sandbox: Option<SandboxMode>,
    /// `--retries`.
    pub(crate) retries: Option<u32>,
    /// `--max-fail` (`--fail-fast` is 1).
    pub(crate) max_fail: Option<u32>,
    /// `--shard I/N`.
    pub(crate) shard: Option<String>,
    /// `--shards N`.
    pub(crate) shards: Option<u32>,
    /// `--grace`.
    pub(crate) grace: Option<String>,
    /// `--repeat`.
    pub(crate) repeat: Option<u32>,
}

/// What to do with results already in the run dir.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum ResumeMode {
    /// Skip tasks that already have a final result.
    Resume,
    /// Skip only tasks that passed.
    RerunFailed,
    /// Delete the run dir's results and start over.
    Fresh,
}

/// The resolved configuration of `ufo-batch run`.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct RunConfig {
    /// Task files and folders, as given.
    pub(crate) paths: Vec<PathBuf>,
    /// Results root.
    pub(crate) out_root: PathBuf,
    /// The run's name (its folder under `out_root`).
    pub(crate) run_name: String,
    /// `out_root/run_name`.
    pub(crate) run_dir: PathBuf,
    /// Sessions at once.
    pub(crate) jobs: NonZeroUsize,
    /// Per-task wall-clock limit, unless the task sets its own.
    #[serde(serialize_with = "as_human")]
    pub(crate) timeout: Duration,
    /// Step limit, unless the task sets its own (default: 50, or a plan's length).
    pub(crate) max_steps: Option<u32>,
    /// Round limit (follower sessions always get enough for their steps).
    pub(crate) max_rounds: Option<u32>,
    /// Evaluation mode.
    pub(crate) eval: EvalMode,
    /// What to do with earlier results.
    pub(crate) resume: ResumeMode,
    /// Command execution settings.
    #[serde(skip)]
    pub(crate) shell: ShellSettings,
    /// The LLM, when a model is configured.
    pub(crate) llm: Option<LlmConfig>,
    /// LLM agent settings.
    pub(crate) agent: AgentSettings,
    /// Stop scheduling once the run's LLM spend reaches this many USD.
    pub(crate) max_cost: Option<f64>,
    /// Requests given with `--request`.
    pub(crate) requests: Vec<String>,
    /// How commands are to be confined (resolved against the machine at run start).
    pub(crate) sandbox: SandboxMode,
    /// Retries after an infrastructure error.
    pub(crate) retries: u32,
    /// First delay before a retry; doubles, with jitter.
    #[serde(serialize_with = "as_human")]
    pub(crate) retry_delay: Duration,
    /// Stop scheduling after this many tasks did not pass.
    pub(crate) max_fail: Option<u32>,
    /// The shard this machine runs.
    pub(crate) shard: Option<crate::shard::Shard>,
    /// How long running tasks may finish after Ctrl-C / SIGTERM.
    #[serde(serialize_with = "as_human")]
    pub(crate) grace: Duration,
    /// Runs per task (`--repeat`); 1 without repeats.
    pub(crate) repeat: Option<u32>,
    /// The config file that was read, if any.
    pub(crate) config_file: Option<PathBuf>,
}

impl RunConfig {
    /// Merges flags/env over the file over defaults, and validates the result.
    pub(crate) fn resolve(
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
    pub(crate) fn to_json(&self) -> serde_json::Value {
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
