//! The LLM client: OpenAI-compatible chat completions (OpenAI, Azure OpenAI, vLLM,
//! llama.cpp, Ollama) for every agent, and the providers' computer-use APIs (OpenAI's
//! Responses, Anthropic's Messages) for the operator, posted as the operator builds them:
//! one POST per call, a run-wide limit of calls in flight that adapts to the provider's
//! rate limits, bounded retries with backoff on other transient failures, clear errors
//! on permanent ones, token and cost accounting, and each task's time spent waiting for
//! the provider. The API key comes only from the environment and is redacted from every
//! error text.

mod client;
pub(crate) mod computer;
mod config;
mod error;
mod limiter;
mod retry_hint;
mod secret;
mod spend;
mod wait;
mod wire;

pub(crate) use client::{Answered, LlmClient};
pub(crate) use config::{
    ApiType, Dialect, LlmConfig, MaxTokensField, Price, ResponseFormat, SetBy,
};
pub(crate) use error::LlmError;
pub(crate) use limiter::LimiterStats;
pub(crate) use secret::ApiKey;
pub(crate) use spend::Spend;
pub(crate) use wait::WaitClock;
#[cfg(test)]
pub(crate) use wire::Role;
pub(crate) use wire::{Message, Part};
