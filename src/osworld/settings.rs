//! Where a run finds OSWorld's parts: its cache folder (`--osworld-cache`, `[osworld]
//! cache`), the Python that has OSWorld's code (`[osworld] python`, else the venv
//! `scripts/setup-osworld.sh` makes beside the runner), and OSWorld's in-VM server
//! (`[osworld] server`, else the OSWorld checkout a task file is in, else the copy the
//! setup script made).

use std::path::{Path, PathBuf};

/// The server's program, in its folder.
pub(crate) const SERVER_MAIN: &str = "main.py";
/// The server's folder in an OSWorld checkout.
const SERVER_IN_CHECKOUT: &str = "desktop_env/server";

/// A run's OSWorld settings.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub(crate) struct OsWorldSettings {
    /// OSWorld's cache folder: `<task id>/<file>` for each task's downloads and gold
    /// files, as OSWorld keeps them.
    pub(crate) cache: Option<PathBuf>,
    /// The Python interpreter of a venv with OSWorld's code (`desktop-env`) and its
    /// server's packages.
    pub(crate) python: Option<PathBuf>,
    /// OSWorld's server folder (`desktop_env/server`, holding `main.py`).
    pub(crate) server: Option<PathBuf>,
}

impl OsWorldSettings {
    /// Whether nothing is set (`run.json` then says nothing of OSWorld).
    pub(crate) fn is_unset(&self) -> bool {
        *self == Self::default()
    }

    /// The Python to use: the configured one, else the setup script's venv beside the
    /// runner (`target/osworld/venv` for `target/release/ufo-batch`).
    pub(crate) fn python(&self) -> Result<PathBuf, String> {
        if let Some(python) = &self.python {
            return match python.is_file() {
                true => Ok(python.clone()),
                false => Err(format!(
                    "[osworld] python = {} is not a file",
                    python.display()
                )),
            };
        }
        let made = beside_runner("osworld/venv/bin/python");
        made.filter(|p| p.is_file()).ok_or_else(|| {
            "OSWorld's evaluator is not set up here: run scripts/setup-osworld.sh (a venv with desktop-env 1.0.2 and OSWorld's server packages), or set [osworld] python".to_string()
        })
    }

    /// OSWorld's server folder for the task file `task_file`: the configured one, else
    /// the OSWorld checkout the file is in, else the setup script's copy.
    pub(crate) fn server(&self, task_file: &Path) -> Result<PathBuf, String> {
        if let Some(server) = &self.server {
            return match server.join(SERVER_MAIN).is_file() {
                true => Ok(server.clone()),
                false => Err(format!(
                    "[osworld] server = {} holds no {SERVER_MAIN} (it is OSWorld's desktop_env/server folder)",
                    server.display()
                )),
            };
        }
        let in_checkout = task_file
            .ancestors()
            .skip(1)
            .map(|dir| dir.join(SERVER_IN_CHECKOUT))
            .find(|dir| dir.join(SERVER_MAIN).is_file());
        in_checkout
            .or_else(|| {
                beside_runner(&format!("osworld/OSWorld/{SERVER_IN_CHECKOUT}"))
                    .filter(|d| d.join(SERVER_MAIN).is_file())
            })
            .ok_or_else(|| {
                "OSWorld's server (desktop_env/server/main.py) is neither beside the task files nor set up: run scripts/setup-osworld.sh, or set [osworld] server".to_string()
            })
    }
}

/// `rel` in the folder above the runner's (`target/` for `target/release/ufo-batch`).
fn beside_runner(rel: &str) -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let above = exe.parent()?.parent()?;
    Some(above.join(rel))
}
