//! One device client's connection, from its first byte to its end: the WebSocket
//! handshake (its token checked), its registration (an id and a platform), the
//! server's acceptance (`heartbeat`/`ok`, as UFO's server answers), its tools listed,
//! and its place in the fleet until the connection ends. A client refused at any step
//! is told why, and so is the run (as news).

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use tokio::net::TcpStream;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::handshake::server::{ErrorResponse, Request, Response};
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;

use super::listing::list_tools;
use super::news::{Tell, printable, tell, tell_refusal};
use crate::device::config::DeviceSettings;
use crate::device::fleet::{Fleet, Platform};
use crate::device::link::{self, Link};
use crate::device::protocol::{self, ClientFrame, FrameError};
use crate::device::tools::DeviceTool;
use crate::event::DeviceNews;
use crate::event::Level;

/// How long a client has for the WebSocket handshake.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a connected client has to register.
const REGISTER_TIMEOUT: Duration = Duration::from_secs(30);
/// The longest device id.
const MAX_ID: usize = 128;

/// A client's connection once the handshake is done.
type Socket = WebSocketStream<TcpStream>;

/// Why a client that completed the handshake is refused before it joins the fleet:
/// told to the client and in the news.
#[derive(Debug, thiserror::Error)]
enum Refusal {
    /// Its first frame is binary (or another kind of frame).
    #[error("its first frame is not JSON text")]
    NotText,
    /// The connection failed before it registered.
    #[error("the connection failed: {0}")]
    Failed(#[source] tokio_tungstenite::tungstenite::Error),
    /// It closed the connection before it registered.
    #[error("it closed the connection")]
    Closed,
    /// It did not register in time.
    #[error("it did not register within {}s", REGISTER_TIMEOUT.as_secs())]
    Slow,
    /// Its first frame is not AIP.
    #[error(transparent)]
    Frame(#[from] FrameError),
    /// Its first frame is another kind of AIP frame.
    #[error("its first frame is `{0}`, not `register`")]
    NotRegister(String),
    /// Its registration has no id.
    #[error("its registration has no client_id")]
    NoClientId,
    /// Its id is not one (shown fit for the terminal).
    #[error(
        "its client_id {0} is not an id (at most {MAX_ID} characters, none of them control characters)"
    )]
    BadId(String),
    /// Its registration does not say its platform.
    #[error("device {0} does not say its platform (metadata.platform)")]
    NoPlatform(String),
}

/// Whether `given` is `secret`, in a time that depends on neither where they differ nor
/// how long the secret is.
fn same_secret(given: &str, secret: &str) -> bool {
    let (g, s) = (given.as_bytes(), secret.as_bytes());
    let mut differ = u8::from(g.len() != s.len());
    for (i, &b) in g.iter().enumerate() {
        differ |= b ^ s.get(i).copied().unwrap_or(!b);
    }
    differ == 0
}

/// The token of a handshake's URL (`?token=...`), decoded.
fn token_of(request: &Request) -> Option<String> {
    let query = request.uri().query()?;
    query.split('&').find_map(|pair| {
        let (k, v) = pair.split_once('=')?;
        (k == "token").then(|| {
            percent_encoding::percent_decode_str(v)
                .decode_utf8_lossy()
                .into_owned()
        })
    })
}

/// Serves the client connected as `stream` from `peer` until its connection ends;
/// `permit` is its place among the handshakes in progress, given back once it is
/// accepted.
pub(super) async fn serve_device(
    stream: TcpStream,
    peer: SocketAddr,
    settings: DeviceSettings,
    fleet: Arc<Fleet>,
    news: Tell,
    permit: tokio::sync::OwnedSemaphorePermit,
) {
    let Some(mut ws) = handshake(stream, peer, &settings, &news).await else {
        return;
    };
    let (id, platform) = match registration(&mut ws).await {
        Ok(registered) => registered,
        Err(why) => {
            refuse(&mut ws, &news, peer, &why.to_string()).await;
            return;
        }
    };
    if let Some(why) = fleet.refused(&id) {
        // Refused before, for good: told again, without a line in the run's output each
        // time the client retries.
        let _ = ws.send(Message::text(protocol::error(&why))).await;
        let _ = ws
            .close(Some(link::close_frame(CloseCode::Policy, &why)))
            .await;
        return;
    }
    let Some(platform) = platform.map(|p| Platform::named(&p)) else {
        refuse(&mut ws, &news, peer, &Refusal::NoPlatform(id).to_string()).await;
        return;
    };
    if ws
        .send(Message::text(protocol::heartbeat_ok()))
        .await
        .is_err()
    {
        return;
    }
    drop(permit);
    let joining = Joining {
        id,
        platform,
        peer,
        fleet,
        news,
    };
    joining.serve(ws, &settings).await;
}

