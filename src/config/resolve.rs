//! Resolving a run's configuration: flags and environment over the file over defaults,
//! validated into the batch's `RunSettings`, whose values are domain types.

use std::num::NonZeroUsize;
use std::path::PathBuf;
use std::time::Duration;

use super::ConfigError;
use super::experience::experience_settings;
use super::file::{ConfigFile, RunSection};
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
    /// `--suite`: OSWorld suites, run as their tasks.
    pub(crate) suites: Vec<PathBuf>,
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
    /// `--mode`.
    pub(crate) mode: Option<crate::task::SessionMode>,
    /// `--osworld-cache`.
    pub(crate) osworld_cache: Option<PathBuf>,
}

/// How the config file's `jobs` is named in messages.
const FILE_JOBS: &str = "[run] jobs in the config file";

/// Merges flags/env over the file over defaults, and validates the result.
pub(crate) fn resolve(
    mut o: RunOverrides,
    mut file: ConfigFile,
    config_file: Option<PathBuf>,
) -> Result<RunSettings, ConfigError> {
    for suite in std::mem::take(&mut o.suites) {
        if !crate::task::osworld::suite::is_suite(&suite) {
            return Err(ConfigError::Invalid(format!(
                "--suite {} is not an OSWorld suite ({{\"<domain>\": [\"<task id>\", ...]}} beside an examples/ folder)",
                suite.display()
            )));
        }
        o.paths.push(suite);
    }
    check_what_to_run(&o)?;
    let out_root = o
        .out
        .take()
        .or(file.run.out.take())
        .unwrap_or_else(|| PathBuf::from("results"));
    let shard = shard(o.shard.take(), o.shards)?;
    let run_name = run_name(o.name.take(), &o, shard.as_ref())?;
    let pace = Pace::resolve(&mut o, &mut file.run)?;
    let eval = mode(o.eval, file.run.eval.as_deref(), "[run] eval")?.unwrap_or(EvalMode::Auto);
    let sandbox = mode(o.sandbox, file.sandbox.mode.as_deref(), "[sandbox] mode")?
        .unwrap_or(SandboxMode::Auto);
    let mut shell = shell_settings(o.command_timeout.take(), file.executor)?;
    shell.limits = resource_limits(&file.sandbox)?;
    let vision = (file.llm.vision, file.llm.image_max_side);
    // The prices serve the operator's model too, with or without an LLM of the run's.
    let prices = file.llm.prices.clone();
    let llm = llm_config(
        o.model.take(),
        o.llm_base_url.take(),
        o.max_connections,
        pace.jobs.get(),
        file.llm,
    )?;
    let agent = agent_settings(file.agent, vision)?;
    let operator = super::operator::operator_settings(
        file.operator.take(),
        llm.as_ref(),
        &prices,
        pace.jobs.get(),
    )?;
    let mode = mode_of(o.mode, file.run.mode.as_deref())?;
    if mode.is_some_and(crate::task::SessionMode::operates) && o.devices.is_some() {
        return Err(ConfigError::Invalid(
            "mode operator and normal_operator (--mode, [run] mode) run on the runner's own desktops, not on --devices (UFO's device clients have no computer-use tools)".into(),
        ));
    }
    let experience = experience_settings(o.experience, file.experience, &out_root)?;
    let osworld = crate::osworld::OsWorldSettings {
        cache: o.osworld_cache.take().or(file.osworld.cache),
        python: file.osworld.python,
        server: file.osworld.server,
    };
    if let Some(cache) = &osworld.cache
        && !cache.is_dir()
    {
        return Err(ConfigError::Invalid(format!(
            "OSWorld's cache folder {} (--osworld-cache, [osworld] cache) is not a folder",
            cache.display()
        )));
    }
    check_llm_needs(
        eval,
        o.max_cost,
        llm.as_ref(),
        operator.as_ref().map(|(_, endpoint)| endpoint),
    )?;
    let env = |v: &str| std::env::var(v).ok();
    Ok(RunSettings {
        run_dir: out_root.join(&run_name),
        paths: o.paths,
        out_root,
        run_name,
        jobs: pace.jobs,
        timeout: pace.timeout,
        max_steps: pace.max_steps,
        max_rounds: pace.max_rounds,
        eval,
        resume: resume_mode(o.fresh, o.rerun_failed),
        shell,
        desktop: crate::executor::DesktopSettings {
            save_ui_tree: o.save_ui_tree,
            ..Default::default()
        },
        llm,
        agent,
        mcp: crate::mcp::servers(file.mcp, env).map_err(|e| ConfigError::Invalid(e.to_string()))?,
        devices: crate::device::DeviceSettings::resolve(
            o.devices,
            o.devices_wait,
            file.devices,
            &env,
        )
        .map_err(|e| ConfigError::Invalid(e.to_string()))?,
        max_cost: o.max_cost,
        requests: o.requests,
        sandbox,
        retries: pace.retries,
        retry_delay: pace.retry_delay,
        max_fail: pace.max_fail,
        shard,
        grace: pace.grace,
        repeat: pace.repeat,
        experience,
        config_file,
        mode,
        operator,
        osworld,
    })
}

