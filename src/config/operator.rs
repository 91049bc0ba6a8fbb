//! `[operator]`: how operator sessions reach their computer-use model, resolved into the
//! operator's settings and its endpoint. Without the section, the LLM's own settings
//! (`--model`, `--llm-base-url`, `[llm]`) serve an open model over chat completions in
//! the default action format.

use std::time::Duration;

use super::ConfigError;
use super::file::OperatorSection;
use super::values::{MAX_RETRIES, at_most, duration_option};
use crate::agent::{OperatorSettings, Provider, format_named, format_names};
use crate::llm::computer::{AnthropicTool, OpenAiTool};
use crate::llm::{Dialect, LlmConfig, SetBy};

/// The chat format used when none is set: UI-TARS-1.5, the most used open operator.
const DEFAULT_FORMAT: &str = "ui-tars-1.5";
/// The screenshots a conversation sends again unless set.
const DEFAULT_KEEP: u32 = 3;
/// The most screenshots a conversation may send again.
const MAX_KEEP: u32 = 50;
/// How long one computer-use request may take unless set (they are slower than chat).
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);

/// The operator's settings and endpoint, when an operator can run: `[operator]`, or the
/// LLM's settings (`llm`) for the chat provider.
pub(super) fn operator_settings(
    section: Option<OperatorSection>,
    llm: Option<&LlmConfig>,
    prices: &std::collections::BTreeMap<String, crate::llm::Price>,
    jobs: usize,
) -> Result<Option<(OperatorSettings, LlmConfig)>, ConfigError> {
    let invalid = |m: String| ConfigError::Invalid(m);
    let Some(f) = section else {
        // Without the section: the LLM's settings, the default format.
        let Some(llm) = llm else { return Ok(None) };
        let format = format_named(DEFAULT_FORMAT).expect("the default format is a row");
        let settings = OperatorSettings {
            provider: Provider::Chat { format },
            keep_screenshots: DEFAULT_KEEP,
            safety_checks: Default::default(),
            scaler: None,
            max_tokens: llm.max_tokens,
        };
        return Ok(Some((settings, llm.clone())));
    };
    let provider_name = f
        .provider
        .as_deref()
        .unwrap_or("chat")
        .trim()
        .to_ascii_lowercase();
    let (dialect, default_url, default_key) = match provider_name.as_str() {
        "openai" => (
            Dialect::Responses,
            Some("https://api.openai.com/v1"),
            "OPENAI_API_KEY",
        ),
        "anthropic" => (
            Dialect::Messages,
            Some("https://api.anthropic.com"),
            "ANTHROPIC_API_KEY",
        ),
        "chat" => (Dialect::Chat, None, "OPENAI_API_KEY"),
        other => {
            return Err(invalid(format!(
                "[operator] provider {other:?}: use \"openai\" (the Responses API), \"anthropic\" (the Messages API) or \"chat\" (chat completions, with [operator] format)"
            )));
        }
    };
    let chat = dialect == Dialect::Chat;
    let model = f
        .model
        .clone()
        .or_else(|| llm.filter(|_| chat).map(|l| l.model.clone()))
        .filter(|m| !m.trim().is_empty())
        .ok_or_else(|| {
            let or = if chat {
                " (or give [llm] model or --model: the chat provider uses the LLM's by default)"
            } else {
                ""
            };
            invalid(format!(
                "[operator] model is missing: name the {provider_name} provider's computer-use model{or}"
            ))
        })?;
    let mut c = match llm.filter(|_| chat) {
        Some(l) => LlmConfig {
            model: model.clone(),
            ..l.clone()
        },
        None => LlmConfig::new(model.clone()),
    };
    c.prices = prices.clone();
    c.dialect = dialect;
    c.set_by = SetBy::Operator;
    if let Some(url) = f.base_url.clone().or(default_url.map(str::to_string)) {
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            return Err(invalid(format!(
                "[operator] base_url {url:?}: give an http:// or https:// URL"
            )));
        }
        c.base_url = url;
    }
    c.api_key_env = f
        .api_key_env
        .clone()
        .or_else(|| llm.filter(|_| chat).map(|l| l.api_key_env.clone()))
        .unwrap_or_else(|| default_key.to_string());
    c.api_type = f.api_type.unwrap_or(c.api_type);
    c.api_version = f.api_version.clone().or(c.api_version);
    if !chat {
        c.max_tokens = 4096;
        c.timeout = DEFAULT_TIMEOUT;
        c.max_connections = jobs;
    }
    c.max_tokens =
        at_most(f.max_tokens, "[operator] max_tokens", 1_000_000)?.unwrap_or(c.max_tokens);
    if c.max_tokens == 0 {
        return Err(invalid(
            "[operator] max_tokens must be at least 1".to_string(),
        ));
    }
    c.timeout =
        duration_option(f.timeout.clone().map(|t| (t, "[operator] timeout")))?.unwrap_or(c.timeout);
    c.max_retries =
        at_most(f.max_retries, "[operator] max_retries", MAX_RETRIES)?.unwrap_or(c.max_retries);
    let provider = provider(&provider_name, &f, &mut c)?;
    let keep_screenshots = f.keep_screenshots.unwrap_or(DEFAULT_KEEP);
    if !(1..=MAX_KEEP).contains(&keep_screenshots) {
        return Err(invalid(format!(
            "[operator] keep_screenshots must be from 1 to {MAX_KEEP}"
        )));
    }
    let scaler = match f.scaler {
        Some([w, h]) if (64..=8192).contains(&w) && (64..=8192).contains(&h) => Some((w, h)),
        Some(_) => {
            return Err(invalid(
                "[operator] scaler is [width, height], each from 64 to 8192 pixels (UFO's SCALER)"
                    .to_string(),
            ));
        }
        None => None,
    };
    if scaler.is_some() && !matches!(provider, Provider::OpenAi { .. }) {
        return Err(invalid(
            "[operator] scaler is UFO's letterbox for OpenAI's operator: Anthropic's and the chat formats' \
             screenshots are fitted as their models take them"
                .to_string(),
        ));
    }
    let settings = OperatorSettings {
        provider,
        keep_screenshots,
        safety_checks: f.safety_checks.unwrap_or_default(),
        scaler,
        max_tokens: c.max_tokens,
    };
    Ok(Some((settings, c)))
}

