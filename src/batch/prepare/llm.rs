//! The run's LLM clients, the agents' and the operator's: refused before anything runs
//! when a task needs one that is not configured, has no key, or cannot be reached.

use std::sync::Arc;

use super::queued::Queued;
use crate::batch::{BatchError, RunSettings};
use crate::llm::{ApiKey, LlmClient, LlmConfig, Spend};
use crate::text::without_userinfo;

/// Tasks that need an LLM agent when none is configured: refused before any task runs
/// (each would only end in the same error). OSWorld's tasks are left to find out when
/// they start whether this machine runs them at all (an unsupported one needs no agent).
pub(super) fn refuse_agents_without_llm(work: &[Queued]) -> Result<(), BatchError> {
    let needing: Vec<&str> = work
        .iter()
        .filter(|q| q.held.agent && !q.held.osworld)
        .map(|q| q.source.id().as_str())
        .collect();
    let Some(first) = needing.first() else {
        return Ok(());
    };
    let more = match needing.len() {
        1 => String::new(),
        n => format!(" and {} more", n - 1),
    };
    Err(BatchError::Refused(format!(
        "{first}{more} {} an LLM agent and none is configured: run with --model MODEL (the key goes in $OPENAI_API_KEY; --llm-base-url for another server)",
        if needing.len() == 1 { "needs" } else { "need" }
    )))
}

/// The run's LLM client, when some task will talk to the LLM (a replay needs none). A
/// hosted service without a key, or a server that cannot be reached, is refused before
/// anything runs.
pub(super) async fn client(
    c: &LlmConfig,
    work: &[Queued],
    spend: Arc<Spend>,
) -> Result<Option<Arc<LlmClient>>, BatchError> {
    let key = ApiKey::from_env(&c.api_key_env);
    let needed = work.iter().any(|q| q.held.uses_llm);
    if !needed {
        return Ok(LlmClient::new(c.clone(), key, spend).map(Arc::new).ok());
    }
    let client = connected(c, key, spend, "").await?;
    Ok(Some(Arc::new(client)))
}

/// A client for `c` that can reach its server: refused when its hosted service has no
/// key (`whose` names whose endpoint it is in the words), or nothing answers.
async fn connected(
    c: &LlmConfig,
    key: Option<ApiKey>,
    spend: Arc<Spend>,
    whose: &str,
) -> Result<LlmClient, BatchError> {
    if key.is_none() && c.needs_key() {
        return Err(BatchError::Refused(format!(
            "no API key for {whose}{}: set ${} (keys are read only from the environment)",
            without_userinfo(&c.base_url),
            c.api_key_env
        )));
    }
    let client =
        LlmClient::new(c.clone(), key, spend).map_err(|e| BatchError::Internal(e.to_string()))?;
    client
        .probe()
        .await
        .map_err(|e| BatchError::Refused(e.to_string()))?;
    Ok(client)
}

/// The operator's client, when an operator works on some task: refused before anything
/// runs when none is configured, its hosted service has no key, or it cannot be reached.
pub(super) async fn operator_client(
    config: &RunSettings,
    work: &[Queued],
    spend: Arc<Spend>,
) -> Result<Option<crate::agent::OperatorRun>, BatchError> {
    let Some(first) = work.iter().find(|q| q.held.operator) else {
        return Ok(None);
    };
    let Some((settings, c)) = &config.operator else {
        return Err(BatchError::Refused(format!(
            "{} runs as an operator and no computer-use model is configured: add [operator] to ufo-batch.toml (provider, model), or give --model for an open model over chat completions",
            first.source.id().as_str()
        )));
    };
    let key = ApiKey::from_env(&c.api_key_env);
    let client = connected(c, key, spend, "the operator's ").await?;
    Ok(Some(crate::agent::OperatorRun {
        settings: Arc::new(settings.clone()),
        client: Arc::new(client),
    }))
}
