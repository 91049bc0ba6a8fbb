//! Settings built from the config file's sections (with the flags that override them):
//! command execution, the LLM, LLM agents, the sandbox's resource limits, and the
//! options that only make sense with an LLM.

use super::ConfigError;
use super::file::{AgentSection, ExecutorSection, LlmSection, SandboxSection};
use super::values::{
    MAX_JOBS, MAX_OUTPUT_LIMIT, MAX_RETRIES, MAX_STEPS, at_most, counted, duration_option, layered,
};
use crate::agent::AgentSettings;
use crate::eval::EvalMode;
use crate::executor::sandbox::Sandbox;
use crate::executor::{ResourceLimits, ShellSettings};
use crate::llm::LlmConfig;
use crate::units::{parse_duration, parse_size};

pub(super) fn shell_settings(
    command_timeout: Option<String>,
    file: ExecutorSection,
) -> Result<ShellSettings, ConfigError> {
    let defaults = ShellSettings::default();
    let command_timeout = duration_option(layered(
        "--command-timeout",
        "[executor] command_timeout in the config file",
        command_timeout,
        file.command_timeout,
    ))?
    .unwrap_or(defaults.command_timeout);
    let max_command_timeout = match duration_option(
        file.max_command_timeout
            .map(|t| (t, "[executor] max_command_timeout in the config file")),
    )? {
        // A cap below the default it caps is a contradiction: say so rather than pick.
        Some(max) if max < command_timeout => {
            return Err(ConfigError::Invalid(format!(
                "[executor] max_command_timeout ({}) is below the command timeout ({}): a command could not even have the default; raise it or lower command_timeout",
                humantime::format_duration(max),
                humantime::format_duration(command_timeout)
            )));
        }
        Some(max) => max,
        // The default cap never lowers a command timeout chosen above it.
        None => defaults.max_command_timeout.max(command_timeout),
    };
    let output_limit = file.output_limit.unwrap_or(defaults.output_limit);
    if !(1024..=MAX_OUTPUT_LIMIT).contains(&output_limit) {
        return Err(ConfigError::Invalid(format!(
            "[executor] output_limit must be from 1024 bytes to {} MiB",
            MAX_OUTPUT_LIMIT >> 20
        )));
    }
    Ok(ShellSettings {
        command_timeout,
        max_command_timeout,
        output_limit,
        sandbox: Sandbox::none(),
        limits: ResourceLimits::default(),
    })
}

pub(super) fn llm_config(
    model: Option<String>,
    base_url: Option<String>,
    max_connections: Option<usize>,
    jobs: usize,
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
    c.max_tokens = at_most(f.max_tokens, "[llm] max_tokens", 10_000_000)?.unwrap_or(c.max_tokens);
    c.max_tokens_field = f.max_tokens_field.unwrap_or(c.max_tokens_field);
    c.response_format = f.response_format.unwrap_or(c.response_format);
    let named = |t: Option<String>, name| t.map(|t| (t, name));
    c.timeout = duration_option(named(f.timeout, "[llm] timeout"))?.unwrap_or(c.timeout);
    c.max_retries =
        at_most(f.max_retries, "[llm] max_retries", MAX_RETRIES)?.unwrap_or(c.max_retries);
    c.retry_base =
        duration_option(named(f.retry_base, "[llm] retry_base"))?.unwrap_or(c.retry_base);
    c.retry_max = duration_option(named(f.retry_max, "[llm] retry_max"))?.unwrap_or(c.retry_max);
    // Each session makes one call at a time, so --jobs bounds the calls already.
    c.max_connections = counted(
        layered(
            "--max-connections",
            "[llm] max_connections in the config file",
            max_connections,
            f.max_connections,
        ),
        MAX_JOBS,
    )?
    .unwrap_or(jobs);
    c.adaptive = f.adaptive.unwrap_or(c.adaptive);
    c.give_up_after =
        duration_option(named(f.give_up_after, "[llm] give_up_after"))?.unwrap_or(c.give_up_after);
    for (model, price) in &f.prices {
        for (side, usd) in [("input", price.input), ("output", price.output)] {
            if !usd.is_finite() || usd < 0.0 {
                return Err(ConfigError::Invalid(format!(
                    "[llm.prices.\"{model}\"] {side} is {usd}: a price is USD per 1k tokens, 0 or more"
                )));
            }
        }
    }
    c.prices = f.prices;
    Ok(Some(c))
}

