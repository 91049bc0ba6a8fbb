//! An LLM endpoint's configuration (`[llm]`, or `[operator]` for the operator's): where
//! the server is and which API it speaks, which model, how requests are shaped, how long
//! to wait and retry, and what tokens cost.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// Which API dialect the server speaks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum ApiType {
    /// `POST {base_url}/chat/completions` with `Authorization: Bearer KEY`.
    #[default]
    OpenAi,
    /// `POST {base_url}/openai/deployments/{model}/chat/completions?api-version=V` with
    /// `api-key: KEY`.
    Azure,
}

/// Which API the endpoint speaks: the chat completions every agent but the operator
/// uses, or a provider's computer-use API (the operator's).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Dialect {
    /// `POST {base_url}/chat/completions` (OpenAI-compatible servers).
    #[default]
    Chat,
    /// OpenAI's Responses API: `POST {base_url}/responses`.
    Responses,
    /// Anthropic's Messages API: `POST {base_url}/v1/messages`, the key in `x-api-key`.
    Messages,
}

/// Where a client's settings are set, for the words of its errors: the LLM's flags, or
/// the config file's `[operator]`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum SetBy {
    /// `--model`, `--llm-base-url`, `[llm]`.
    #[default]
    Flags,
    /// `[operator]` in `ufo-batch.toml`.
    Operator,
}

impl SetBy {
    /// The settings that name the model and the server, in words.
    pub(crate) fn model_and_url(self) -> &'static str {
        match self {
            Self::Flags => "--model and --llm-base-url",
            Self::Operator => {
                "[operator] model and base_url (OpenAI's and chat's base_url is the /v1 root, Anthropic's the host)"
            }
        }
    }

    /// The setting that names the server.
    pub(crate) fn url(self) -> &'static str {
        match self {
            Self::Flags => "--llm-base-url",
            Self::Operator => "[operator] base_url",
        }
    }
}

/// Which request field carries the token limit. Servers differ: llama.cpp ignores
/// `max_completion_tokens`, OpenAI's reasoning models refuse `max_tokens`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum MaxTokensField {
    /// `max_tokens` (most servers).
    #[default]
    MaxTokens,
    /// `max_completion_tokens` (OpenAI's newer models).
    MaxCompletionTokens,
    /// No limit is sent.
    None,
}

/// Whether replies are constrained to JSON.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum ResponseFormat {
    /// Free text (the prompt asks for JSON; replies are parsed leniently).
    #[default]
    None,
    /// `{"type": "json_object", "schema": ...}` (OpenAI JSON mode; llama.cpp grammar).
    JsonObject,
    /// `{"type": "json_schema", ...}` (OpenAI structured outputs, not strict).
    JsonSchema,
}

/// USD per 1,000 tokens.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Price {
    /// Per 1k prompt tokens.
    pub(crate) input: f64,
    /// Per 1k completion tokens.
    pub(crate) output: f64,
}

/// The resolved LLM configuration.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct LlmConfig {
    /// Server root, e.g. `https://api.openai.com/v1`.
    pub(crate) base_url: String,
    /// Model (the deployment name on Azure).
    pub(crate) model: String,
    /// API dialect.
    pub(crate) api_type: ApiType,
    /// Which API the endpoint speaks.
    pub(crate) dialect: Dialect,
    /// Anthropic's `anthropic-beta` header (a beta tool's), when one is needed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) beta: Option<String>,
    /// Where these settings are set (for the words of errors).
    pub(crate) set_by: SetBy,
    /// Azure's `api-version`.
    pub(crate) api_version: Option<String>,
    /// The environment variable holding the key (the key itself is never stored here).
    pub(crate) api_key_env: String,
    /// Sampling temperature.
    pub(crate) temperature: f64,
    /// Token limit per reply.
    pub(crate) max_tokens: u32,
    /// Which field carries it.
    pub(crate) max_tokens_field: MaxTokensField,
    /// JSON constraint on replies.
    pub(crate) response_format: ResponseFormat,
    /// Per-request timeout.
    #[serde(serialize_with = "crate::units::as_human")]
    pub(crate) timeout: Duration,
    /// Retries after a transient failure.
    pub(crate) max_retries: u32,
    /// First backoff delay; doubles each retry (with jitter).
    #[serde(serialize_with = "crate::units::as_human")]
    pub(crate) retry_base: Duration,
    /// Longest wait between retries, `Retry-After` included.
    #[serde(serialize_with = "crate::units::as_human")]
    pub(crate) retry_max: Duration,
    /// Calls in flight to the endpoint at once, run-wide (the most, when adaptive).
    pub(crate) max_connections: usize,
    /// Whether fewer calls go out while the provider answers with rate limits.
    pub(crate) adaptive: bool,
    /// How long the endpoint may refuse every call (rate limits, overload) before the
    /// tasks waiting for it fail and the run stops starting tasks.
    #[serde(serialize_with = "crate::units::as_human")]
    pub(crate) give_up_after: Duration,
    /// Prices by model name.
    pub(crate) prices: BTreeMap<String, Price>,
}