/// The WebSocket handshake of `stream`, the client's token checked; `None` when it
/// failed or was refused (and the run told).
#[expect(
    clippy::result_large_err,
    reason = "tungstenite's handshake callback returns its own ErrorResponse"
)]
async fn handshake(
    stream: TcpStream,
    peer: SocketAddr,
    settings: &DeviceSettings,
    news: &Tell,
) -> Option<Socket> {
    let refused: Arc<Mutex<Option<String>>> = Arc::default();
    let why = Arc::clone(&refused);
    let token = settings.token.clone();
    let check = move |request: &Request, response: Response| -> Result<Response, ErrorResponse> {
        let deny = |status: u16, reason: &str| {
            *why.lock().unwrap_or_else(|e| e.into_inner()) = Some(reason.to_string());
            let mut r = ErrorResponse::new(Some(reason.to_string()));
            *r.status_mut() = tokio_tungstenite::tungstenite::http::StatusCode::from_u16(status)
                .unwrap_or(tokio_tungstenite::tungstenite::http::StatusCode::FORBIDDEN);
            Err(r)
        };
        match token_of(request) {
            Some(t) if same_secret(&t, &token) => Ok(response),
            Some(_) => deny(401, "wrong token"),
            None => deny(401, "no token (give ?token=... in the URL)"),
        }
    };
    let config = WebSocketConfig::default()
        .max_message_size(Some(settings.max_message))
        .max_frame_size(Some(settings.max_message));
    let handshake = tokio_tungstenite::accept_hdr_async_with_config(stream, check, Some(config));
    match tokio::time::timeout(HANDSHAKE_TIMEOUT, handshake).await {
        Ok(Ok(ws)) => Some(ws),
        Ok(Err(e)) => {
            let reason = refused
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clone()
                .unwrap_or_else(|| format!("not a WebSocket handshake ({e})"));
            tell_refusal(news, peer, &reason);
            None
        }
        Err(_) => {
            let why = format!("no handshake within {}s", HANDSHAKE_TIMEOUT.as_secs());
            tell_refusal(news, peer, &why);
            None
        }
    }
}

/// The client's registration: its id and the platform it names.
async fn registration(ws: &mut Socket) -> Result<(String, Option<String>), Refusal> {
    let first = tokio::time::timeout(REGISTER_TIMEOUT, first_frame(ws))
        .await
        .unwrap_or(Err(Refusal::Slow))?;
    if first.kind != "register" {
        return Err(Refusal::NotRegister(first.kind));
    }
    match first.client_id.clone().filter(|c| !c.trim().is_empty()) {
        Some(id) if id.len() > MAX_ID || id.chars().any(char::is_control) => {
            Err(Refusal::BadId(printable(&id, 200)))
        }
        Some(id) => Ok((id, first.platform())),
        None => Err(Refusal::NoClientId),
    }
}

/// The client's first AIP frame (pings and pongs before it are the client library's).
async fn first_frame(ws: &mut Socket) -> Result<ClientFrame, Refusal> {
    loop {
        match ws.next().await {
            Some(Ok(Message::Text(text))) => return Ok(ClientFrame::parse(&text)?),
            Some(Ok(Message::Ping(_) | Message::Pong(_))) => continue,
            Some(Ok(_)) => return Err(Refusal::NotText),
            Some(Err(e)) => return Err(Refusal::Failed(e)),
            None => return Err(Refusal::Closed),
        }
    }
}

/// Tells the client `why` it is refused and closes its connection; tells the run.
async fn refuse(ws: &mut Socket, news: &Tell, peer: SocketAddr, why: &str) {
    let _ = ws.send(Message::text(protocol::error(why))).await;
    let _ = ws
        .close(Some(link::close_frame(CloseCode::Policy, why)))
        .await;
    tell_refusal(news, peer, why);
}

/// A client accepted as the device `id`, about to join the fleet.
struct Joining {
    id: String,
    platform: Platform,
    peer: SocketAddr,
    fleet: Arc<Fleet>,
    news: Tell,
}