/// The agents' settings from `[agent]`, and from `[llm]` whether to send screenshots
/// (`vision`) and how large (`image_max_side`).
pub(super) fn agent_settings(
    f: AgentSection,
    (vision, image_max_side): (Option<bool>, Option<u32>),
) -> Result<AgentSettings, ConfigError> {
    let d = AgentSettings::default();
    let image_max_side = image_max_side.unwrap_or(d.image_max_side);
    if !(64..=8192).contains(&image_max_side) {
        return Err(ConfigError::Invalid(
            "[llm] image_max_side must be from 64 to 8192 pixels".into(),
        ));
    }
    let observation_limit = f.observation_limit.unwrap_or(d.observation_limit);
    if !(200..=MAX_OUTPUT_LIMIT).contains(&observation_limit) {
        return Err(ConfigError::Invalid(format!(
            "[agent] observation_limit must be from 200 to {} characters",
            MAX_OUTPUT_LIMIT
        )));
    }
    let reply_retries = at_most(f.reply_retries, "[agent] reply_retries", MAX_RETRIES)?;
    let history_steps = at_most(f.history_steps, "[agent] history_steps", MAX_STEPS)?;
    let judge_screenshots = f.judge_screenshots.unwrap_or(d.judge_screenshots);
    if judge_screenshots > 40 {
        return Err(ConfigError::Invalid(
            "[agent] judge_screenshots is at most 40 (UFO's bound)".into(),
        ));
    }
    Ok(AgentSettings {
        observation_limit,
        reply_retries: reply_retries.unwrap_or(d.reply_retries),
        confirm: f.confirm.unwrap_or(d.confirm),
        history_steps: history_steps.unwrap_or(d.history_steps),
        vision: vision.unwrap_or(d.vision),
        image_max_side,
        judge_screenshots,
    })
}

/// Options that only make sense with an LLM, checked before anything runs: a budget
/// needs the price of every model the run calls (the LLM's and the operator's).
pub(super) fn check_llm_needs(
    eval: EvalMode,
    max_cost: Option<f64>,
    llm: Option<&LlmConfig>,
    operator: Option<&LlmConfig>,
) -> Result<(), ConfigError> {
    if matches!(eval, EvalMode::Llm | EvalMode::Both) && llm.is_none() {
        let mode = if eval == EvalMode::Llm { "llm" } else { "both" };
        return Err(ConfigError::Invalid(format!(
            "--eval {mode} needs an LLM: give --model"
        )));
    }
    if let Some(max) = max_cost {
        if !(max.is_finite() && max > 0.0) {
            return Err(ConfigError::Invalid(
                "--max-cost must be a positive number of USD".into(),
            ));
        }
        if llm.is_none() && operator.is_none() {
            return Err(ConfigError::Invalid(
                "--max-cost limits LLM spend, but no LLM is configured (--model)".into(),
            ));
        }
        for model in llm.into_iter().chain(operator) {
            if model.price().is_none() {
                return Err(ConfigError::Invalid(format!(
                    "--max-cost needs the price of {m:?}: add [llm.prices.\"{m}\"] with input and \
                     output (USD per 1k tokens) to ufo-batch.toml",
                    m = model.model
                )));
            }
        }
    }
    Ok(())
}

/// The smallest address-space limit accepted.
const MIN_MEMORY: u64 = 64 << 20;

/// Per-process limits: 8 GiB of address space and 10 minutes of CPU unless set.
pub(crate) fn resource_limits(f: &SandboxSection) -> Result<ResourceLimits, ConfigError> {
    let memory_bytes = match f.memory.as_deref() {
        None => Some(8 << 30),
        Some(text) => {
            parse_size(text).map_err(|e| ConfigError::Invalid(format!("[sandbox] memory: {e}")))?
        }
    };
    // Below this a shell cannot even start, and every task would end `failed` (killed
    // by a signal): a verdict on the limit, not on the task, kept on resume.
    if let Some(bytes) = memory_bytes.filter(|b| *b < MIN_MEMORY) {
        return Err(ConfigError::Invalid(format!(
            "[sandbox] memory: {bytes} bytes is too little for any command to start (at least {} MiB, or \"none\")",
            MIN_MEMORY >> 20
        )));
    }
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
