//! The Office API tools on Linux: one helper per desktop (`uno_helper.py`, run by
//! `/usr/bin/python3`, for which Debian builds `python3-uno`), started at the first call
//! inside the desktop's jail, beside the office it drives. It reaches LibreOffice over the
//! named pipe the office was started to accept (`--accept=pipe,...`, in the jail's own
//! `/tmp`), acts on the live document the user sees, and answers each call with one JSON
//! line. It ends with the desktop, like the app.

use tokio::net::unix::pipe;

use crate::desktop::error::DesktopError;
use crate::desktop::office_helper::OfficeHelper;
use crate::tool::{Blame, Blamed};

/// The helper's code, written into the desktop's `/tmp` at its start.
const HELPER: &str = include_str!("uno_helper.py");
/// Its name there.
const HELPER_FILE: &str = "ufo-batch-uno.py";
/// The interpreter python3-uno is built for (a pyenv's first on the PATH is not).
const PYTHON: &str = "/usr/bin/python3";
/// The office's automation pipe (each desktop jail has its own `/tmp`, so one name
/// serves every desktop).
pub(crate) const PIPE: &str = "ufo-batch";

/// Why the pipes to a started helper cannot be used.
#[derive(Debug, thiserror::Error)]
pub(super) enum UnoError {
    /// Its standard input.
    #[error("cannot talk to the Office API helper: {0}")]
    Talk(#[source] std::io::Error),
    /// Its standard output.
    #[error("cannot hear the Office API helper: {0}")]
    Hear(#[source] std::io::Error),
}

/// The machine's: the pipes are the runner's own.
impl Blamed for UnoError {
    fn blame(&self) -> Blame {
        Blame::Environment
    }
}

impl From<UnoError> for DesktopError {
    fn from(e: UnoError) -> Self {
        DesktopError::classified(e)
    }
}

/// The Linux helper: how it is started.
pub(super) struct Uno;

impl Uno {
    /// What the desktop writes before starting the helper: its code, as `HELPER_FILE`.
    pub(super) fn code() -> (&'static str, &'static str) {
        (HELPER_FILE, HELPER)
    }

    /// The helper's command line, the task's document (`document`, absolute) named.
    pub(super) fn argv(document: Option<&std::path::Path>) -> Vec<String> {
        let mut argv = vec![
            PYTHON.to_string(),
            format!("/tmp/{HELPER_FILE}"),
            PIPE.to_string(),
        ];
        argv.extend(document.map(|d| d.display().to_string()));
        argv
    }

    /// The helper whose standard input is written through `to` and whose standard
    /// output is read from `from`.
    pub(super) fn over(
        to: std::os::fd::OwnedFd,
        from: std::os::fd::OwnedFd,
    ) -> Result<OfficeHelper, UnoError> {
        let to = pipe::Sender::from_owned_fd(to).map_err(UnoError::Talk)?;
        let from = pipe::Receiver::from_owned_fd(from).map_err(UnoError::Hear)?;
        Ok(OfficeHelper::new(Box::new(to), Box::new(from)))
    }
}
