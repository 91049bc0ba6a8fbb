//! Why a task's jail cannot be started or used, and whose failure that is: the machine's
//! (a jail that cannot be made, a socket that breaks, a command that cannot start) but
//! for a fault of the runner's own.

use std::io;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use super::protocol::Event;
use crate::tool::{Blame, Blamed, Failure};

/// A jail that cannot be started or used (the runner's side).
#[derive(Debug, thiserror::Error)]
pub(crate) enum JailError {
    /// The probe's scratch folder cannot be made.
    #[error("cannot make {}: {source}", path.display())]
    Scratch {
        /// The folder.
        path: PathBuf,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// A socket pair cannot be made.
    #[error("cannot make a socket: {0}")]
    Socket(#[source] io::Error),
    /// The jail's socket cannot be made non-blocking or given to the runtime.
    #[error("cannot use the jail's socket: {0}")]
    UseSocket(#[source] io::Error),
    /// The blocking thread that asks the factory for a jail failed.
    #[error("cannot start a jail: {0}")]
    Join(#[source] tokio::task::JoinError),
    /// The probe cannot read the jail's socket.
    #[error("cannot read the jail's socket: {0}")]
    Read(#[source] io::Error),
    /// The jail said nothing in time.
    #[error("the jail was not ready within {0:?}")]
    NotReady(Duration),
    /// The jail's socket closed before it said it was ready.
    #[error("the jail ended before it was ready")]
    EndedBeforeReady,
    /// The jail or the factory could not make the jail, in its own words (a `Fatal`
    /// event: the jail binary's errors reach the runner as text).
    #[error("{0}")]
    Refused(String),
    /// A started jail could not set itself up, in its own words.
    #[error("the task's jail cannot be made: {0}")]
    Fatal(String),
    /// A started jail went away before it was ready.
    #[error("the task's jail cannot be made: {0}")]
    NotMade(#[source] Gone),
    /// A command could not start, in the jail's words (a `SpawnFailed` event).
    #[error("{0}")]
    SpawnFailed(String),
    /// The jail is gone.
    #[error(transparent)]
    Gone(#[from] Gone),
    /// The jail went away while a command was starting, for no reason it gave.
    #[error("the jail ended unexpectedly")]
    EndedUnexpectedly,
    /// The jail's socket failed while a request was sent.
    #[error("the jail's socket failed: {0}")]
    SocketFailed(#[source] io::Error),
    /// The jail does not take a request.
    #[error("the jail is gone: {0}")]
    Send(#[source] io::Error),
    /// The factory cannot be started.
    #[error("cannot start {}: {source}", binary.display())]
    StartFactory {
        /// The jail binary.
        binary: PathBuf,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// The factory's socket cannot be given its timeout.
    #[error("cannot use the jail factory's socket: {0}")]
    FactorySocket(#[source] io::Error),
    /// No factory after starting one (a bug).
    #[error("the jail factory did not start")]
    FactoryNotStarted,
    /// The factory's socket failed, or it sent something unreadable.
    #[error("the jail factory is gone: {0}")]
    FactoryGone(#[source] io::Error),
    /// The factory made a jail but sent no pidfd for it.
    #[error("the jail factory sent no pidfd")]
    NoPidfd,
    /// The factory answered something other than a jail.
    #[error("the jail factory answered {0:?}")]
    UnexpectedAnswer(Event),
    /// The factory said nothing in time.
    #[error("the jail factory did not answer within {0:?}")]
    FactorySilent(Duration),
    /// The factory's socket closed.
    #[error("the jail factory ended")]
    FactoryEnded,
}

/// Why a jail is gone, kept for every command that waits on it (so it can be cloned).
#[derive(Clone, Debug, thiserror::Error)]
pub(crate) enum Gone {
    /// Its socket cannot be waited on.
    #[error("the jail's socket failed")]
    Broken,
    /// Its socket closed: the jail ended (killed, or its init died).
    #[error("the jail ended")]
    Ended,
    /// Its socket cannot be read.
    #[error("the jail's socket failed: {0}")]
    Socket(#[source] Arc<io::Error>),
}

impl Blamed for JailError {
    /// The machine's: a jail or a command that cannot start, a socket or a factory that
    /// fails is retried (the probe made a jail when the run started). The runner's own
    /// faults (a panicked thread, a factory it did not keep) are its.
    fn blame(&self) -> Blame {
        match self {
            Self::Join(_) | Self::FactoryNotStarted => Blame::Runner,
            _ => Blame::Environment,
        }
    }
}

impl From<JailError> for Failure {
    fn from(e: JailError) -> Self {
        e.failure()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_jail_that_fails_is_the_machines_and_says_its_cause_once() {
        let io = || io::Error::from_raw_os_error(libc::EMFILE);
        let cases = [
            (
                JailError::NotMade(Gone::Socket(Arc::new(io()))),
                format!(
                    "the task's jail cannot be made: the jail's socket failed: {}",
                    io()
                ),
            ),
            (
                JailError::Fatal("cannot mount /proc: Operation not permitted".into()),
                "the task's jail cannot be made: cannot mount /proc: Operation not permitted"
                    .to_string(),
            ),
            (
                JailError::SpawnFailed("cannot run ls: No such file or directory".into()),
                "cannot run ls: No such file or directory".to_string(),
            ),
            (JailError::Gone(Gone::Ended), "the jail ended".to_string()),
            (
                JailError::NotReady(Duration::from_secs(20)),
                "the jail was not ready within 20s".to_string(),
            ),
        ];
        for (e, text) in cases {
            let failure = Failure::from(e);
            assert_eq!(failure.blame, Blame::Environment);
            assert_eq!(failure.message, text);
        }
        assert_eq!(JailError::FactoryNotStarted.blame(), Blame::Runner);
    }
}
