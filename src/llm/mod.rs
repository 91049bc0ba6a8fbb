//! The OpenAI-compatible chat client (OpenAI, Azure OpenAI, vLLM, llama.cpp, Ollama):
//! one POST per call, bounded retries with backoff on transient failures, clear errors
//! on permanent ones, token and cost accounting. The API key comes only from the
//! environment and is redacted from every error text.

mod client;
mod config;
mod error;
mod retry_hint;
mod secret;
mod spend;
mod wire;

pub(crate) use client::LlmClient;
pub(crate) use config::{ApiType, LlmConfig, MaxTokensField, Price, ResponseFormat};
pub(crate) use error::LlmError;
pub(crate) use secret::ApiKey;
pub(crate) use spend::Spend;
pub(crate) use wire::Message;
#[cfg(test)]
pub(crate) use wire::Role;
