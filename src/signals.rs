//! Turning Ctrl-C into stop tokens: the first interrupt stops scheduling and lets
//! running tasks finish; the second ends them at once.

use crate::pool::StopTokens;

/// Watches for interrupts for as long as the returned task lives.
pub fn watch_interrupts(stop: StopTokens) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_err() {
            return;
        }
        stop.interrupt();
        if tokio::signal::ctrl_c().await.is_err() {
            return;
        }
        stop.kill.cancel();
    })
}
