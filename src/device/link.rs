//! One device's connection, from the server's side: a task of its own owns the
//! WebSocket; others talk to it through a `Link`. It sends command frames, hands each
//! `command_results` frame to the call waiting for it (by `prev_response_id`), answers
//! heartbeats, and when the connection ends every call waiting on it fails as
//! disconnected. A frame that is not AIP is told about, never fatal.

use std::collections::HashMap;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;

use super::protocol::{ClientFrame, heartbeat_ok};

/// What a call to a device can end in besides an answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum CallError {
    /// No answer within the limit (UFO's clients answer nothing for a command they
    /// cannot route).
    Timeout(Duration),
    /// The connection ended, with why.
    Gone(String),
}

enum Order {
    Call {
        frame: String,
        response_id: String,
        reply: oneshot::Sender<Result<Value, CallError>>,
    },
    Close(String),
}

/// The handle of a device's connection.
#[derive(Clone, Debug)]
pub(crate) struct Link {
    orders: mpsc::UnboundedSender<Order>,
}

impl std::fmt::Debug for Order {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Call { response_id, .. } => write!(f, "Call({response_id})"),
            Self::Close(why) => write!(f, "Close({why})"),
        }
    }
}

impl Link {
    /// Sends `frame` (a command identified by `response_id`) and waits at most `limit`
    /// for its `action_results`.
    pub(crate) async fn call(
        &self,
        frame: String,
        response_id: String,
        limit: Duration,
    ) -> Result<Value, CallError> {
        let (reply, answer) = oneshot::channel();
        self.orders
            .send(Order::Call {
                frame,
                response_id,
                reply,
            })
            .map_err(|_| CallError::Gone("the connection is closed".to_string()))?;
        match tokio::time::timeout(limit, answer).await {
            Ok(Ok(result)) => result,
            Ok(Err(_)) => Err(CallError::Gone("the connection is closed".to_string())),
            Err(_) => Err(CallError::Timeout(limit)),
        }
    }

    /// Ends the connection, saying why.
    pub(crate) fn close(&self, why: &str) {
        let _ = self.orders.send(Order::Close(why.to_string()));
    }

    /// A link with no connection behind it (its calls fail at once).
    #[cfg(test)]
    pub(crate) fn detached() -> Self {
        let (orders, _) = mpsc::unbounded_channel();
        Self { orders }
    }
}

/// What a connection tells the runner while it runs.
pub(crate) type Notice = Box<dyn Fn(String) + Send + Sync>;

/// Serves a registered device's connection until it ends; returns why it ended.
/// `notice` hears what the device sent that was not AIP.
pub(crate) fn spawn<S>(
    ws: WebSocketStream<S>,
    notice: Notice,
) -> (Link, tokio::task::JoinHandle<String>)
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let (orders, inbox) = mpsc::unbounded_channel();
    let task = tokio::spawn(serve(ws, inbox, notice));
    (Link { orders }, task)
}

/// A close frame with `code` and `why` as its reason (cut to the 123 bytes a close
/// frame's reason may have): the client logs both.
pub(crate) fn close_frame(code: CloseCode, why: &str) -> CloseFrame {
    let mut end = why.len().min(123);
    while !why.is_char_boundary(end) {
        end -= 1;
    }
    CloseFrame {
        code,
        reason: why[..end].to_string().into(),
    }
}

/// How often a connection is pinged (the client's WebSocket library answers).
const PING_EVERY: Duration = Duration::from_secs(20);
/// How long a connection may be silent (no frame, no answer to pings) before it is
/// taken for dead: a device whose network went away sends no close.
const SILENCE: Duration = Duration::from_secs(90);

async fn serve<S>(
    mut ws: WebSocketStream<S>,
    mut inbox: mpsc::UnboundedReceiver<Order>,
    notice: Notice,
) -> String
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let mut waiting: Waiting = HashMap::new();
    let mut ping = tokio::time::interval(PING_EVERY);
    ping.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut heard = tokio::time::Instant::now();
    let why = loop {
        tokio::select! {
            _ = ping.tick() => {
                if heard.elapsed() > SILENCE {
                    let why = format!("no sign of life for {}s (no frame, no answer to pings)", SILENCE.as_secs());
                    let _ = ws.close(Some(close_frame(CloseCode::Away, &why))).await;
                    break why;
                }
                if ws.send(Message::Ping(Vec::new().into())).await.is_err() {
                    break "the connection dropped".to_string();
                }
            }
            order = inbox.recv() => match order {
                Some(Order::Call { frame, response_id, reply }) => {
                    // Calls given up on (their caller timed out) are forgotten.
                    waiting.retain(|_, r| !r.is_closed());
                    if let Err(e) = ws.send(Message::text(frame)).await {
                        let _ = reply.send(Err(CallError::Gone(format!("cannot send to it: {e}"))));
                        break format!("cannot send to it: {e}");
                    }
                    waiting.insert(response_id, reply);
                }
                Some(Order::Close(why)) => {
                    let _ = ws.close(Some(close_frame(CloseCode::Policy, &why))).await;
                    break why;
                }
                None => {
                    let why = "the run is over";
                    let _ = ws.close(Some(close_frame(CloseCode::Away, why))).await;
                    break why.to_string();
                }
            },
            frame = ws.next() => {
                if matches!(frame, Some(Ok(_))) {
                    heard = tokio::time::Instant::now();
                }
                if let Some(why) = received(&mut ws, frame, &mut waiting, &notice).await {
                    break why;
                }
            }
        }
    };
    for (_, reply) in waiting.drain() {
        let _ = reply.send(Err(CallError::Gone(why.clone())));
    }
    why
}

/// Calls waiting for their answers, by `response_id`.
type Waiting = HashMap<String, oneshot::Sender<Result<Value, CallError>>>;

/// Handles what came from the device: an answer goes to the call waiting for it, a
/// heartbeat is answered, anything else that is not AIP is told about. `Some` says why
/// the connection ended.
async fn received<S>(
    ws: &mut WebSocketStream<S>,
    frame: Option<Result<Message, tokio_tungstenite::tungstenite::Error>>,
    waiting: &mut Waiting,
    notice: &Notice,
) -> Option<String>
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    match frame {
        Some(Ok(Message::Text(text))) => match ClientFrame::parse(&text) {
            Ok(f) if f.kind == "command_results" => {
                let id = f.prev_response_id.unwrap_or_default();
                match waiting.remove(&id) {
                    Some(reply) => {
                        let _ = reply.send(Ok(f.action_results.unwrap_or(Value::Null)));
                    }
                    None => notice(format!(
                        "an answer to a command given up on (prev_response_id {id:?}: it timed out, or its task was stopped)"
                    )),
                }
            }
            Ok(f) if f.kind == "heartbeat" => {
                if ws.send(Message::text(heartbeat_ok())).await.is_err() {
                    return Some("the connection dropped".to_string());
                }
            }
            Ok(f) if f.kind == "error" => notice(format!(
                "it reported an error: {}",
                f.error.unwrap_or_default()
            )),
            Ok(_) => {}
            Err(e) => notice(e.to_string()),
        },
        Some(Ok(Message::Binary(_))) => {
            notice("a binary frame (AIP frames are JSON text)".to_string())
        }
        Some(Ok(Message::Close(_))) | None => return Some("it closed the connection".to_string()),
        Some(Ok(_)) => {}
        Some(Err(e)) => return Some(format!("the connection failed: {e}")),
    }
    None
}