/// `--mode`, else `[run] mode`.
fn mode_of(
    flag: Option<crate::task::SessionMode>,
    file: Option<&str>,
) -> Result<Option<crate::task::SessionMode>, ConfigError> {
    match (flag, file) {
        (Some(m), _) => Ok(Some(m)),
        (None, Some(text)) => text
            .parse()
            .map(Some)
            .map_err(|e| ConfigError::Invalid(format!("[run] mode: {e}"))),
        (None, None) => Ok(None),
    }
}

/// A mode given as a flag, else named in the config file's `key`.
fn mode<M: std::str::FromStr>(
    flag: Option<M>,
    file: Option<&str>,
    key: &str,
) -> Result<Option<M>, ConfigError>
where
    M::Err: std::fmt::Display,
{
    match (flag, file) {
        (Some(mode), _) => Ok(Some(mode)),
        (None, Some(text)) => text
            .parse()
            .map(Some)
            .map_err(|e| ConfigError::Invalid(format!("{key}: {e}"))),
        (None, None) => Ok(None),
    }
}

/// Refuses a run with nothing to run, or with resume modes that exclude each other.
fn check_what_to_run(o: &RunOverrides) -> Result<(), ConfigError> {
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
    Ok(())
}

/// `--shard I/N`, or `--shards N` with the index from the scheduler's environment.
fn shard(
    text: Option<String>,
    count: Option<u32>,
) -> Result<Option<crate::shard::Shard>, ConfigError> {
    Ok(match (text, count) {
        (Some(text), _) => Some(crate::shard::Shard::parse(&text)?),
        (None, Some(n)) => Some(crate::shard::Shard::from_env(n, |v| std::env::var(v).ok())?),
        (None, None) => None,
    })
}

/// The run dir's name: `--name`, else from the first path or the requests; a shard's
/// name says which shard it is.
fn run_name(
    name: Option<String>,
    o: &RunOverrides,
    shard: Option<&crate::shard::Shard>,
) -> Result<String, ConfigError> {
    let base = match (name, o.paths.first()) {
        (Some(name), _) => name,
        (None, Some(path)) => default_run_name(path)?,
        (None, None) => request_run_name(&o.requests),
    };
    // Shards of one batch must not share a run dir, even under a name given with
    // `--name`; `merge` joins them.
    let run_name = match shard {
        Some(s) => format!("{base}-shard-{}-of-{}", s.index + 1, s.count),
        None => base,
    };
    check_run_name(&run_name)?;
    Ok(run_name)
}

/// How the run goes on: how many at once, how long, how often again, when it stops.
struct Pace {
    jobs: NonZeroUsize,
    timeout: Duration,
    max_steps: Option<u32>,
    max_rounds: Option<u32>,
    retry_delay: Duration,
    grace: Duration,
    max_fail: Option<u32>,
    retries: u32,
    repeat: Option<u32>,
}

impl Pace {
    /// The `[run]` limits, flags over the file over defaults.
    fn resolve(o: &mut RunOverrides, run: &mut RunSection) -> Result<Self, ConfigError> {
        let jobs = counted(layered("--jobs", FILE_JOBS, o.jobs, run.jobs), MAX_JOBS)?
            .and_then(NonZeroUsize::new)
            .unwrap_or_else(|| NonZeroUsize::new(default_jobs()).unwrap_or(NonZeroUsize::MIN));
        let timeout = duration_option(layered(
            "--timeout",
            "[run] timeout in the config file",
            o.timeout.take(),
            run.timeout.take(),
        ))?
        .unwrap_or(Duration::from_secs(600));
        let max_steps = counted(
            layered(
                "--max-steps",
                "[run] max_steps in the config file",
                o.max_steps,
                run.max_steps,
            ),
            MAX_STEPS,
        )?;
        let max_rounds = counted(
            layered(
                "--max-rounds",
                "[run] max_rounds in the config file",
                o.max_rounds,
                run.max_rounds,
            ),
            MAX_STEPS,
        )?;
        let retry_delay = duration_option(
            run.retry_delay
                .take()
                .map(|t| (t, "[run] retry_delay in the config file")),
        )?
        .unwrap_or(Duration::from_secs(2));
        let grace = duration_option(layered(
            "--grace",
            "[run] grace in the config file",
            o.grace.take(),
            run.grace.take(),
        ))?
        .unwrap_or(Duration::from_secs(30));
        let max_fail = nonzero(layered(
            "--max-fail",
            "[run] max_fail in the config file",
            o.max_fail,
            run.max_fail,
        ))?;
        let retries = retries(layered(
            "--retries",
            "[run] retries in the config file",
            o.retries,
            run.retries,
        ))?;
        let repeat = counted(o.repeat.map(|n| (n, "--repeat")), MAX_REPEAT)?;
        Ok(Pace {
            jobs,
            timeout,
            max_steps,
            max_rounds,
            retry_delay,
            grace,
            max_fail,
            retries,
            repeat,
        })
    }
}

/// Which earlier results a run keeps.
fn resume_mode(fresh: bool, rerun_failed: bool) -> ResumeMode {
    if fresh {
        ResumeMode::Fresh
    } else if rerun_failed {
        ResumeMode::RerunFailed
    } else {
        ResumeMode::Resume
    }
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
