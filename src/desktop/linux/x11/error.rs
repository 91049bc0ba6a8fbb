//! Why the display did not do what it was asked, and whose failure that is.

use std::path::PathBuf;

use x11rb::errors::{ConnectError, ConnectionError, ReplyError};

use crate::desktop::error::DesktopError;
use crate::tool::{Blame, Blamed};

/// Why the display did not do what it was asked.
#[derive(Debug, thiserror::Error)]
pub(in crate::desktop::linux) enum X11Error {
    /// Its socket does not take a connection.
    #[error("cannot connect to the display at {}: {source}", socket.display())]
    Connect {
        /// The socket.
        socket: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The connection could not be set up.
    #[error("the display failed: {0}")]
    Stream(#[source] std::io::Error),
    /// The display refused the connection.
    #[error("the display failed: {0}")]
    Setup(#[from] ConnectError),
    /// A request could not be sent.
    #[error("the display failed: {0}")]
    Request(#[from] ConnectionError),
    /// A request failed.
    #[error("the display failed: {0}")]
    Reply(#[from] ReplyError),
    /// The display cannot fake input.
    #[error("the display has no XTEST: {0}")]
    NoXtest(#[source] ReplyError),
    /// The thread of a request panicked.
    #[error("the display request panicked: {0}")]
    Panicked(#[source] tokio::task::JoinError),
    /// The display did not answer in time (an app grabbing the server).
    #[error("the display did not answer within {0}s")]
    NotAnswering(u64),
    /// Every spare keycode already types another character the task typed.
    #[error("the display has no spare key to type this character on")]
    NoSpareKey,
    /// The screen cannot be read.
    #[error("cannot take a screenshot: {0}")]
    Screenshot(#[source] ReplyError),
    /// A screen in a format this does not read.
    #[error("the display's pixel format is not 24-bit colour (depth {0})")]
    PixelFormat(u8),
}

/// The display is the machine's: its failures are the environment's. A character no
/// key is left to type is the agent's (it can set the text instead).
impl Blamed for X11Error {
    fn blame(&self) -> Blame {
        match self {
            Self::NoSpareKey => Blame::Agent,
            _ => Blame::Environment,
        }
    }
}

impl From<X11Error> for DesktopError {
    fn from(e: X11Error) -> Self {
        DesktopError::classified(e)
    }
}
