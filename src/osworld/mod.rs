//! OSWorld on ufo-batch's desktops, with no VM: what a run needs of OSWorld's parts
//! (`settings`), what OSWorld's code has (`probe`), whether a task can run here
//! (`support`), the cache as each attempt gets it (`cache`), and OSWorld's part of a
//! task's desktop (`room`: the home as OSWorld's VM image has it (`profile`), OSWorld's
//! own server, and the bridge to OSWorld's own setup controller and evaluator
//! (`driver`, `driver.py`)). The task format is `task::osworld`'s; OSWorld's code
//! decides every step and every score, none of it is re-implemented here.

mod cache;
mod driver;
mod probe;
mod profile;
mod room;
mod settings;
mod support;

use std::sync::Arc;

pub(crate) use driver::{LastAction, Scored};
pub(crate) use probe::Capabilities;
pub(crate) use room::{OsWorldPlan, Room};
pub(crate) use settings::OsWorldSettings;
pub(crate) use support::Support;

/// The evaluator bridge's code (written where its Python runs it).
const DRIVER: &str = include_str!("driver.py");
/// Its file name there.
const DRIVER_FILE: &str = "driver.py";
/// OSWorld's server's port, on the desktop's own loopback.
const SERVER_PORT: &str = "5000";
/// The server, as the bridge reaches it.
const SERVER_URL: &str = "http://127.0.0.1:5000";

/// A run's OSWorld: its settings, and what OSWorld's code has, asked once when the first
/// OSWorld task starts.
#[derive(Debug)]
pub(crate) struct OsWorldRun {
    /// The settings.
    pub(crate) settings: OsWorldSettings,
    code: tokio::sync::OnceCell<Capabilities>,
}

impl OsWorldRun {
    /// The run's OSWorld under `settings`.
    pub(crate) fn new(settings: OsWorldSettings) -> Arc<Self> {
        Arc::new(Self {
            settings,
            code: tokio::sync::OnceCell::new(),
        })
    }

    /// Whether `task` (of the file `file`) runs here, OSWorld's code asked first if no
    /// task asked yet.
    pub(crate) async fn support(
        &self,
        task: &crate::task::osworld::OsWorldTask,
        file: &std::path::Path,
    ) -> Support {
        let code = self
            .code
            .get_or_try_init(|| async {
                let python = self.settings.python()?;
                let scratch = tempfile::Builder::new()
                    .prefix("ufo-batch-osworld-")
                    .tempdir()
                    .map_err(|e| format!("cannot make a folder for OSWorld's probe: {e}"))?;
                probe::probe(&python, scratch.path()).await
            })
            .await;
        // A probe that failed is asked again by the next task.
        match code {
            Ok(code) => support::support(task, file, &self.settings, Ok(code)),
            Err(why) => support::support(task, file, &self.settings, Err(&why)),
        }
    }
}
