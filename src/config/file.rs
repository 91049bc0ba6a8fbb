//! The config file, `ufo-batch.toml`: its sections and keys as written, every key
//! optional, unknown keys refused with their position. Meaning comes in `resolve`.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::ConfigError;
use crate::agent::ConfirmPolicy;
use crate::llm::{ApiType, MaxTokensField, Price, ResponseFormat};

/// The config file read when `--config` is not given, if it exists.
pub(crate) const DEFAULT_CONFIG_FILE: &str = "ufo-batch.toml";
/// The largest config file read.
const MAX_CONFIG: u64 = 4 << 20;

/// `ufo-batch.toml`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ConfigFile {
    /// `[run]`: how the batch runs.
    #[serde(default)]
    pub(crate) run: RunSection,
    /// `[executor]`: how commands run.
    #[serde(default)]
    pub(crate) executor: ExecutorSection,
    /// `[llm]`: the model server.
    #[serde(default)]
    pub(crate) llm: LlmSection,
    /// `[agent]`: how LLM agents behave.
    #[serde(default)]
    pub(crate) agent: AgentSection,
    /// `[sandbox]`: how commands are confined.
    #[serde(default)]
    pub(crate) sandbox: SandboxSection,
    /// `[mcp]`: MCP tool servers (`[[mcp.servers]]`).
    #[serde(default)]
    pub(crate) mcp: crate::mcp::McpSection,
    /// `[devices]`: UFO's device clients as workers.
    #[serde(default)]
    pub(crate) devices: crate::device::DevicesSection,
    /// `[experience]`: saving and retrieving experience.
    #[serde(default)]
    pub(crate) experience: super::experience::ExperienceSection,
    /// `[operator]`: the computer-use model of operator sessions.
    #[serde(default)]
    pub(crate) operator: Option<OperatorSection>,
    /// `[osworld]`: OSWorld's parts, for OSWorld's task files.
    #[serde(default)]
    pub(crate) osworld: OsWorldSection,
}

/// `[osworld]` of the config file: where OSWorld's parts are.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct OsWorldSection {
    /// OSWorld's cache folder (`<task id>/<file>`).
    pub(crate) cache: Option<PathBuf>,
    /// The Python of a venv with OSWorld's code (`desktop-env`) and its server's packages.
    pub(crate) python: Option<PathBuf>,
    /// OSWorld's server folder (`desktop_env/server`).
    pub(crate) server: Option<PathBuf>,
}

/// `[operator]` of the config file: how operator sessions reach their model.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct OperatorSection {
    /// `openai` (the Responses API), `anthropic` (the Messages API) or `chat` (chat
    /// completions, in an action format).
    pub(crate) provider: Option<String>,
    /// The server root: OpenAI's and chat's `/v1` root; Anthropic's host root.
    pub(crate) base_url: Option<String>,
    /// The model.
    pub(crate) model: Option<String>,
    /// The environment variable that holds the key.
    pub(crate) api_key_env: Option<String>,
    /// `openai` or `azure` (Azure's `api-key` header and paths).
    pub(crate) api_type: Option<ApiType>,
    /// Azure's `api-version`.
    pub(crate) api_version: Option<String>,
    /// The computer tool's version (`computer`, `computer_use_preview`,
    /// `computer_toolset_20260801`, `computer_20251124`).
    pub(crate) tool: Option<String>,
    /// A chat model's action format (`ui-tars-1.5`, `qwen2.5-vl`, ...).
    pub(crate) format: Option<String>,
    /// The preview tool's environment (`linux`, `windows`, `mac`, `ubuntu`, `browser`).
    pub(crate) environment: Option<String>,
    /// Screenshots a conversation sends again (Anthropic's and chat's).
    pub(crate) keep_screenshots: Option<u32>,
    /// `acknowledge` or `refuse` a provider's safety checks.
    pub(crate) safety_checks: Option<crate::agent::SafetyPolicy>,
    /// UFO's `SCALER`: `[width, height]` of the letterboxed screenshot.
    pub(crate) scaler: Option<[u32; 2]>,
    /// Token limit per reply.
    pub(crate) max_tokens: Option<u32>,
    /// Per-request timeout (`"120s"`).
    pub(crate) timeout: Option<String>,
    /// Retries after transient failures.
    pub(crate) max_retries: Option<u32>,
}

/// `[sandbox]` of the config file.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SandboxSection {
    /// `auto`, `landlock`, `bwrap` or `none`.
    pub(crate) mode: Option<String>,
    /// Address-space limit per process (`"4GiB"`, `"512M"`, `"none"`).
    pub(crate) memory: Option<String>,
    /// CPU-time limit per process (`"10m"`, `"none"`).
    pub(crate) cpu: Option<String>,
}

