//! Resolving a run's configuration: flags and environment over the file over defaults,
//! validated into the batch's `RunSettings`, whose values are domain types.

use std::num::NonZeroUsize;
use std::path::PathBuf;
use std::time::Duration;

use super::ConfigError;
use super::experience::experience_settings;
use super::file::ConfigFile;
use super::sections::{
    agent_settings, check_llm_needs, llm_config, resource_limits, shell_settings,
};
use super::values::{
    MAX_JOBS, MAX_REPEAT, MAX_RETRIES, MAX_STEPS, check_run_name, counted, default_jobs,
    default_run_name, duration_option, layered, nonzero, request_run_name,
};
use crate::batch::RunSettings;
use crate::eval::EvalMode;
use crate::executor::sandbox::SandboxMode;
use crate::rundir::ResumeMode;

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
    /// Save each desktop step's UI tree.
    pub(crate) save_ui_tree: bool,
    /// `--model` (env `UFO_BATCH_MODEL`).
    pub(crate) model: Option<String>,
    /// `--llm-base-url` (env `OPENAI_BASE_URL`).
    pub(crate) llm_base_url: Option<String>,
    /// `--max-cost`.
    pub(crate) max_cost: Option<f64>,
    /// `--max-connections`.
    pub(crate) max_connections: Option<usize>,
    /// `--devices`.
    pub(crate) devices: Option<String>,
    /// `--devices-wait`.
    pub(crate) devices_wait: Option<usize>,
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
    /// `--save-experience`, `--experience`, ...
    pub(crate) experience: super::ExperienceFlags,
}

/// How the config file's `jobs` is named in messages.
const FILE_JOBS: &str = "[run] jobs in the config file";

/// Merges flags/env over the file over defaults, and validates the result.
pub(crate) fn resolve(
    o: RunOverrides,
    file: ConfigFile,
    config_file: Option<PathBuf>,
) -> Result<RunSettings, ConfigError> {
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
        (Some(text), _) => Some(crate::shard::Shard::parse(&text)?),
        (None, Some(n)) => Some(crate::shard::Shard::from_env(n, |v| std::env::var(v).ok())?),
        (None, None) => None,
    };
    let base = match (o.name, o.paths.first()) {
        (Some(name), _) => name,
        (None, Some(path)) => default_run_name(path)?,
        (None, None) => request_run_name(&o.requests),
    };
    // Shards of one batch must not share a run dir, even under a name given with
    // `--name`; `merge` joins them.
    let run_name = match &shard {
        Some(s) => format!("{base}-shard-{}-of-{}", s.index + 1, s.count),
        None => base,
    };
    check_run_name(&run_name)?;
    let jobs = counted(
        layered("--jobs", FILE_JOBS, o.jobs, file.run.jobs),
        MAX_JOBS,
    )?
    .and_then(NonZeroUsize::new)
    .unwrap_or_else(|| NonZeroUsize::new(default_jobs()).unwrap_or(NonZeroUsize::MIN));
    let timeout = duration_option(layered(
        "--timeout",
        "[run] timeout in the config file",
        o.timeout,
        file.run.timeout,
    ))?
    .unwrap_or(Duration::from_secs(600));
    let eval = match (o.eval, file.run.eval) {
        (Some(mode), _) => mode,
        (None, Some(text)) => text
            .parse()
            .map_err(|e| ConfigError::Invalid(format!("[run] eval: {e}")))?,
        (None, None) => EvalMode::Auto,
    };
    let max_steps = counted(
        layered(
            "--max-steps",
            "[run] max_steps in the config file",
            o.max_steps,
            file.run.max_steps,
        ),
        MAX_STEPS,
    )?;
    let max_rounds = counted(
        layered(
            "--max-rounds",
            "[run] max_rounds in the config file",
            o.max_rounds,
            file.run.max_rounds,
        ),
        MAX_STEPS,
    )?;
    let sandbox = match (o.sandbox, &file.sandbox.mode) {
        (Some(mode), _) => mode,
        (None, Some(text)) => text
            .parse()
            .map_err(|e| ConfigError::Invalid(format!("[sandbox] mode: {e}")))?,
        (None, None) => SandboxMode::Auto,
    };
    let retry_delay = duration_option(
        file.run
            .retry_delay
            .map(|t| (t, "[run] retry_delay in the config file")),
    )?
    .unwrap_or(Duration::from_secs(2));
    let grace = duration_option(layered(
        "--grace",
        "[run] grace in the config file",
        o.grace,
        file.run.grace,
    ))?
    .unwrap_or(Duration::from_secs(30));
    let max_fail = nonzero(layered(
        "--max-fail",
        "[run] max_fail in the config file",
        o.max_fail,
        file.run.max_fail,
    ))?;
    let mut shell = shell_settings(o.command_timeout, file.executor)?;
    shell.limits = resource_limits(&file.sandbox)?;
    let vision = (file.llm.vision, file.llm.image_max_side);
    let llm = llm_config(
        o.model,
        o.llm_base_url,
        o.max_connections,
        jobs.get(),
        file.llm,
    )?;
    let agent = agent_settings(file.agent, vision)?;
    let experience = experience_settings(o.experience, file.experience, &out_root)?;
    check_llm_needs(eval, o.max_cost, llm.as_ref())?;
    let resume = if o.fresh {
        ResumeMode::Fresh
    } else if o.rerun_failed {
        ResumeMode::RerunFailed
    } else {
        ResumeMode::Resume
    };
    Ok(RunSettings {
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
        desktop: crate::executor::DesktopSettings {
            save_ui_tree: o.save_ui_tree,
            ..Default::default()
        },
        llm,
        agent,
        mcp: crate::mcp::servers(file.mcp, |v| std::env::var(v).ok())
            .map_err(|e| ConfigError::Invalid(e.to_string()))?,
        devices: crate::device::DeviceSettings::resolve(
            o.devices,
            o.devices_wait,
            file.devices,
            &|v| std::env::var(v).ok(),
        )
        .map_err(|e| ConfigError::Invalid(e.to_string()))?,
        max_cost: o.max_cost,
        requests: o.requests,
        sandbox,
        retries: retries(layered(
            "--retries",
            "[run] retries in the config file",
            o.retries,
            file.run.retries,
        ))?,
        retry_delay,
        max_fail,
        shard,
        grace,
        repeat: counted(o.repeat.map(|n| (n, "--repeat")), MAX_REPEAT)?,
        experience,
        config_file,
    })
}

/// `--retries`: from 0 to [`MAX_RETRIES`].
fn retries(value: Option<(u32, &str)>) -> Result<u32, ConfigError> {
    match value {
        Some((n, name)) if n > MAX_RETRIES => Err(ConfigError::Invalid(format!(
            "{name} {n} is too large: it may be at most {MAX_RETRIES}"
        ))),
        value => Ok(value.map_or(0, |(n, _)| n)),
    }
}
