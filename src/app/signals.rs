//! Turning signals into stop tokens. The first Ctrl-C (or SIGTERM, as Kubernetes and
//! Slurm send before killing) stops scheduling and lets running tasks finish within a
//! grace period; a second signal, or the end of the grace period, stops them at once; a
//! third ends the process whatever it is doing. Before the first task has started (while
//! task files load), the first signal ends the process at once: nothing is lost.

use std::io::Write;
use std::time::Duration;

use crate::pool::StopTokens;

/// Watches for signals for as long as the returned task lives.
pub(crate) fn watch(stop: StopTokens, grace: Duration) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let Some(mut signals) = Signals::new() else {
            return;
        };
        let Some(first) = signals.next().await else {
            return;
        };
        if !stop.started() {
            let _ = writeln!(
                std::io::stderr(),
                "ufo-batch: interrupted ({first}) before any task started"
            );
            std::process::exit(130);
        }
        stop.interrupt(first, grace);
        tokio::select! {
            _ = signals.next() => {}
            () = tokio::time::sleep(grace) => {}
        }
        stop.kill.cancel();
        if let Some(third) = signals.next().await {
            let _ = writeln!(
                std::io::stderr(),
                "ufo-batch: stopped at once ({third}); run the same command again to resume"
            );
            std::process::exit(130);
        }
    })
}

/// The signals that stop a run.
struct Signals {
    #[cfg(unix)]
    interrupt: tokio::signal::unix::Signal,
    #[cfg(unix)]
    terminate: tokio::signal::unix::Signal,
}

impl Signals {
    #[cfg(unix)]
    fn new() -> Option<Self> {
        use tokio::signal::unix::{SignalKind, signal};
        Some(Self {
            interrupt: signal(SignalKind::interrupt()).ok()?,
            terminate: signal(SignalKind::terminate()).ok()?,
        })
    }

    #[cfg(not(unix))]
    fn new() -> Option<Self> {
        Some(Self {})
    }

    /// The next signal's name.
    #[cfg(unix)]
    async fn next(&mut self) -> Option<&'static str> {
        tokio::select! {
            s = self.interrupt.recv() => s.map(|()| "Ctrl-C"),
            s = self.terminate.recv() => s.map(|()| "SIGTERM"),
        }
    }

    #[cfg(not(unix))]
    async fn next(&mut self) -> Option<&'static str> {
        tokio::signal::ctrl_c().await.ok().map(|()| "Ctrl-C")
    }
}
