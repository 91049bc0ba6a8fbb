//! The run's device server: it listens for UFO's device clients
//! (`python -m ufo.client.client --ws --ws-server ws://HOST:PORT/ws?token=...`), checks
//! each one's token in the WebSocket handshake, reads its registration, accepts it as
//! UFO's server does (`heartbeat`/`ok`), asks it for its tools (`list_tools`) and puts it
//! in the fleet; when its connection ends it leaves the fleet. Everything worth telling
//! the user (a device connected, gone, refused, or sending what is not AIP) goes out as
//! news, never as an error of the run.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::handshake::server::{ErrorResponse, Request, Response};
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;

use super::config::DeviceSettings;
use super::fleet::{Fleet, Platform};
use super::link::{self, CallError, Link};
use super::protocol::{self, ClientFrame, Route};
use super::tools::{DeviceTool, from_listing};
use crate::event::Level;
use crate::tool::ToolCall;

/// How long a client has for the WebSocket handshake.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a connected client has to register.
const REGISTER_TIMEOUT: Duration = Duration::from_secs(30);

/// Something about the devices worth a line in the run's output.
#[derive(Clone, Debug)]
pub(crate) struct DeviceNews {
    /// How much it matters.
    pub(crate) level: Level,
    /// What happened.
    pub(crate) text: String,
    /// The run cannot go on as configured: it stops (no more tasks start), saying why.
    pub(crate) stops_run: bool,
}

/// The device server of a run.
pub(crate) struct DeviceHub {
    /// The devices connected.
    pub(crate) fleet: Arc<Fleet>,
    /// How it serves them.
    pub(crate) settings: DeviceSettings,
    /// Where it listens.
    pub(crate) addr: SocketAddr,
    news: Mutex<Option<mpsc::UnboundedReceiver<DeviceNews>>>,
    accept: tokio::task::AbortHandle,
    /// The device each task last ran on (a retry prefers another).
    last: Mutex<std::collections::HashMap<String, String>>,
}

impl DeviceHub {
    /// Listens on `settings.listen`; `Err` when the address cannot be used.
    pub(crate) async fn start(settings: DeviceSettings) -> Result<Arc<Self>, String> {
        let listener = TcpListener::bind(settings.listen)
            .await
            .map_err(|e| format!("cannot listen for devices on {}: {e}", settings.listen))?;
        let addr = listener
            .local_addr()
            .map_err(|e| format!("cannot listen for devices: {e}"))?;
        let fleet = Arc::new(Fleet::default());
        let (tell, news) = mpsc::unbounded_channel();
        let accept = tokio::spawn(accept_loop(
            listener,
            settings.clone(),
            Arc::clone(&fleet),
            tell,
        ))
        .abort_handle();
        Ok(Arc::new(Self {
            fleet,
            settings,
            addr,
            news: Mutex::new(Some(news)),
            accept,
            last: Mutex::default(),
        }))
    }

    /// Notes that `task` runs on `device`.
    pub(crate) fn ran_on(&self, task: &str, device: &str) {
        self.last
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(task.to_string(), device.to_string());
    }

    /// The device `task` last ran on.
    pub(crate) fn last_device(&self, task: &str) -> Option<String> {
        self.last
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(task)
            .cloned()
    }

    /// Ends every device's connection, politely (the run is over).
    pub(crate) fn close(&self) {
        self.accept.abort();
        self.fleet.close_all("the run is over");
    }

    /// The news, to be read once by whoever reports them.
    pub(crate) fn take_news(&self) -> Option<mpsc::UnboundedReceiver<DeviceNews>> {
        self.news.lock().unwrap_or_else(|e| e.into_inner()).take()
    }
}

impl Drop for DeviceHub {
    fn drop(&mut self) {
        self.accept.abort();
    }
}

type Tell = mpsc::UnboundedSender<DeviceNews>;

fn tell(news: &Tell, level: Level, text: String) {
    let text = printable(&text, 600);
    let _ = news.send(DeviceNews {
        level,
        text,
        stops_run: false,
    });
}

