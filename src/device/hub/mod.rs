//! The run's device server: it listens for UFO's device clients
//! (`python -m ufo.client.client --ws --ws-server ws://HOST:PORT/ws?token=...`), checks
//! each one's token in the WebSocket handshake, reads its registration, accepts it as
//! UFO's server does (`heartbeat`/`ok`), asks it for its tools (`list_tools`) and puts it
//! in the fleet; when its connection ends it leaves the fleet. Everything worth telling
//! the user (a device connected, gone, refused, or sending what is not AIP) goes out as
//! news, never as an error of the run (`news`). A client's connection is served from
//! its handshake to its end in `admit`; its tools are asked for in `listing`.

mod admit;
mod listing;
mod news;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::sync::mpsc;

use super::config::DeviceSettings;
use super::fleet::Fleet;
use news::Tell;

pub(crate) use crate::event::DeviceNews;

/// Handshakes in progress at once; more wait (each may take `admit`'s handshake time).
const HANDSHAKES: usize = 64;

/// Why the run cannot listen for devices (told before the run starts).
#[derive(Debug, thiserror::Error)]
pub(crate) enum ListenError {
    /// The address cannot be listened on.
    #[error("cannot listen for devices on {addr}: {source}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The address listened on cannot be known.
    #[error("cannot listen for devices: {0}")]
    Address(#[source] std::io::Error),
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
    pub(crate) async fn start(settings: DeviceSettings) -> Result<Arc<Self>, ListenError> {
        let listener =
            TcpListener::bind(settings.listen)
                .await
                .map_err(|source| ListenError::Bind {
                    addr: settings.listen,
                    source,
                })?;
        let addr = listener.local_addr().map_err(ListenError::Address)?;
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
        tokio::spawn(admit::serve_device(
            stream,
            peer,
            settings.clone(),
            Arc::clone(&fleet),
            news.clone(),
            permit,
        ));
    }
}
