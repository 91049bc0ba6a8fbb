//! One call with retries, in the endpoint's dialect (a chat completion, or a provider's
//! computer-use API posted as it is). Every call takes a slot of the run's limiter of calls in
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

mod probe;
mod send;

use super::config::LlmConfig;
use super::error::LlmError;
use super::limiter::{Answer, Busy, Limiter, LimiterStats, Verdict};
use super::secret::{ApiKey, redact};
use super::spend::Spend;
use super::wire::{Message, request_body};
use crate::backoff::Backoff;
use crate::units::{Cost, Usage};
use send::Failure;

/// What a successful call took: its tokens, their cost, the requests made.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Answered {
    /// Tokens of the successful request.
    pub(crate) usage: Usage,
    /// Its cost.
    pub(crate) cost: Cost,
    /// Requests made (1 + retries), rate-limit answers not counted.
    pub(crate) attempts: u32,
}

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

/// The HTTP client cannot be made (its TLS backend, the system's settings).
#[derive(Debug, thiserror::Error)]
#[error("cannot build the HTTP client: {0}")]
pub(crate) struct NoHttpClient(reqwest::Error);

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
    ) -> Result<Self, NoHttpClient> {
        crate::tls::ready();
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
        let http = http.build().map_err(NoHttpClient)?;
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
        let (content, answer) = self.call(&body, &send::completion, notify).await?;
        Ok(ChatReply {
            content,
            usage: answer.usage,
            cost: answer.cost,
            attempts: answer.attempts,
        })
    }

    /// Posts `body` as it is to the endpoint (a provider's own API, the client's
    /// dialect) and returns the answer's JSON, with the same limits, retries and
    /// accounting as a chat call.
    pub(crate) async fn post(
        &self,
        body: &Value,
        notify: &(dyn Fn(String) + Send + Sync),
    ) -> Result<(Value, Answered), LlmError> {
        let dialect = self.config.dialect;
        let parse = move |text: &str| send::api_answer(dialect, text);
        self.call(body, &parse, notify).await
    }

    /// One call: a slot of the limiter, the request, and retries as the answers say.
    async fn call<T>(
        &self,
        body: &Value,
        parse: &send::Parse<'_, T>,
        notify: &(dyn Fn(String) + Send + Sync),
    ) -> Result<(T, Answered), LlmError> {
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
            let result = self.send_once(body, parse).await;
            match result {
                Ok((value, usage)) => {
                    slot.finish(Answer::Served);
                    let cost = self.cost_of(usage);
                    self.spend.add(cost);
                    let answered = Answered {
                        usage,
                        cost,
                        attempts: attempt - limited,
                    };
                    return Ok((value, answered));
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
                    return Err(self.gave_up(f, attempt - limited));
                }
                Err(f) => {
                    slot.finish(Answer::Failed);
                    let delay =
                        self.after_failure(&f, attempt, attempt - limited, &backoff, notify);
                    tokio::time::sleep(delay).await;
                }
            }
        }
    }

    /// The error of a call whose retries are spent: the server never answered, or the
    /// last failure.
    fn gave_up(&self, f: Failure, attempts: u32) -> LlmError {
        match f.unreachable {
            Some(cause) => LlmError::Unreachable {
                url: crate::text::without_userinfo(&self.config.endpoint()),
                cause,
                attempts,
                set_by: self.config.set_by,
            },
            None => LlmError::GaveUp {
                attempts,
                last: f.error.to_string(),
            },
        }
    }

    /// After a failure that may pass: how long this call waits before retry `retry`,
    /// said through `notify`.
    fn after_failure(
        &self,
        f: &Failure,
        attempt: u32,
        retry: u32,
        backoff: &Backoff,
        notify: &(dyn Fn(String) + Send + Sync),
    ) -> Duration {
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
        delay
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

    fn redact(&self, text: &str) -> String {
        redact(text, self.key.as_ref())
    }
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
            matches!(error, probe::Unreachable::Redirected { .. }),
            "{error}"
        );
        let error = error.to_string();
        assert!(
            error.contains("the server redirects to https://127.0.0.1:9/v1: give that address"),
            "{error}"
        );
        assert!(!error.contains("is the server running"), "{error}");
    }
}