/// `[llm]` of the config file; every key is optional.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct LlmSection {
    /// Server root (`https://api.openai.com/v1`, `http://127.0.0.1:8080/v1`, ...).
    pub(crate) base_url: Option<String>,
    /// Model name (Azure: the deployment).
    pub(crate) model: Option<String>,
    /// `openai` or `azure`.
    pub(crate) api_type: Option<ApiType>,
    /// Azure's `api-version`.
    pub(crate) api_version: Option<String>,
    /// The environment variable that holds the key.
    pub(crate) api_key_env: Option<String>,
    /// Sampling temperature.
    pub(crate) temperature: Option<f64>,
    /// Token limit per reply.
    pub(crate) max_tokens: Option<u32>,
    /// `max_tokens`, `max_completion_tokens` or `none`.
    pub(crate) max_tokens_field: Option<MaxTokensField>,
    /// `none`, `json_object` or `json_schema`.
    pub(crate) response_format: Option<ResponseFormat>,
    /// Per-request timeout (`"60s"`).
    pub(crate) timeout: Option<String>,
    /// Retries after transient failures.
    pub(crate) max_retries: Option<u32>,
    /// First backoff delay (`"1s"`).
    pub(crate) retry_base: Option<String>,
    /// Longest wait between retries (`"60s"`).
    pub(crate) retry_max: Option<String>,
    /// Calls in flight to the endpoint at once, run-wide (default: `--jobs`).
    pub(crate) max_connections: Option<usize>,
    /// Whether that limit adapts to the provider's rate-limit answers (default true).
    pub(crate) adaptive: Option<bool>,
    /// How long the endpoint may refuse every call before tasks fail (`"5m"`).
    pub(crate) give_up_after: Option<String>,
    /// Send desktop steps' screenshots to the model (default true; false for text-only
    /// models: the control list alone, UFO's non-visual mode).
    pub(crate) vision: Option<bool>,
    /// The longer side of a screenshot sent to the model, in pixels.
    pub(crate) image_max_side: Option<u32>,
    /// USD per 1k tokens, by model: `[llm.prices."gpt-4o"] input = 0.0025, output = 0.01`.
    #[serde(default)]
    pub(crate) prices: std::collections::BTreeMap<String, Price>,
}

/// `[agent]` of the config file.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct AgentSection {
    /// Characters of command results sent back to the model per step.
    pub(crate) observation_limit: Option<usize>,
    /// Times an unusable reply is asked again.
    pub(crate) reply_retries: Option<u32>,
    /// `deny` (default) or `allow` sensitive actions the model asks to confirm.
    pub(crate) confirm: Option<ConfirmPolicy>,
    /// Steps sent to the model in full; older ones are summarized (0: all).
    pub(crate) history_steps: Option<u32>,
    /// Step screenshots the judge sees besides the final one (desktop tasks).
    pub(crate) judge_screenshots: Option<u32>,
}

/// `[run]` of the config file; every key is optional.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RunSection {
    /// Results root.
    pub(crate) out: Option<PathBuf>,
    /// Sessions at once.
    pub(crate) jobs: Option<usize>,
    /// Per-task wall-clock limit (`"10m"`).
    pub(crate) timeout: Option<String>,
    /// Step limit per session.
    pub(crate) max_steps: Option<u32>,
    /// Round limit per session.
    pub(crate) max_rounds: Option<u32>,
    /// Evaluation mode.
    pub(crate) eval: Option<String>,
    /// Retries after an infrastructure error.
    pub(crate) retries: Option<u32>,
    /// First delay before a retry (`"2s"`).
    pub(crate) retry_delay: Option<String>,
    /// Stop scheduling after this many tasks did not pass.
    pub(crate) max_fail: Option<u32>,
    /// Grace period after Ctrl-C / SIGTERM (`"30s"`).
    pub(crate) grace: Option<String>,
    /// The session mode of tasks that set none (`normal`, `operator`,
    /// `normal_operator`).
    pub(crate) mode: Option<String>,
}

/// `[executor]` of the config file.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ExecutorSection {
    /// Default timeout of one command (`"60s"`).
    pub(crate) command_timeout: Option<String>,
    /// Longest timeout a command may ask for.
    pub(crate) max_command_timeout: Option<String>,
    /// Bytes kept of each command output stream.
    pub(crate) output_limit: Option<usize>,
}

/// The config file at `path`, or `ufo-batch.toml` when it exists; with the path used.
pub(crate) fn read_config(
    path: Option<PathBuf>,
) -> Result<(ConfigFile, Option<PathBuf>), ConfigError> {
    match path {
        Some(p) => Ok((ConfigFile::load(&p, true)?, Some(p))),
        None => {
            let p = PathBuf::from(DEFAULT_CONFIG_FILE);
            let exists = p.exists();
            Ok((ConfigFile::load(&p, false)?, exists.then_some(p)))
        }
    }
}

impl ConfigFile {
    /// Reads `path`; with `explicit` false a missing file is an empty config.
    pub(crate) fn load(path: &Path, explicit: bool) -> Result<Self, ConfigError> {
        // A regular file only, and a bounded one: a FIFO or a device named as the config
        // is refused at once instead of blocking the command.
        let text = match crate::regular_file::read_named_text(path, MAX_CONFIG) {
            Ok(t) => t,
            Err(crate::regular_file::FileAccessError::NotFound) if !explicit => {
                return Ok(Self::default());
            }
            Err(e) => {
                return Err(ConfigError::Read {
                    path: path.to_path_buf(),
                    source: std::io::Error::other(e.to_string()),
                });
            }
        };
        toml::from_str(&text).map_err(|e| ConfigError::Parse {
            path: path.to_path_buf(),
            message: e.to_string().trim().replace('\n', "\n  "),
        })
    }
}
