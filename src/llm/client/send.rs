//! One request and its answer: sent, read (bounded), and turned into the reply or a
//! failure that says whether to try again.

use std::time::Duration;

use serde_json::Value;

use super::LlmClient;
use crate::llm::config::{ApiType, Dialect};
use crate::llm::error::{LlmError, detail_of};
use crate::llm::retry_hint::{
    NeverServed, is_rate_limit, never_served, retry_after, retryable_status,
};
use crate::llm::wire::Completion;
use crate::units::Usage;

/// The Messages API version sent (`anthropic-version`), as Anthropic's SDK sends it.
const ANTHROPIC_VERSION: &str = "2023-06-01";

/// A failed request: the error and whether (and when) to try again.
pub(super) struct Failure {
    pub(super) error: LlmError,
    pub(super) transient: bool,
    /// A rate-limit or overload answer.
    pub(super) limited: bool,
    pub(super) retry_after: Option<Duration>,
    /// Set when no connection could be made at all, with the cause in a few words.
    pub(super) unreachable: Option<String>,
}

impl Failure {
    /// A failure that trying again cannot mend.
    fn permanent(error: LlmError) -> Self {
        Self {
            error,
            transient: false,
            limited: false,
            retry_after: None,
            unreachable: None,
        }
    }
}

/// A successful answer that holds no reply.
#[derive(Debug, thiserror::Error)]
pub(super) enum NotAnAnswer {
    /// Not the JSON of a chat completion.
    #[error("the server's answer is not a chat completion ({source}): {text}")]
    Malformed {
        /// What the JSON parser said.
        source: serde_json::Error,
        /// The answer's beginning.
        text: String,
    },
    /// A completion with no choice in it.
    #[error("the server's answer has no choices")]
    NoChoices,
    /// Not JSON at all (a provider's own API).
    #[error("the server's answer is not JSON ({source}): {text}")]
    NotJson {
        /// What the JSON parser said.
        source: serde_json::Error,
        /// The answer's beginning.
        text: String,
    },
}

/// How an answer's text is read into a reply and its usage.
pub(super) type Parse<'a, T> = dyn Fn(&str) -> Result<(T, Usage), NotAnAnswer> + Sync + 'a;

/// The reply and its usage in a successful chat-completion answer.
pub(super) fn completion(text: &str) -> Result<(String, Usage), NotAnAnswer> {
    let completion: Completion =
        serde_json::from_str(text).map_err(|source| NotAnAnswer::Malformed {
            source,
            text: crate::text::shorten(text.trim(), 200).to_string(),
        })?;
    let Some(choice) = completion.choices.into_iter().next() else {
        return Err(NotAnAnswer::NoChoices);
    };
    let content = choice
        .message
        .content
        .or(choice.message.refusal)
        .unwrap_or_default();
    let usage = completion
        .usage
        .map(|u| Usage {
            prompt_tokens: u.prompt_tokens,
            completion_tokens: u.completion_tokens,
        })
        .unwrap_or_default();
    Ok((content, usage))
}

/// A provider API's answer as JSON, and its usage (Responses: `usage.input_tokens` and
/// `output_tokens`; Messages: the same, plus the cache's input tokens).
pub(super) fn api_answer(dialect: Dialect, text: &str) -> Result<(Value, Usage), NotAnAnswer> {
    let value: Value = serde_json::from_str(text).map_err(|source| NotAnAnswer::NotJson {
        source,
        text: crate::text::shorten(text.trim(), 200).to_string(),
    })?;
    let n = |k: &str| {
        value
            .pointer(&format!("/usage/{k}"))
            .and_then(Value::as_u64)
            .unwrap_or(0)
    };
    let usage = match dialect {
        Dialect::Chat => Usage {
            prompt_tokens: n("prompt_tokens"),
            completion_tokens: n("completion_tokens"),
        },
        Dialect::Responses => Usage {
            prompt_tokens: n("input_tokens"),
            completion_tokens: n("output_tokens"),
        },
        Dialect::Messages => Usage {
            prompt_tokens: n("input_tokens")
                + n("cache_creation_input_tokens")
                + n("cache_read_input_tokens"),
            completion_tokens: n("output_tokens"),
        },
    };
    Ok((value, usage))
}

