//! An OpenAI-compatible chat server on loopback for tests. Each task's request text
//! carries a marker such as `[script:sum]`; requests with that marker get the next
//! scripted reply for it (agent and judge requests have separate scripts). Faults are
//! replies too: an HTTP status with `Retry-After`, a hang, a malformed body. A provider's
//! limits can be set too: calls in flight and tokens per window beyond which it answers
//! as real providers do (429 with or without a wait, or 503 "overloaded").

use std::collections::{HashMap, VecDeque};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};

/// Tokens every successful reply reports.
pub(crate) const PROMPT_TOKENS: u64 = 100;
pub(crate) const COMPLETION_TOKENS: u64 = 20;

/// One scripted answer.
#[derive(Clone, Debug)]
pub(crate) enum Reply {
    /// 200 with this text as the assistant's message.
    Content(String),
    /// An HTTP error.
    Status {
        code: u16,
        retry_after: Option<&'static str>,
        body: String,
    },
    /// Nothing for this long (past the client's timeout), then a 200 with this text.
    Hang(Duration, String),
    /// 200 with this raw body.
    Raw(String),
    /// 401 whose message repeats the request's Authorization header (as careless servers do).
    EchoAuth,
    /// 200 with the text this function makes of the request's body (a reply that
    /// names what the request showed, such as a control's id).
    Computed(Computed),
}

/// A reply made from the request.
#[derive(Clone)]
pub(crate) struct Computed(pub(crate) Arc<dyn Fn(&Value) -> String + Send + Sync>);

impl std::fmt::Debug for Computed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Computed(..)")
    }
}

impl Reply {
    /// A reply made from the request's body by `make`.
    pub(crate) fn computed(make: impl Fn(&Value) -> String + Send + Sync + 'static) -> Self {
        Self::Computed(Computed(Arc::new(make)))
    }
}

/// A provider's limits.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Limits {
    /// Calls served at once; more are refused.
    pub(crate) concurrency: usize,
    /// Tokens served per window (a token-per-minute limit with a shorter minute).
    pub(crate) tokens: Option<(u64, Duration)>,
    /// How a refusal reads.
    pub(crate) answer: Refusal,
}

/// How a provider refuses a call beyond its limits.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Refusal {
    /// 429 with `Retry-After: SECONDS`.
    RetryAfter(&'static str),
    /// 429 with `retry-after-ms: MS`.
    RetryAfterMs(&'static str),
    /// 429 with no hint.
    Bare,
    /// 503 with an "overloaded" body.
    Overloaded,
}

/// What the limits did.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct LimitStats {
    /// Calls served.
    pub(crate) served: u64,
    /// Calls refused.
    pub(crate) refused: u64,
    /// The most calls served at once.
    pub(crate) peak: usize,
}

#[derive(Default)]
struct Limiting {
    limits: Option<Limits>,
    in_flight: usize,
    /// Tokens served, and when.
    window: VecDeque<(std::time::Instant, u64)>,
    stats: LimitStats,
}

/// A request the server received.
#[derive(Clone, Debug)]
pub(crate) struct Received {
    pub(crate) path: String,
    pub(crate) marker: Option<String>,
    pub(crate) judge: bool,
    pub(crate) headers: HashMap<String, String>,
    pub(crate) body: Value,
}

#[derive(Default)]
struct State {
    agent: HashMap<String, VecDeque<Reply>>,
    judge: HashMap<String, VecDeque<Reply>>,
    received: Vec<Received>,
    /// The reply for requests without a script (none: a 500).
    fallback: Option<Reply>,
    /// Waited before every answer.
    delay: Duration,
    /// Keep no copy of requests (long benchmarks).
    forget: bool,
    /// Requests without a script get an action until they carry this many assistant
    /// messages, then a FINISH (tasks of several calls without a script each).
    steps: Option<usize>,
    limiting: Limiting,
}