async fn accept_loop(
    listener: TcpListener,
    settings: DeviceSettings,
    fleet: Arc<Fleet>,
    news: Tell,
) {
    let handshakes = Arc::new(tokio::sync::Semaphore::new(HANDSHAKES));
    loop {
        let Ok((stream, peer)) = listener.accept().await else {
            tokio::time::sleep(Duration::from_millis(50)).await;
            continue;
        };
        let _ = stream.set_nodelay(true);
        let Ok(permit) = Arc::clone(&handshakes).acquire_owned().await else {
            return;
        };
        tokio::spawn(serve_device(
            stream,
            peer,
            settings.clone(),
            Arc::clone(&fleet),
            news.clone(),
            permit,
        ));
    }
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

/// Handshakes in progress at once; more wait (each may take `HANDSHAKE_TIMEOUT`).
const HANDSHAKES: usize = 64;
/// The longest device id.
const MAX_ID: usize = 128;

/// Text a device sent, fit for one line of the run's output: control characters
/// escaped (a device must not write lines or terminal codes of its own), at most `max`
/// characters.
fn printable(text: &str, max: usize) -> String {
    let escaped: String = text
        .chars()
        .flat_map(|c| {
            let shown: Vec<char> = if c.is_control() {
                c.escape_default().collect()
            } else {
                vec![c]
            };
            shown
        })
        .collect();
    crate::text::shorten(&escaped, max)
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

#[expect(
    clippy::result_large_err,
    reason = "tungstenite's handshake callback returns its own ErrorResponse"
)]
async fn serve_device(
    stream: TcpStream,
    peer: SocketAddr,
    settings: DeviceSettings,
    fleet: Arc<Fleet>,
    news: Tell,
    permit: tokio::sync::OwnedSemaphorePermit,
) {
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
    let mut ws = match tokio::time::timeout(HANDSHAKE_TIMEOUT, handshake).await {
        Ok(Ok(ws)) => ws,
        Ok(Err(e)) => {
            let reason = refused
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clone()
                .unwrap_or_else(|| format!("not a WebSocket handshake ({e})"));
            tell_refusal(&news, peer, &reason);
            return;
        }
        Err(_) => {
            let why = format!("no handshake within {}s", HANDSHAKE_TIMEOUT.as_secs());
            tell_refusal(&news, peer, &why);
            return;
        }
    };
    let registration = tokio::time::timeout(REGISTER_TIMEOUT, async {
        loop {
            // Pings and pongs before the registration are the client library's own.
            match ws.next().await {
                Some(Ok(Message::Text(text))) => return ClientFrame::parse(&text),
                Some(Ok(Message::Ping(_) | Message::Pong(_))) => continue,
                Some(Ok(_)) => return Err("its first frame is not JSON text".to_string()),
                Some(Err(e)) => return Err(format!("the connection failed: {e}")),
                None => return Err("it closed the connection".to_string()),
            }
        }
    })
    .await
    .unwrap_or_else(|_| {
        Err(format!(
            "it did not register within {}s",
            REGISTER_TIMEOUT.as_secs()
        ))
    });
    let (id, platform) = match registration {
        Ok(f) if f.kind == "register" => match f.client_id.clone().filter(|c| !c.trim().is_empty())
        {
            Some(id) if id.len() > MAX_ID || id.chars().any(char::is_control) => {
                let why = format!(
                    "its client_id {} is not an id (at most {MAX_ID} characters, none of them control characters)",
                    printable(&id, 200)
                );
                refuse(&mut ws, &news, peer, &why).await;
                return;
            }
            Some(id) => (id, f.platform()),
            None => {
                refuse(&mut ws, &news, peer, "its registration has no client_id").await;
                return;
            }
        },
        Ok(f) => {
            refuse(
                &mut ws,
                &news,
                peer,
                &format!("its first frame is `{}`, not `register`", f.kind),
            )
            .await;
            return;
        }
        Err(e) => {
            refuse(&mut ws, &news, peer, &e).await;
            return;
        }
    };
    if let Some(why) = fleet.refused(&id) {
        // Refused before, for good: told again, without a line in the run's output each
        // time the client retries.
        let _ = ws.send(Message::text(protocol::error(&why))).await;
        let close = super::link::close_frame(
            tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode::Policy,
            &why,
        );
        let _ = ws.close(Some(close)).await;
        return;
    }
    let Some(platform) = platform.map(|p| Platform::named(&p)) else {
        refuse(
            &mut ws,
            &news,
            peer,
            &format!("device {id} does not say its platform (metadata.platform)"),
        )
        .await;
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
    let tools = list_tools(&link, &platform, &settings).await;
    if let Some((tool, argument)) = tools
        .iter()
        .find_map(|t| t.unfilled.first().map(|a| (t, a)))
    {
        // Every call of it would be refused, as the runner's fault: no task is given to
        // this device, and it is refused from now on (UFO's client reconnects, and gives
        // up after 5 refused registrations). With no other device to run on, the run
        // stops, saying what the config lacks; devices that work go on working.
        let why = crate::mcp::unfilled_credential(
            &format!("device {id}'s tool `{}`", tool.spec.name),
            argument,
            &format!("[devices] inject = {{ {argument} = \"ENV_VAR\" }}"),
        )
        .to_string();
        link.close(&format!("the runner cannot fill in `{argument}`"));
        let _ = task.await;
        fleet.refuse(&id, &why);
        let _ = news.send(DeviceNews {
            level: Level::Error,
            stops_run: fleet.load().connected == 0,
            text: printable(&why, 600),
        });
        return;
    }
    let count = tools.len();
    if count == 0 || task.is_finished() {
        // A device with no tool would fail every task handed to it.
        let refusal = if count == 0 {
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
            &news,
            Level::Warn,
            format!("refused device {id} from {peer} ({platform}): {refusal}{why}"),
        );
        return;
    }
    let (generation, replaced) = fleet.register(&id, platform.clone(), link, tools);
    let again = if replaced {
        "connected while its old connection was still open, which is now closed (a reconnect; if it happens again and again, two machines share the id: give each its own --client-id)"
    } else {
        "connected"
    };
    tell(
        &news,
        Level::Info,
        format!("device {id} {again} from {peer} ({platform}, {count} tools)"),
    );
    let why = task
        .await
        .unwrap_or_else(|e| format!("its connection's task failed: {e}"));
    fleet.gone(&id, generation);
    tell(
        &news,
        Level::Warn,
        format!("device {id} disconnected: {why}"),
    );
}

async fn refuse<S>(
    ws: &mut tokio_tungstenite::WebSocketStream<S>,
    news: &Tell,
    peer: SocketAddr,
    why: &str,
) where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    let _ = ws.send(Message::text(protocol::error(why))).await;
    let close = super::link::close_frame(
        tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode::Policy,
        why,
    );
    let _ = ws.close(Some(close)).await;
    tell_refusal(news, peer, why);
}