impl LlmConfig {
    /// Defaults for `model`, talking to OpenAI.
    pub(crate) fn new(model: impl Into<String>) -> Self {
        Self {
            base_url: "https://api.openai.com/v1".to_string(),
            model: model.into(),
            api_type: ApiType::OpenAi,
            dialect: Dialect::Chat,
            beta: None,
            set_by: SetBy::Flags,
            api_version: None,
            api_key_env: "OPENAI_API_KEY".to_string(),
            temperature: 0.0,
            max_tokens: 2000,
            max_tokens_field: MaxTokensField::MaxTokens,
            response_format: ResponseFormat::None,
            timeout: Duration::from_secs(60),
            max_retries: 5,
            retry_base: Duration::from_secs(1),
            retry_max: Duration::from_secs(60),
            max_connections: 16,
            adaptive: true,
            give_up_after: Duration::from_secs(300),
            prices: BTreeMap::new(),
        }
    }

    /// The price of the configured model, if known.
    pub(crate) fn price(&self) -> Option<Price> {
        self.prices.get(&self.model).copied()
    }

    /// True for hosted services that always need a key (OpenAI, Azure, Anthropic).
    pub(crate) fn needs_key(&self) -> bool {
        self.api_type == ApiType::Azure
            || self.base_url.contains("api.openai.com")
            || self.base_url.contains("api.anthropic.com")
    }

    /// The URL requests are posted to.
    pub(crate) fn endpoint(&self) -> String {
        let root = self.base_url.trim_end_matches('/');
        match (self.dialect, self.api_type) {
            (Dialect::Chat, ApiType::OpenAi) => format!("{root}/chat/completions"),
            (Dialect::Chat, ApiType::Azure) => format!(
                "{root}/openai/deployments/{}/chat/completions?api-version={}",
                self.model,
                self.api_version.as_deref().unwrap_or("2024-10-21")
            ),
            (Dialect::Responses, ApiType::OpenAi) => format!("{root}/responses"),
            (Dialect::Responses, ApiType::Azure) => format!(
                "{root}/openai/responses?api-version={}",
                self.api_version.as_deref().unwrap_or("2025-04-01-preview")
            ),
            (Dialect::Messages, _) => format!("{root}/v1/messages"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints() {
        let mut c = LlmConfig::new("gpt-4o");
        c.base_url = "http://127.0.0.1:8089/v1/".into();
        assert_eq!(c.endpoint(), "http://127.0.0.1:8089/v1/chat/completions");
        c.api_type = ApiType::Azure;
        c.base_url = "https://x.openai.azure.com".into();
        c.api_version = Some("2025-01-01".into());
        assert_eq!(
            c.endpoint(),
            "https://x.openai.azure.com/openai/deployments/gpt-4o/chat/completions?api-version=2025-01-01"
        );
        c.dialect = Dialect::Responses;
        assert_eq!(
            c.endpoint(),
            "https://x.openai.azure.com/openai/responses?api-version=2025-01-01"
        );
        c.api_type = ApiType::OpenAi;
        c.base_url = "http://127.0.0.1:9/v1".into();
        assert_eq!(c.endpoint(), "http://127.0.0.1:9/v1/responses");
        c.dialect = Dialect::Messages;
        c.base_url = "https://api.anthropic.com".into();
        assert_eq!(c.endpoint(), "https://api.anthropic.com/v1/messages");
        assert!(c.needs_key());
    }
}