/// The provider with its tool or format, as `f` names them; a tool that needs a beta
/// header gets it on `c`.
fn provider(name: &str, f: &OperatorSection, c: &mut LlmConfig) -> Result<Provider, ConfigError> {
    let invalid = |m: String| ConfigError::Invalid(m);
    let tool = f.tool.as_deref().map(str::trim);
    if name != "chat" && f.format.is_some() {
        return Err(invalid(format!(
            "[operator] format is for the chat provider (its action format); the {name} provider takes [operator] tool"
        )));
    }
    Ok(match name {
        "openai" => {
            if f.environment.is_some()
                && !matches!(tool, Some("computer_use_preview" | "computer-use-preview"))
            {
                return Err(invalid(
                    "[operator] environment is for tool = \"computer_use_preview\" (the GA computer tool takes none)"
                        .to_string(),
                ));
            }
            let tool = match tool.unwrap_or("computer") {
                "computer" => OpenAiTool::Computer,
                "computer_use_preview" | "computer-use-preview" => OpenAiTool::Preview {
                    environment: match f.environment.as_deref().unwrap_or("linux") {
                        e @ ("windows" | "mac" | "linux" | "ubuntu" | "browser") => e.to_string(),
                        other => {
                            return Err(invalid(format!(
                                "[operator] environment {other:?}: use windows, mac, linux, ubuntu or browser"
                            )));
                        }
                    },
                },
                other => {
                    return Err(invalid(format!(
                        "[operator] tool {other:?}: OpenAI's computer tools are \"computer\" (GA) and \"computer_use_preview\""
                    )));
                }
            };
            Provider::OpenAi { tool }
        }
        "anthropic" => {
            let tool = match tool.unwrap_or("computer_toolset_20260801") {
                "computer_toolset_20260801" => AnthropicTool::Toolset,
                "computer_20251124" => {
                    c.beta = Some(crate::llm::computer::COMPUTER_20251124_BETA.to_string());
                    AnthropicTool::Computer20251124
                }
                other => {
                    return Err(invalid(format!(
                        "[operator] tool {other:?}: Anthropic's computer tools are \"computer_toolset_20260801\" and \"computer_20251124\""
                    )));
                }
            };
            Provider::Anthropic { tool }
        }
        _ => {
            if let Some(tool) = tool {
                return Err(invalid(format!(
                    "[operator] tool {tool:?} is for the openai and anthropic providers; the chat provider takes [operator] format ({})",
                    format_names()
                )));
            }
            let name = f.format.as_deref().unwrap_or(DEFAULT_FORMAT);
            let format = format_named(name).ok_or_else(|| {
                invalid(format!(
                    "[operator] format {name:?}: the action formats are {}",
                    format_names()
                ))
            })?;
            Provider::Chat { format }
        }
    })
}
