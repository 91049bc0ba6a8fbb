//! What an operator run is set to (`[operator]` in `ufo-batch.toml`, resolved): which
//! provider and tool or format, how many screenshots the conversation keeps, what a
//! provider's safety check makes of the task, UFO's `SCALER`, and the client the run's
//! operators share.

use std::sync::Arc;

use serde::Serialize;

use super::formats::ChatFormat;
use crate::llm::LlmClient;
use crate::llm::computer::{AnthropicTool, OpenAiTool};

/// How the operator reaches its model.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Provider {
    /// OpenAI's Responses API with this computer tool.
    OpenAi {
        /// The tool.
        tool: OpenAiTool,
    },
    /// Anthropic's Messages API with this computer tool.
    Anthropic {
        /// The tool.
        tool: AnthropicTool,
    },
    /// An open model over chat completions, in this action format.
    Chat {
        /// The format.
        format: &'static ChatFormat,
    },
}

impl Provider {
    /// The provider's name as `[operator] provider` writes it.
    pub(crate) fn name(&self) -> &'static str {
        match self {
            Self::OpenAi { .. } => "openai",
            Self::Anthropic { .. } => "anthropic",
            Self::Chat { .. } => "chat",
        }
    }

    /// The tool or format, as `[operator] tool` / `format` write it.
    pub(crate) fn version(&self) -> String {
        match self {
            Self::OpenAi {
                tool: OpenAiTool::Computer,
            } => "computer".to_string(),
            Self::OpenAi {
                tool: OpenAiTool::Preview { .. },
            } => "computer_use_preview".to_string(),
            Self::Anthropic { tool } => tool.name().to_string(),
            Self::Chat { format } => format.name.to_string(),
        }
    }

    /// The setting that names the tool or format (for an error that the provider
    /// refused it).
    pub(crate) fn version_key(&self) -> &'static str {
        match self {
            Self::Chat { .. } => "[operator] format",
            _ => "[operator] tool",
        }
    }
}

/// What a provider's safety check makes of the task.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum SafetyPolicy {
    /// Acknowledged, recorded and counted; the task goes on (as every batch runner
    /// does).
    #[default]
    Acknowledge,
    /// The task fails, saying which check.
    Refuse,
}

/// The operator's settings.
#[derive(Clone, Debug)]
pub(crate) struct OperatorSettings {
    /// How the model is reached.
    pub(crate) provider: Provider,
    /// Screenshots a conversation of ours (Anthropic's, chat's) sends again.
    pub(crate) keep_screenshots: u32,
    /// What a safety check makes of the task.
    pub(crate) safety_checks: SafetyPolicy,
    /// UFO's `SCALER`: the screenshot letterboxed onto a canvas of this size.
    pub(crate) scaler: Option<(u32, u32)>,
    /// Tokens a reply may take.
    pub(crate) max_tokens: u32,
}

/// What a run's operators share: the settings and the model's client (its own limits,
/// retries and costs, beside the LLM's).
#[derive(Clone)]
pub(crate) struct OperatorRun {
    /// The settings.
    pub(crate) settings: Arc<OperatorSettings>,
    /// The client.
    pub(crate) client: Arc<LlmClient>,
}
