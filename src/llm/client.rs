//! One chat call with retries. Every call takes a slot of the run's limiter of calls in
//! flight first. Rate-limit and overload answers (429, 503, 529) are waited out, not
//! retried against the call's budget: they lower the limiter and, with `Retry-After`,
//! pause the whole endpoint; only an endpoint that refuses everything for
//! `give_up_after` fails the call. Other transient failures (5xx, timeouts, connection
//! failures, malformed bodies) are retried with backoff; permanent ones (400, 401, 403,
//! 404) fail at once with a message that says what to fix. Every text that leaves here
//! is redacted of the API key.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio::time::Instant;

use super::config::{ApiType, LlmConfig};
use super::error::{LlmError, detail_of};
use super::limiter::{Answer, Busy, Limiter, LimiterStats, Verdict};
use super::retry_hint::{NeverServed, is_rate_limit, never_served, retry_after, retryable_status};
use super::secret::{ApiKey, redact};
use super::spend::Spend;
use super::wire::{Completion, Message, request_body};
use crate::backoff::Backoff;
use crate::units::{Cost, Usage};

/// A successful call.
#[derive(Clone, Debug)]
pub(crate) struct ChatReply {
    /// The reply text.
    pub(crate) content: String,
    /// Tokens of the successful request.
    pub(crate) usage: Usage,
    /// Its cost.
    pub(crate) cost: Cost,
    /// Requests made (1 + retries), rate-limit answers not counted.
    pub(crate) attempts: u32,
}

/// The client; one per run, shared by every task.
pub(crate) struct LlmClient {
    http: reqwest::Client,
    config: LlmConfig,
    key: Option<ApiKey>,
    spend: Arc<Spend>,
    limiter: Limiter,
}

/// A rate-limit answer to a call, and the call's refusals so far.
struct Refusal<'a> {
    /// Requests made.
    attempt: u32,
    /// Rate-limit answers among them.
    limited: u32,
    /// When the first came.
    since: Instant,
    failure: &'a Failure,
}

/// A failed request: the error and whether (and when) to try again.
struct Failure {
    error: LlmError,
    transient: bool,
    /// A rate-limit or overload answer.
    limited: bool,
    retry_after: Option<Duration>,
    /// Set when no connection could be made at all, with the cause in a few words.
    unreachable: Option<String>,
}

/// True when the environment names a proxy for plain HTTP requests (reqwest honours
/// it; the proxy itself may be spoken to over TLS).
fn proxied() -> bool {
    ["HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"]
        .iter()
        .any(|name| std::env::var_os(name).is_some_and(|v| !v.is_empty()))
}

impl LlmClient {
    /// A client for `config`, authenticating with `key` when there is one.
    pub(crate) fn new(
        config: LlmConfig,
        key: Option<ApiKey>,
        spend: Arc<Spend>,
    ) -> Result<Self, String> {
        let mut http = reqwest::Client::builder()
            .timeout(config.timeout)
            .connect_timeout(config.timeout.min(Duration::from_secs(15)))
            .user_agent(concat!("ufo-batch/", env!("CARGO_PKG_VERSION")));
        if config.base_url.starts_with("http://") && !proxied() {
            // A server spoken to without TLS (a local model, a mock), directly: the
            // system's certificates are not loaded (tens of milliseconds at every
            // start). A redirect to https is then refused in words.
            http = http
                .tls_certs_only([])
                .redirect(reqwest::redirect::Policy::custom(|attempt| {
                    if attempt.url().scheme() == "https" {
                        let to = crate::text::without_userinfo(attempt.url().as_str());
                        attempt.error(format!(
                            "the server redirects to {to}: give that address as the base URL"
                        ))
                    } else if attempt.previous().len() >= 10 {
                        attempt.error("more than 10 redirects")
                    } else {
                        attempt.follow()
                    }
                }));
        }
        let http = http
            .build()
            .map_err(|e| format!("cannot build the HTTP client: {e}"))?;
        let limiter = Limiter::new(
            config.max_connections,
            config.adaptive,
            config.retry_max,
            config.give_up_after,
        );
        Ok(Self {
            http,
            config,
            key,
            spend,
            limiter,
        })
    }

    /// The limiter's figures: calls in flight, the limit, rate-limit answers, waiting.
    pub(crate) fn load(&self) -> LimiterStats {
        self.limiter.stats()
    }

