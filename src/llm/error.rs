//! LLM call failures, worded for the user: what happened, and what to do about it.

/// Why an LLM call failed.
#[derive(Debug, Clone, thiserror::Error)]
pub(crate) enum LlmError {
    /// 401/403: the key is missing or wrong.
    #[error("the LLM server refused the request ({status}){detail}; {hint}")]
    Unauthorized {
        /// HTTP status.
        status: u16,
        /// The server's words, redacted.
        detail: String,
        /// What to check.
        hint: String,
    },
    /// 404: no such model or endpoint.
    #[error(
        "the LLM server has no such model or endpoint ({status} at {url}){detail}; check {}",
        set_by.model_and_url()
    )]
    NotFound {
        /// HTTP status.
        status: u16,
        /// The URL called.
        url: String,
        /// The server's words, redacted.
        detail: String,
        /// Where the model and the URL are set.
        set_by: super::config::SetBy,
    },
    /// Another 4xx: the request itself is wrong; retrying cannot help.
    #[error("the LLM server rejected the request ({status}){detail}")]
    Rejected {
        /// HTTP status.
        status: u16,
        /// The server's words, redacted.
        detail: String,
    },
    /// A failure that may pass (429, 5xx, timeout, connection, malformed body).
    #[error("{0}")]
    Transient(String),
    /// No connection could be made, until the retries ran out: the server is down or
    /// the URL is wrong, and every task would fail the same way.
    #[error(
        "cannot reach the LLM at {url}: {cause} ({attempts} attempts); is the server running? check {}",
        set_by.url()
    )]
    Unreachable {
        /// The URL called (without credentials).
        url: String,
        /// The cause, in a few words.
        cause: String,
        /// Requests made.
        attempts: u32,
        /// Where the URL is set.
        set_by: super::config::SetBy,
    },
    /// 429 `insufficient_quota`: the account has no quota left; every call would fail.
    #[error(
        "the LLM provider says the account has no quota left ({status}){detail}; check the plan and billing of the key's account"
    )]
    NoQuota {
        /// HTTP status.
        status: u16,
        /// The server's words, redacted.
        detail: String,
    },
    /// Rate-limit or overload answers to one call for `give_up_after` while the endpoint
    /// served other calls: this request is the problem (or the provider is far past its
    /// limit). The task fails; the run goes on.
    #[error(
        "the LLM refused this call for {} while it answered other calls ({answers} rate-limit or overload answers); last: {last}",
        humantime::format_duration(std::time::Duration::from_secs(refused_for.as_secs()))
    )]
    CallRefused {
        /// How long this call was refused.
        refused_for: std::time::Duration,
        /// Rate-limit answers it got.
        answers: u32,
        /// The last answer.
        last: String,
    },
    /// Rate-limit or overload answers, and no call served, for `give_up_after`: the
    /// provider is not serving this run, and every task would wait the same way.
    #[error(
        "the LLM at {url} served no call for {} (rate limit or overload; {answers} such answers to this call); last: {last}; if the provider is rate limiting, lower --max-connections or raise [llm] give_up_after; if it is down, check it",
        humantime::format_duration(std::time::Duration::from_secs(refused_for.as_secs()))
    )]
    RateLimited {
        /// The URL called (without credentials).
        url: String,
        /// How long the endpoint has refused every call.
        refused_for: std::time::Duration,
        /// Rate-limit answers this call got.
        answers: u32,
        /// The last answer.
        last: String,
    },
    /// Transient failures until the retries ran out.
    #[error("the LLM was unreachable after {attempts} attempts; last: {last}")]
    GaveUp {
        /// Requests made.
        attempts: u32,
        /// The last failure.
        last: String,
    },
}

impl crate::tool::Blamed for LlmError {
    /// A key or a model the server refuses is the run's configuration (a resumed run
    /// keeps the task's error until the key, the model or the URL changes); anything
    /// else is the provider's or the network's.
    fn blame(&self) -> crate::tool::Blame {
        match self {
            Self::Unauthorized { .. } | Self::NotFound { .. } => crate::tool::Blame::Config,
            _ => crate::tool::Blame::Environment,
        }
    }
}

impl LlmError {
    /// True for failures that will recur on every task (wrong key, wrong model), so the
    /// run should stop scheduling instead of failing every task the same way.
    pub(crate) fn is_fatal(&self) -> bool {
        matches!(
            self,
            Self::Unauthorized { .. }
                | Self::NotFound { .. }
                | Self::Unreachable { .. }
                | Self::RateLimited { .. }
                | Self::NoQuota { .. }
        )
    }

    /// Requests retried before the call gave up.
    pub(crate) fn retries(&self) -> u32 {
        match self {
            Self::Unreachable { attempts, .. } | Self::GaveUp { attempts, .. } => {
                attempts.saturating_sub(1)
            }
            _ => 0,
        }
    }
}

/// `": message"` from a server's error body (OpenAI's `{"error": {"message"}}` or the
/// first line of text), or nothing.
pub(super) fn detail_of(body: &str) -> String {
    let message = serde_json::from_str::<serde_json::Value>(body)
        .ok()
        .and_then(|v| {
            v.pointer("/error/message")
                .or_else(|| v.get("message"))
                .or_else(|| v.get("error"))
                .and_then(|m| m.as_str().map(str::to_string))
        })
        .unwrap_or_else(|| crate::text::first_line(body, 200));
    if message.trim().is_empty() {
        String::new()
    } else {
        format!(": {}", crate::text::shorten(message.trim(), 300))
    }
}
