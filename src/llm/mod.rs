//! The OpenAI-compatible chat client (OpenAI, Azure OpenAI, vLLM, llama.cpp, Ollama):
//! one POST per call, a run-wide limit of calls in flight that adapts to the provider's
//! rate limits, bounded retries with backoff on other transient failures, clear errors
//! on permanent ones, token and cost accounting, and each task's time spent waiting for
//! the provider. The API key comes only from the environment and is redacted from every
//! error text.

mod client;
mod config;
mod error;
mod limiter;
mod retry_hint;
mod secret;
mod spend;
mod wait;
mod wire;

pub(crate) use client::LlmClient;
pub(crate) use config::{ApiType, LlmConfig, MaxTokensField, Price, ResponseFormat};
pub(crate) use error::LlmError;
pub(crate) use limiter::LimiterStats;
pub(crate) use secret::ApiKey;
pub(crate) use spend::Spend;
pub(crate) use wait::WaitClock;
#[cfg(test)]
pub(crate) use wire::Role;
pub(crate) use wire::{Message, Part};