/// The running server; it stops when dropped.
pub(crate) struct MockLlm {
    addr: SocketAddr,
    state: Arc<Mutex<State>>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl MockLlm {
    pub(crate) fn start() -> Self {
        Self::start_on(0)
    }

    /// A server on `port` of 127.0.0.1 (0: any free port).
    pub(crate) fn start_on(port: u16) -> Self {
        let state = Arc::new(Mutex::new(State::default()));
        let (addr_tx, addr_rx) = std::sync::mpsc::channel();
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
        let shared = Arc::clone(&state);
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async move {
                let listener = TcpListener::bind(("127.0.0.1", port)).await.unwrap();
                addr_tx.send(listener.local_addr().unwrap()).unwrap();
                let serve = async {
                    loop {
                        let Ok((socket, _)) = listener.accept().await else {
                            continue;
                        };
                        let _ = socket.set_nodelay(true);
                        let state = Arc::clone(&shared);
                        tokio::spawn(async move {
                            let _ = serve_connection(socket, state).await;
                        });
                    }
                };
                tokio::select! {
                    () = serve => {}
                    _ = stop_rx => {}
                }
            });
        });
        let addr = addr_rx.recv().unwrap();
        Self {
            addr,
            state,
            stop: Some(stop_tx),
            thread: Some(thread),
        }
    }

    /// The base URL to give `--llm-base-url`.
    pub(crate) fn url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// Replies for agent requests of the task whose request contains `[script:NAME]`.
    pub(crate) fn script(&self, name: &str, replies: Vec<Reply>) -> &Self {
        self.state
            .lock()
            .unwrap()
            .agent
            .insert(marker(name), replies.into());
        self
    }

    /// Replies for agent requests whose messages contain `key` itself (a word of the
    /// request, for tests where `[script:NAME]`'s shared word would be in the way).
    pub(crate) fn script_key(&self, key: &str, replies: Vec<Reply>) -> &Self {
        self.state
            .lock()
            .unwrap()
            .agent
            .insert(key.to_string(), replies.into());
        self
    }

    /// Requests routed by `key` (see [`MockLlm::script_key`]).
    pub(crate) fn received_key(&self, key: &str) -> Vec<Received> {
        self.received()
            .into_iter()
            .filter(|r| r.marker.as_deref() == Some(key))
            .collect()
    }

    /// Replies for judge requests of that task.
    pub(crate) fn judge(&self, name: &str, replies: Vec<Reply>) -> &Self {
        self.state
            .lock()
            .unwrap()
            .judge
            .insert(marker(name), replies.into());
        self
    }

    /// The reply for every request without a script, after `delay`; requests are not
    /// kept (for benchmarks).
    pub(crate) fn serve_all(&self, reply: Reply, delay: Duration) -> &Self {
        let mut state = self.state.lock().unwrap();
        state.fallback = Some(reply);
        state.delay = delay;
        state.forget = true;
        self
    }

    /// Tasks without a script take `steps` calls each: an `execute_command` of `true`
    /// until the last, which finishes.
    pub(crate) fn serve_steps(&self, steps: usize, delay: Duration) -> &Self {
        let mut state = self.state.lock().unwrap();
        state.steps = Some(steps.max(1));
        state.fallback = Some(finish("done"));
        state.delay = delay;
        state.forget = true;
        self
    }

    /// Refuses calls beyond `limits`, as a provider at its rate limit does.
    pub(crate) fn limit(&self, limits: Limits) -> &Self {
        self.state.lock().unwrap().limiting.limits = Some(limits);
        self
    }

    /// What the limits did so far.
    pub(crate) fn limit_stats(&self) -> LimitStats {
        self.state.lock().unwrap().limiting.stats
    }

    /// Every request so far.
    pub(crate) fn received(&self) -> Vec<Received> {
        self.state.lock().unwrap().received.clone()
    }

    /// Requests of one script.
    pub(crate) fn received_for(&self, name: &str) -> Vec<Received> {
        let m = marker(name);
        self.received()
            .into_iter()
            .filter(|r| r.marker.as_deref() == Some(m.as_str()))
            .collect()
    }
}

