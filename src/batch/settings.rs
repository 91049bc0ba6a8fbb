//! What a batch runs with: the resolved options of `ufo-batch run`, as domain types.
//! `config` builds it from flags, environment and file; nothing here parses text.

use std::num::NonZeroUsize;
use std::path::PathBuf;
use std::time::Duration;

use serde::Serialize;

use crate::agent::AgentSettings;
use crate::eval::EvalMode;
use crate::executor::sandbox::SandboxMode;
use crate::executor::{DesktopSettings, ShellSettings};
use crate::llm::LlmConfig;
use crate::mcp::{McpServer, Transport};
use crate::rundir::ResumeMode;
use crate::text::without_userinfo;
use crate::units::as_human;

/// The resolved configuration of `ufo-batch run`: everything a batch needs, as
/// domain types (built by `config::resolve`).
#[derive(Clone, Debug, Serialize)]
pub(crate) struct RunSettings {
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
    /// Desktop task settings.
    #[serde(skip)]
    pub(crate) desktop: DesktopSettings,
    /// The LLM, when a model is configured.
    pub(crate) llm: Option<LlmConfig>,
    /// LLM agent settings.
    pub(crate) agent: AgentSettings,
    /// The MCP servers (shown in `run.json` without their secrets).
    #[serde(skip)]
    pub(crate) mcp: Vec<McpServer>,
    /// UFO's device clients as the run's workers, when `--devices` is given.
    #[serde(skip)]
    pub(crate) devices: Option<crate::device::DeviceSettings>,
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
    /// Saving and retrieving experience (shown in `run.json` only when used).
    #[serde(skip_serializing_if = "unused")]
    pub(crate) experience: crate::experience::ExperienceSettings,
    /// The config file that was read, if any.
    pub(crate) config_file: Option<PathBuf>,
    /// The session mode of tasks that set none (`--mode`, `[run] mode`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) mode: Option<crate::task::SessionMode>,
    /// The operator's settings and endpoint (`[operator]`, or the LLM's), when an
    /// operator can run (shown in `run.json` by `to_json`).
    #[serde(skip)]
    pub(crate) operator: Option<(crate::agent::OperatorSettings, LlmConfig)>,
    /// Where OSWorld's parts are, for OSWorld's task files.
    #[serde(skip_serializing_if = "crate::osworld::OsWorldSettings::is_unset")]
    pub(crate) osworld: crate::osworld::OsWorldSettings,
}

impl RunSettings {
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
        if !self.mcp.is_empty() {
            v["mcp"] = self.mcp.iter().map(server_json).collect();
        }
        if let Some((operator, llm)) = &self.operator {
            v["operator"] = operator_json(operator, llm);
        }
        v
    }
}

/// The operator's settings as `run.json` shows them: the provider, model, tool or
/// format and server, and where the key comes from.
fn operator_json(o: &crate::agent::OperatorSettings, llm: &LlmConfig) -> serde_json::Value {
    let key = if std::env::var_os(&llm.api_key_env).is_some() {
        "set"
    } else {
        "not set"
    };
    serde_json::json!({
        "provider": o.provider.name(),
        "model": llm.model,
        "base_url": without_userinfo(&llm.base_url),
        "tool": o.provider.version(),
        "keep_screenshots": o.keep_screenshots,
        "safety_checks": o.safety_checks,
        "scaler": o.scaler.map(|(w, h)| [w, h]),
        "api_key": format!("{key} (from ${})", llm.api_key_env),
    })
}

fn unused(e: &crate::experience::ExperienceSettings) -> bool {
    !e.is_used()
}

/// A server as `run.json` shows it: where it is and what it is allowed, with the names
/// of injected arguments and headers but never their values.
pub(super) fn server_json(s: &McpServer) -> serde_json::Value {
    let mut v = serde_json::json!({
        "name": s.name,
        "transport": s.kind(),
        "timeout": humantime::format_duration(s.timeout).to_string(),
        "tools": s.tools,
        "inject": s.inject.iter().map(|i| i.argument.as_str()).collect::<Vec<_>>(),
    });
    match &s.transport {
        Transport::Stdio {
            command,
            args,
            cwd,
            env,
        } => {
            v["command"] = command.as_str().into();
            v["args"] = args.clone().into();
            v["cwd"] = cwd.clone().into();
            v["env"] = env
                .iter()
                .map(|(k, _)| k.as_str())
                .collect::<Vec<_>>()
                .into();
        }
        Transport::Http { url, headers } => {
            v["url"] = without_userinfo(url).into();
            v["headers"] = headers
                .iter()
                .map(|(k, _)| k.as_str())
                .collect::<Vec<_>>()
                .into();
        }
    }
    v
}