    /// Checks, before a run starts, that the server can be reached at all: any HTTP
    /// answer to a `GET` of the base URL will do (it costs no tokens); no connection, a
    /// failed name lookup or TLS handshake is the error, in a few words.
    pub(crate) async fn probe(&self) -> Result<(), String> {
        let url = self.config.base_url.trim_end_matches('/').to_string();
        let request = self
            .http
            .get(&url)
            .timeout(self.config.timeout.min(Duration::from_secs(10)));
        match request.send().await {
            Ok(_) => Ok(()),
            Err(e) if e.is_timeout() => Err(format!(
                "cannot reach the LLM at {}: no answer within 10s; is the server running? check --llm-base-url",
                crate::text::without_userinfo(&url)
            )),
            // A redirect this client does not follow (to https, see `new`): the
            // server runs; the address is what to change.
            Err(e) if e.is_redirect() => Err(format!(
                "the LLM at {}: {}",
                crate::text::without_userinfo(&url),
                self.redact(&root_cause(&e))
            )),
            Err(e) => Err(format!(
                "cannot reach the LLM at {}: {}; is the server running? check --llm-base-url",
                crate::text::without_userinfo(&url),
                self.redact(&root_cause(&e))
            )),
        }
    }

    /// The model asked.
    pub(crate) fn model(&self) -> &str {
        &self.config.model
    }

    /// The cost of `usage` at the model's price (unknown without a price).
    pub(crate) fn cost_of(&self, usage: Usage) -> Cost {
        match self.config.price() {
            Some(p) => Cost::known(
                usage.prompt_tokens as f64 * p.input / 1000.0
                    + usage.completion_tokens as f64 * p.output / 1000.0,
            ),
            None => Cost::unknown(),
        }
    }

    /// Sends `messages` and returns the reply. `schema` constrains the reply when the
    /// config asks for JSON output. `notify` hears about each retry, in words.
    pub(crate) async fn chat(
        &self,
        messages: &[Message],
        schema: Option<&Value>,
        notify: &(dyn Fn(String) + Send + Sync),
    ) -> Result<ChatReply, LlmError> {
        let body = request_body(&self.config, messages, schema);
        let backoff = Backoff {
            base: self.config.retry_base,
            max: self.config.retry_max,
        };
        let mut attempt = 0;
        let mut limited = 0;
        let mut refused_since = None;
        loop {
            let slot = match self.limiter.try_acquire() {
                Ok(slot) => slot,
                Err(Busy::GaveUp(e)) => return Err(e),
                Err(_) => super::wait::waiting(self.limiter.acquire()).await?,
            };
            attempt += 1;
            let result = self.send_once(&body).await;
            match result {
                Ok((content, usage)) => {
                    slot.finish(Answer::Served);
                    let cost = self.cost_of(usage);
                    self.spend.add(cost);
                    return Ok(ChatReply {
                        content,
                        usage,
                        cost,
                        attempts: attempt - limited,
                    });
                }
                Err(f) if f.limited => {
                    slot.finish(Answer::Limited(f.retry_after));
                    super::wait::count_rate_limited();
                    limited += 1;
                    let since = *refused_since.get_or_insert_with(Instant::now);
                    let refusal = Refusal {
                        attempt,
                        limited,
                        since,
                        failure: &f,
                    };
                    let delay = self.after_refusal(&refusal, &backoff, notify)?;
                    self.wait_out(delay).await;
                }
                Err(f) if !f.transient => {
                    slot.finish(Answer::Failed);
                    return Err(f.error);
                }
                Err(f) if attempt - limited > self.config.max_retries => {
                    slot.finish(Answer::Failed);
                    let attempts = attempt - limited;
                    return Err(match f.unreachable {
                        Some(cause) => LlmError::Unreachable {
                            url: crate::text::without_userinfo(&self.config.endpoint()),
                            cause,
                            attempts,
                        },
                        None => LlmError::GaveUp {
                            attempts,
                            last: f.error.to_string(),
                        },
                    });
                }
                Err(f) => {
                    slot.finish(Answer::Failed);
                    let retry = attempt - limited;
                    let delay = backoff.delay_with_hint(retry, f.retry_after);
                    let why = if f.retry_after.is_some() {
                        " (as the server asked)"
                    } else {
                        ""
                    };
                    notify(format!(
                        "LLM request {attempt} failed: {}; retrying in {:.1}s{why} (retry {retry} of {})",
                        f.error,
                        delay.as_secs_f64(),
                        self.config.max_retries
                    ));
                    tokio::time::sleep(delay).await;
                }
            }
        }
    }