impl Drop for MockLlm {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// A message's text: its content string, or its text parts (an image part has none).
pub(crate) fn message_text(message: &Value) -> String {
    match &message["content"] {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

pub(crate) fn marker(name: &str) -> String {
    format!("[script:{name}]")
}

/// An agent reply in UFO's schema.
pub(crate) fn action(function: &str, arguments: Value, status: &str) -> Reply {
    Reply::Content(
        json!({
            "observation": "looked at the workspace",
            "thought": format!("next I call {function}"),
            "action": {"function": function, "arguments": arguments, "status": status},
            "plan": ["check the result"],
            "comment": if status == "FINISH" { "done" } else { "" },
        })
        .to_string(),
    )
}

/// A reply that finishes without an action.
pub(crate) fn finish(comment: &str) -> Reply {
    Reply::Content(
        json!({"observation": "all done", "thought": "the request is complete",
               "action": {"function": "", "arguments": {}, "status": "FINISH"}, "plan": [], "comment": comment})
        .to_string(),
    )
}

/// A judge verdict.
pub(crate) fn verdict(complete: &str, reason: &str) -> Reply {
    Reply::Content(
        json!({"reason": reason, "sub_scores": [{"name": "output", "evaluation": complete}], "complete": complete})
            .to_string(),
    )
}

async fn serve_connection(socket: TcpStream, state: Arc<Mutex<State>>) -> std::io::Result<()> {
    let mut reader = BufReader::new(socket);
    loop {
        let mut headers = HashMap::new();
        let mut line = String::new();
        if reader.read_line(&mut line).await? == 0 {
            return Ok(());
        }
        loop {
            let mut h = String::new();
            reader.read_line(&mut h).await?;
            let h = h.trim_end();
            if h.is_empty() {
                break;
            }
            if let Some((k, v)) = h.split_once(':') {
                headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_string());
            }
        }
        let len: usize = headers
            .get("content-length")
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        let mut body = vec![0; len];
        reader.read_exact(&mut body).await?;
        let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        let path = line.split_whitespace().nth(1).unwrap_or("").to_string();
        if line.starts_with("GET ") {
            // What a real server answers the runner's reachability probe.
            let text = r#"{"error": {"message": "not found"}}"#;
            let head = format!(
                "HTTP/1.1 404 X\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
                text.len()
            );
            let socket = reader.get_mut();
            socket.write_all(format!("{head}{text}").as_bytes()).await?;
            socket.flush().await?;
            continue;
        }
        let Some(admitted) = admit(&state) else {
            let refusal = state.lock().unwrap().limiting.limits.map(|l| l.answer);
            let (head, text) = refusal_answer(refusal.unwrap_or(Refusal::Bare));
            let socket = reader.get_mut();
            socket.write_all(format!("{head}{text}").as_bytes()).await?;
            socket.flush().await?;
            continue;
        };
        let reply = route(&state, path, headers.clone(), body);
        let delay = state.lock().unwrap().delay;
        if !delay.is_zero() {
            tokio::time::sleep(delay).await;
        }
        drop(admitted);
        let (status, extra, text) = match reply {
            Reply::Content(content) => (200, String::new(), completion(&content)),
            Reply::Computed(_) => unreachable!("made into content when routed"),
            Reply::Raw(raw) => (200, String::new(), raw),
            Reply::Status {
                code,
                retry_after,
                body,
            } => {
                let extra = retry_after
                    .map(|r| format!("Retry-After: {r}\r\n"))
                    .unwrap_or_default();
                (code, extra, body)
            }
            Reply::Hang(d, content) => {
                tokio::time::sleep(d).await;
                (200, String::new(), completion(&content))
            }
            Reply::EchoAuth => {
                let auth = headers.get("authorization").cloned().unwrap_or_default();
                let body =
                    json!({"error": {"message": format!("Incorrect API key provided: {auth}")}})
                        .to_string();
                (401, String::new(), body)
            }
        };
        let head = format!(
            "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\n{extra}\r\n",
            text.len()
        );
        let socket = reader.get_mut();
        // One write: a head and a body written apart wait for the client's delayed ACK.
        socket.write_all(format!("{head}{text}").as_bytes()).await?;
        socket.flush().await?;
    }
}

/// Admits a call within the limits (held until its answer is ready), or refuses it.
fn admit(state: &Arc<Mutex<State>>) -> Option<Admitted> {
    let mut s = state.lock().unwrap();
    let l = &mut s.limiting;
    let Some(limits) = l.limits else {
        return Some(Admitted(None));
    };
    let now = std::time::Instant::now();
    let mut over = l.in_flight >= limits.concurrency;
    if let Some((tokens, window)) = limits.tokens {
        while l.window.front().is_some_and(|(at, _)| now - *at >= window) {
            l.window.pop_front();
        }
        let used: u64 = l.window.iter().map(|(_, n)| n).sum();
        over |= used + PROMPT_TOKENS + COMPLETION_TOKENS > tokens;
    }
    if over {
        l.stats.refused += 1;
        return None;
    }
    l.in_flight += 1;
    l.stats.served += 1;
    l.stats.peak = l.stats.peak.max(l.in_flight);
    if limits.tokens.is_some() {
        l.window.push_back((now, PROMPT_TOKENS + COMPLETION_TOKENS));
    }
    Some(Admitted(Some(Arc::clone(state))))
}

/// A call being served; dropping it frees its place.
struct Admitted(Option<Arc<Mutex<State>>>);

impl Drop for Admitted {
    fn drop(&mut self) {
        if let Some(state) = &self.0 {
            let mut s = state.lock().unwrap();
            s.limiting.in_flight -= 1;
        }
    }
}

/// The head and body of a refusal.
fn refusal_answer(refusal: Refusal) -> (String, String) {
    let (code, header, message) = match refusal {
        Refusal::RetryAfter(s) => (429, format!("Retry-After: {s}\r\n"), "Rate limit reached"),
        Refusal::RetryAfterMs(ms) => (
            429,
            format!("retry-after-ms: {ms}\r\n"),
            "Rate limit reached",
        ),
        Refusal::Bare => (429, String::new(), "Rate limit reached"),
        Refusal::Overloaded => (503, String::new(), "The server is overloaded"),
    };
    let body = json!({"error": {"message": message}}).to_string();
    let head = format!(
        "HTTP/1.1 {code} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\n{header}\r\n",
        body.len()
    );
    (head, body)
}

fn completion(content: &str) -> String {
    json!({
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": PROMPT_TOKENS, "completion_tokens": COMPLETION_TOKENS, "total_tokens": PROMPT_TOKENS + COMPLETION_TOKENS}
    })
    .to_string()
}

/// How many replies of the model a conversation already holds.
fn assistant_messages(messages: &Value) -> usize {
    messages
        .as_array()
        .map_or(0, |m| m.iter().filter(|m| m["role"] == "assistant").count())
}

/// The next reply for a request: by the marker in its messages, judge or agent.
fn route(
    state: &Mutex<State>,
    path: String,
    headers: HashMap<String, String>,
    body: Value,
) -> Reply {
    // The task's own messages: a system prompt may quote other tasks (experience
    // examples), whose markers must not route this request.
    let text = body["messages"]
        .as_array()
        .map(|m| {
            m.iter()
                .filter(|m| m["role"] != "system")
                .map(Value::to_string)
                .collect::<String>()
        })
        .unwrap_or_default();
    let body_messages = body["messages"].clone();
    let request = body.clone();
    let judge = body["messages"][0]["content"]
        .as_str()
        .is_some_and(|s| s.starts_with("You evaluate"));
    let mut state = state.lock().unwrap();
    let scripts = if judge { &state.judge } else { &state.agent };
    let found = scripts.keys().find(|m| text.contains(m.as_str())).cloned();
    if !state.forget {
        state.received.push(Received {
            path,
            marker: found.clone(),
            judge,
            headers,
            body,
        });
    }
    let fallback = match state.steps {
        Some(steps) if assistant_messages(&body_messages) + 1 < steps => Some(action(
            "execute_command",
            json!({"command": "true"}),
            "CONTINUE",
        )),
        _ => state.fallback.clone(),
    };
    let scripts = if judge {
        &mut state.judge
    } else {
        &mut state.agent
    };
    match found
        .and_then(|m| scripts.get_mut(&m))
        .and_then(VecDeque::pop_front)
    {
        Some(Reply::Computed(make)) => Reply::Content((make.0)(&request)),
        Some(reply) => reply,
        None => match fallback {
            Some(Reply::Computed(make)) => Reply::Content((make.0)(&request)),
            Some(reply) => reply,
            None => Reply::Status {
                code: 500,
                retry_after: None,
                body: "{\"error\": {\"message\": \"no scripted reply left\"}}".into(),
            },
        },
    }
}