impl LlmClient {
    pub(super) async fn send_once<T>(
        &self,
        body: &Value,
        parse: &Parse<'_, T>,
    ) -> Result<(T, Usage), Failure> {
        let url = self.config.endpoint();
        let mut request = self.http.post(&url).json(body);
        if self.config.dialect == Dialect::Messages {
            // Anthropic's headers (the SDK's): the API version, a beta tool's flag.
            request = request.header("anthropic-version", ANTHROPIC_VERSION);
            if let Some(beta) = &self.config.beta {
                request = request.header("anthropic-beta", beta);
            }
        }
        if let Some(key) = &self.key {
            request = match (self.config.dialect, self.config.api_type) {
                (Dialect::Messages, _) => request.header("x-api-key", key.expose()),
                (_, ApiType::OpenAi) => request.bearer_auth(key.expose()),
                (_, ApiType::Azure) => request.header("api-key", key.expose()),
            };
        }
        let transient = |message: String| Failure {
            error: LlmError::Transient(self.redact(&message)),
            transient: true,
            limited: false,
            retry_after: None,
            unreachable: None,
        };
        let response = match request.send().await {
            Ok(r) => r,
            Err(e) if e.is_timeout() => {
                return Err(transient(format!(
                    "no answer within {}",
                    humantime::format_duration(self.config.timeout)
                )));
            }
            Err(e) if e.is_connect() => {
                let cause = self.redact(&root_cause(&e));
                let mut failure = transient(format!(
                    "cannot reach {}: {cause}",
                    crate::text::without_userinfo(&url)
                ));
                failure.unreachable = Some(cause);
                return Err(failure);
            }
            Err(e) => {
                return Err(transient(format!(
                    "cannot reach {url}: {}",
                    error_chain(&e)
                )));
            }
        };
        let status = response.status();
        let wait = retry_after(response.headers());
        let text = match read_body(response).await {
            Ok(t) => t,
            Err(BodyError::TooLarge) => {
                return Err(transient(format!(
                    "the answer was refused: it is larger than {} MiB, far more than any chat reply",
                    MAX_BODY >> 20
                )));
            }
            Err(BodyError::Http(e)) if e.is_timeout() => {
                return Err(transient(format!(
                    "the answer did not finish within {}",
                    humantime::format_duration(self.config.timeout)
                )));
            }
            Err(BodyError::Http(e)) => {
                return Err(transient(format!(
                    "the answer was cut off: {}",
                    error_chain(&e)
                )));
            }
        };
        if status.is_success() {
            return parse(&text).map_err(|e| transient(e.to_string()));
        }
        Err(self.refused(status, &text, wait, url))
    }

    /// The failure an answer of `status` (not a success) with body `text` means:
    /// permanent (the key, the model, the request), or to try again (after `wait`).
    fn refused(
        &self,
        status: reqwest::StatusCode,
        text: &str,
        wait: Option<Duration>,
        url: String,
    ) -> Failure {
        let code = status.as_u16();
        let detail = self.redact(&detail_of(text));
        let reason = status.canonical_reason().unwrap_or("");
        let permanent = match never_served(code, text) {
            Some(NeverServed::NoQuota) => Some(LlmError::NoQuota {
                status: code,
                detail: detail.clone(),
            }),
            Some(NeverServed::TooLarge) => Some(LlmError::Rejected {
                status: code,
                detail: detail.clone(),
            }),
            None => None,
        };
        if let Some(error) = permanent {
            return Failure::permanent(error);
        }
        if retryable_status(code) {
            return Failure {
                error: LlmError::Transient(format!("{code} {reason}{detail}")),
                transient: true,
                limited: is_rate_limit(code, text),
                retry_after: wait,
                unreachable: None,
            };
        }
        let error = match code {
            401 | 403 => LlmError::Unauthorized {
                status: code,
                detail,
                hint: match &self.key {
                    Some(_) => format!("check the API key in ${}", self.config.api_key_env),
                    None => format!(
                        "the server wants an API key: set ${}",
                        self.config.api_key_env
                    ),
                },
            },
            404 => LlmError::NotFound {
                status: code,
                url,
                detail,
                set_by: self.config.set_by,
            },
            _ => LlmError::Rejected {
                status: code,
                detail,
            },
        };
        Failure::permanent(error)
    }
}

/// The largest answer body read: chat replies are kilobytes; a server (or anything
/// posing as one) that sends more must not take the runner's memory with it.
pub(super) const MAX_BODY: usize = 8 << 20;

/// Why an answer body was not read.
pub(super) enum BodyError {
    /// Larger than [`MAX_BODY`].
    TooLarge,
    /// The transfer failed.
    Http(reqwest::Error),
}

/// The answer body as text, read chunk by chunk up to [`MAX_BODY`].
pub(super) async fn read_body(mut response: reqwest::Response) -> Result<String, BodyError> {
    if response
        .content_length()
        .is_some_and(|n| n > MAX_BODY as u64)
    {
        return Err(BodyError::TooLarge);
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(BodyError::Http)? {
        if body.len() + chunk.len() > MAX_BODY {
            return Err(BodyError::TooLarge);
        }
        body.extend_from_slice(&chunk);
    }
    Ok(String::from_utf8_lossy(&body).into_owned())
}

/// The innermost cause of an error ("Connection refused (os error 111)"): reqwest's
/// outer layers only say that sending failed.
pub(super) fn root_cause(e: &dyn std::error::Error) -> String {
    let mut cause = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        cause = s.to_string();
        source = s.source();
    }
    cause
}

/// An error and its causes on one line (reqwest's own message is terse).
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut parts = vec![e.to_string()];
    let mut source = e.source();
    while let Some(s) = source {
        let text = s.to_string();
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        source = s.source();
    }
    parts.join(": ")
}