    /// After a rate-limit answer: how long this call waits before it asks again (at least
    /// its own backoff, however short a wait the server asks for; the server's wait also
    /// pauses every other call), or why it gives up.
    fn after_refusal(
        &self,
        r: &Refusal<'_>,
        backoff: &Backoff,
        notify: &(dyn Fn(String) + Send + Sync),
    ) -> Result<Duration, LlmError> {
        let last = r.failure.error.to_string();
        match self.limiter.verdict(r.since) {
            Verdict::Wait => {}
            Verdict::GiveUpCall(refused_for) => {
                return Err(LlmError::CallRefused {
                    refused_for,
                    answers: r.limited,
                    last,
                });
            }
            Verdict::GiveUpEndpoint(refused_for) => {
                let error = LlmError::RateLimited {
                    url: crate::text::without_userinfo(&self.config.endpoint()),
                    refused_for,
                    answers: r.limited,
                    last,
                };
                self.limiter.give_up(error.clone());
                return Err(error);
            }
        }
        let own = backoff.delay(r.limited.min(16));
        let delay = match r.failure.retry_after {
            Some(hint) => own.max(hint).min(self.config.retry_max),
            None => own,
        };
        let asked = match r.failure.retry_after {
            Some(hint) => format!(
                "every call to it waits {:.1}s, as the server asked; this one",
                hint.min(self.config.retry_max).as_secs_f64()
            ),
            None => "this call".to_string(),
        };
        notify(format!(
            "LLM request {} was refused: {last}; the provider is at its limit: {asked} waits {:.1}s, and the run makes at most {} calls at once (a wait, not a retry)",
            r.attempt,
            delay.as_secs_f64(),
            self.limiter.stats().limit
        ));
        Ok(delay)
    }

    /// Backs off after a rate-limit answer: time waited for the provider, for the task
    /// and for the run.
    async fn wait_out(&self, delay: Duration) {
        super::wait::waiting(tokio::time::sleep(delay)).await;
        self.limiter.add_wait(delay);
    }

    async fn send_once(&self, body: &Value) -> Result<(String, Usage), Failure> {
        let url = self.config.endpoint();
        let mut request = self.http.post(&url).json(body);
        if let Some(key) = &self.key {
            request = match self.config.api_type {
                ApiType::OpenAi => request.bearer_auth(key.expose()),
                ApiType::Azure => request.header("api-key", key.expose()),
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
            return self.parse(&text).map_err(transient);
        }
        let code = status.as_u16();
        let detail = self.redact(&detail_of(&text));
        let reason = status.canonical_reason().unwrap_or("");
        let permanent = match never_served(code, &text) {
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
            return Err(Failure {
                error,
                transient: false,
                limited: false,
                retry_after: None,
                unreachable: None,
            });
        }
        if retryable_status(code) {
            return Err(Failure {
                error: LlmError::Transient(format!("{code} {reason}{detail}")),
                transient: true,
                limited: is_rate_limit(code, &text),
                retry_after: wait,
                unreachable: None,
            });
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
            },
            _ => LlmError::Rejected {
                status: code,
                detail,
            },
        };
        Err(Failure {
            error,
            transient: false,
            limited: false,
            retry_after: None,
            unreachable: None,
        })
    }

    fn parse(&self, text: &str) -> Result<(String, Usage), String> {
        let completion: Completion = serde_json::from_str(text).map_err(|e| {
            format!(
                "the server's answer is not a chat completion ({e}): {}",
                crate::text::shorten(text.trim(), 200)
            )
        })?;
        let Some(choice) = completion.choices.into_iter().next() else {
            return Err("the server's answer has no choices".to_string());
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

    fn redact(&self, text: &str) -> String {
        redact(text, self.key.as_ref())
    }
}

/// The largest answer body read: chat replies are kilobytes; a server (or anything
/// posing as one) that sends more must not take the runner's memory with it.
const MAX_BODY: usize = 8 << 20;

/// Why an answer body was not read.
enum BodyError {
    /// Larger than [`MAX_BODY`].
    TooLarge,
    /// The transfer failed.
    Http(reqwest::Error),
}

/// The answer body as text, read chunk by chunk up to [`MAX_BODY`].
async fn read_body(mut response: reqwest::Response) -> Result<String, BodyError> {
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
fn root_cause(e: &dyn std::error::Error) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A plain-HTTP server that sends the client on to https is said to do so, with
    /// the address to give instead (the client for plain HTTP loads no certificates).
    #[tokio::test]
    async fn a_redirect_to_https_is_refused_in_words() {
        if proxied() {
            return;
        }
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        std::thread::spawn(move || {
            if let Some(Ok(mut stream)) = listener.incoming().next() {
                let mut request = [0u8; 4096];
                let _ = std::io::Read::read(&mut stream, &mut request);
                let _ = std::io::Write::write_all(
                    &mut stream,
                    b"HTTP/1.1 301 Moved\r\nLocation: https://127.0.0.1:9/v1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                );
            }
        });
        let mut config = LlmConfig::new("m");
        config.base_url = format!("http://127.0.0.1:{port}/v1");
        let client = LlmClient::new(config, None, Arc::new(Spend::default())).unwrap();
        let error = client.probe().await.unwrap_err();
        assert!(
            error.contains("the server redirects to https://127.0.0.1:9/v1: give that address"),
            "{error}"
        );
        assert!(!error.contains("is the server running"), "{error}");
    }
}