impl Joining {
    /// Lists the device's tools and, when it can run tasks, keeps it in the fleet until
    /// its connection ends.
    async fn serve(self, ws: Socket, settings: &DeviceSettings) {
        let Self {
            id,
            platform,
            peer,
            fleet,
            news,
        } = &self;
        let notice_news = news.clone();
        let notice_id = id.clone();
        let (link, task) = link::spawn(
            ws,
            Box::new(move |what| {
                tell(
                    &notice_news,
                    Level::Warn,
                    format!("device {notice_id}: {what}"),
                );
            }),
        );
        let tools = list_tools(&link, platform, settings).await;
        let Some(tools) = self.usable(tools, &link, task).await else {
            return;
        };
        let count = tools.tools.len();
        let (generation, replaced) = fleet.register(id, platform.clone(), link, tools.tools);
        let again = if replaced {
            "connected while its old connection was still open, which is now closed (a reconnect; if it happens again and again, two machines share the id: give each its own --client-id)"
        } else {
            "connected"
        };
        tell(
            news,
            Level::Info,
            format!("device {id} {again} from {peer} ({platform}, {count} tools)"),
        );
        let why = tools
            .task
            .await
            .unwrap_or_else(|e| format!("its connection's task failed: {e}"));
        fleet.gone(id, generation);
        tell(
            news,
            Level::Warn,
            format!("device {id} disconnected: {why}"),
        );
    }

    /// `tools` with the connection's task, when the device can run tasks with them;
    /// else the device is refused (and its connection closed), saying why.
    async fn usable(
        &self,
        tools: Vec<DeviceTool>,
        link: &Link,
        task: tokio::task::JoinHandle<String>,
    ) -> Option<Listed> {
        let (id, fleet, news) = (&self.id, &self.fleet, &self.news);
        if let Some((tool, argument)) = tools
            .iter()
            .find_map(|t| t.unfilled.first().map(|a| (t, a)))
        {
            // Every call of it would be refused, as the runner's fault: no task is given
            // to this device, and it is refused from now on (UFO's client reconnects,
            // and gives up after 5 refused registrations). With no other device to run
            // on, the run stops, saying what the config lacks; devices that work go on
            // working.
            let why = crate::mcp::unfilled_credential(
                &format!("device {id}'s tool `{}`", tool.spec.name),
                argument,
                &format!("[devices] inject = {{ {argument} = \"ENV_VAR\" }}"),
            )
            .to_string();
            link.close(&format!("the runner cannot fill in `{argument}`"));
            let _ = task.await;
            fleet.refuse(id, &why);
            let _ = news.send(DeviceNews {
                level: Level::Error,
                stops_run: fleet.load().connected == 0,
                text: printable(&why, 600),
            });
            return None;
        }
        if !tools.is_empty() && !task.is_finished() {
            return Some(Listed { tools, task });
        }
        // A device with no tool would fail every task handed to it.
        let refusal = if tools.is_empty() {
            "it lists no tools (no answer to list_tools, or an empty list)"
        } else {
            "its connection ended while it listed its tools"
        };
        link.close(refusal);
        let ended = task.await.unwrap_or_default();
        let why = if ended == refusal {
            String::new()
        } else {
            format!("; {ended}")
        };
        tell(
            news,
            Level::Warn,
            format!(
                "refused device {id} from {} ({}): {refusal}{why}",
                self.peer, self.platform
            ),
        );
        None
    }
}

/// A device's tools, and the task serving its connection.
struct Listed {
    tools: Vec<DeviceTool>,
    task: tokio::task::JoinHandle<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_compared_whole() {
        assert!(same_secret("abc-123", "abc-123"));
        assert!(!same_secret("abc-123", "abc-124"));
        assert!(!same_secret("abc", "abc-123"));
        assert!(!same_secret("abc-1234", "abc-123"));
        assert!(!same_secret("", "abc-123"));
        let request = Request::builder()
            .uri("/ws?x=1&token=a%20b")
            .body(())
            .unwrap();
        assert_eq!(token_of(&request).as_deref(), Some("a b"));
    }

    #[test]
    fn refusals_say_what_they_said() {
        assert_eq!(
            Refusal::NotRegister("heartbeat".into()).to_string(),
            "its first frame is `heartbeat`, not `register`"
        );
        assert_eq!(Refusal::Slow.to_string(), "it did not register within 30s");
        assert_eq!(
            Refusal::BadId("x".into()).to_string(),
            "its client_id x is not an id (at most 128 characters, none of them control characters)"
        );
        let frame = ClientFrame::parse("hello").unwrap_err();
        assert!(
            Refusal::from(frame)
                .to_string()
                .starts_with("not an AIP frame (")
        );
    }
}
