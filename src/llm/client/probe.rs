//! Checking, before a run starts, that the LLM server can be reached at all.

use std::time::Duration;

use super::LlmClient;
use super::send::root_cause;
use crate::llm::config::SetBy;

/// The LLM server cannot be reached: no task could talk to it.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Unreachable {
    /// Nothing answered in time.
    #[error(
        "cannot reach the LLM at {url}: no answer within 10s; is the server running? check {}",
        set_by.url()
    )]
    NoAnswer {
        /// The base URL (without credentials).
        url: String,
        /// Where the URL is set.
        set_by: SetBy,
    },
    /// It sends the client somewhere this client does not follow (see `new`): the
    /// server runs; the address is what to change.
    #[error("the LLM at {url}: {cause}")]
    Redirected {
        /// The base URL (without credentials).
        url: String,
        /// Why, redacted.
        cause: String,
    },
    /// No connection, no name, no TLS.
    #[error("cannot reach the LLM at {url}: {cause}; is the server running? check {}", set_by.url())]
    Refused {
        /// The base URL (without credentials).
        url: String,
        /// The innermost cause, redacted.
        cause: String,
        /// Where the URL is set.
        set_by: SetBy,
    },
}

impl LlmClient {
    /// Checks, before a run starts, that the server can be reached at all: any HTTP
    /// answer to a `GET` of the base URL will do (it costs no tokens); no connection, a
    /// failed name lookup or TLS handshake is the error, in a few words.
    pub(crate) async fn probe(&self) -> Result<(), Unreachable> {
        let base = self.config.base_url.trim_end_matches('/').to_string();
        let request = self
            .http
            .get(&base)
            .timeout(self.config.timeout.min(Duration::from_secs(10)));
        let url = crate::text::without_userinfo(&base).to_string();
        match request.send().await {
            Ok(_) => Ok(()),
            Err(e) if e.is_timeout() => Err(Unreachable::NoAnswer {
                url,
                set_by: self.config.set_by,
            }),
            Err(e) if e.is_redirect() => Err(Unreachable::Redirected {
                url,
                cause: self.redact(&root_cause(&e)),
            }),
            Err(e) => Err(Unreachable::Refused {
                url,
                cause: self.redact(&root_cause(&e)),
                set_by: self.config.set_by,
            }),
        }
    }
}
