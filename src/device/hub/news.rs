//! What the device server tells the run (news, never errors of the run): a line about
//! a device, made fit for the terminal (a device must not write lines or terminal codes
//! of its own), and refusals of connections, told at most so often per address and
//! reason.

use std::net::SocketAddr;
use std::sync::Mutex;
use std::time::Duration;

use tokio::sync::mpsc;

use crate::event::{DeviceNews, Level};

/// Where news goes.
pub(super) type Tell = mpsc::UnboundedSender<DeviceNews>;

/// Tells `text` at `level`.
pub(super) fn tell(news: &Tell, level: Level, text: String) {
    let text = printable(&text, 600);
    let _ = news.send(DeviceNews {
        level,
        text,
        stops_run: false,
    });
}

/// Text a device sent, fit for one line of the run's output: control characters
/// escaped (a device must not write lines or terminal codes of its own), at most `max`
/// characters.
pub(super) fn printable(text: &str, max: usize) -> String {
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
pub(super) fn tell_refusal(news: &Tell, peer: SocketAddr, why: &str) {
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