/// How often refusals of one address are told (a flood of bad handshakes must not
/// flood the run's output).
const REFUSALS_EVERY: Duration = Duration::from_secs(10);

/// A kind of refusal of one address: the address and the reason's first words.
type RefusalKind = (std::net::IpAddr, String);

/// When a kind of refusal was last told, and how many were not told since.
#[derive(Default)]
struct Told {
    at: Option<std::time::Instant>,
    untold: u64,
}

/// Kinds of refusal remembered at most (beyond, the memory starts afresh: many
/// addresses must not grow it without bound).
const REFUSALS_KEPT: usize = 4096;

/// Each kind of refusal's last telling.
static REFUSALS: Mutex<Option<std::collections::HashMap<RefusalKind, Told>>> = Mutex::new(None);

/// Tells that a connection from `peer` was refused, each kind of refusal of an address
/// at most once every `REFUSALS_EVERY` (the next line counts those left untold).
fn tell_refusal(news: &Tell, peer: SocketAddr, why: &str) {
    let mut guard = REFUSALS.lock().unwrap_or_else(|e| e.into_inner());
    let seen = guard.get_or_insert_with(Default::default);
    if seen.len() >= REFUSALS_KEPT {
        seen.clear();
    }
    let kind = (peer.ip(), why.chars().take(24).collect::<String>());
    let entry = seen.entry(kind).or_default();
    if entry.at.is_some_and(|told| told.elapsed() < REFUSALS_EVERY) {
        entry.untold += 1;
        return;
    }
    let untold = std::mem::take(&mut entry.untold);
    entry.at = Some(std::time::Instant::now());
    drop(guard);
    let more = match untold {
        0 => String::new(),
        n => format!(
            " ({n} more from {} refused since, not each told)",
            peer.ip()
        ),
    };
    tell(
        news,
        Level::Warn,
        format!("refused a connection from {peer}: {why}{more}"),
    );
}

/// Tools a Windows device's HostAgent has that go through it even when its AppAgent
/// lists them too.
const HOST_ONLY: [&str; 3] = [
    "select_application_window",
    "get_desktop_app_info",
    "capture_desktop_screenshot",
];

/// The agents whose tool sets a device of `platform` is asked for.
fn routes(platform: &Platform) -> Vec<Route> {
    let agents: &[&str] = match platform {
        Platform::Windows => &["HostAgent", "AppAgent"],
        _ => &["LinuxAgent"],
    };
    agents
        .iter()
        .map(|a| Route {
            agent_name: (*a).to_string(),
            ..Route::default()
        })
        .collect()
}

/// Asks the device for its tools through each agent it serves; an agent that does not
/// answer (UFO's clients answer nothing for an agent they have no tools for) adds none.
async fn list_tools(
    link: &Link,
    platform: &Platform,
    settings: &DeviceSettings,
) -> Vec<DeviceTool> {
    let injected = |name: &str| settings.inject.iter().any(|i| i.argument == name);
    let mut tools: Vec<DeviceTool> = Vec::new();
    for route in routes(platform) {
        let call = ToolCall::action("list_tools", serde_json::Map::new());
        let action = protocol::action(&call, &serde_json::Map::new());
        let response_id = format!("list-{}", call.call_id);
        let frame = protocol::command(&route, &[action], "ufo-batch", "list_tools", &response_id);
        match link
            .call(frame, response_id, settings.command_timeout)
            .await
        {
            Ok(results) => {
                let listed = protocol::result_of(&call, &results).result;
                for tool in from_listing(&listed, &route, &injected) {
                    match tools.iter_mut().find(|t| t.spec.name == tool.spec.name) {
                        // A tool both agents list goes through the AppAgent, but the
                        // HostAgent's own (window selection, the desktop's listing).
                        Some(known) if !HOST_ONLY.contains(&known.spec.name.as_ref()) => {
                            *known = tool
                        }
                        Some(_) => {}
                        None => tools.push(tool),
                    }
                }
            }
            Err(CallError::Timeout(_) | CallError::Gone(_)) => {}
        }
    }
    tools
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
}
