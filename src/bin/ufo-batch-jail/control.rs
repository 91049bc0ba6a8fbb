//! The jail's control socket (its standard input): the one line to the runner, on which
//! the jail tells its events.

use std::os::fd::RawFd;
use std::process::ExitCode;

use crate::protocol::{Event, frame, send_with_fds};

/// The control socket: the jail's standard input.
pub(crate) const CONTROL: RawFd = 0;

/// Sends an event on the control socket (the runner may be gone: then nobody listens).
pub(crate) fn tell(event: &Event) {
    let bytes = frame(&event.encode());
    let mut sent = 0;
    while sent < bytes.len() {
        match send_with_fds(CONTROL, &bytes[sent..], &[]) {
            Ok(0) | Err(_) => return,
            Ok(n) => sent += n,
        }
    }
}

/// Says why the jail cannot be made, and ends.
pub(crate) fn fatal(why: &dyn std::error::Error) -> ExitCode {
    // The event carries words: the runner's side has no use for this binary's types.
    tell(&Event::Fatal {
        message: why.to_string(),
    });
    ExitCode::from(1)
}
