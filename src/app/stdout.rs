//! What a subcommand prints on standard output: secrets masked, control codes shown as
//! escapes (but in JSON, which escapes them itself), and a reader that went away (`| head`)
//! ends the printing quietly, not the command: its files are written, its exit code holds.

use std::io::Write;

use crate::error::Error;

/// How printed text is shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Form {
    /// Text for a person: control codes become escapes.
    Text,
    /// JSON, exact (its strings escape control codes already).
    Json,
}

/// Prints `text` on standard output.
pub(super) fn print(text: &str, form: Form) -> Result<(), Error> {
    let scrubbed = crate::secrets::scrub(text);
    let shown = match form {
        Form::Text => crate::text::printable(&scrubbed),
        Form::Json => scrubbed,
    };
    let mut out = std::io::stdout().lock();
    match out.write_all(shown.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(Error::internal(format!("cannot print the result: {e}"))),
    }
}

/// Prints `text` on standard error, as [`print`] shows text; a closed standard error is
/// not an error.
pub(super) fn note(text: &str) {
    let scrubbed = crate::secrets::scrub(text);
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "{}", crate::text::printable(&scrubbed));
}
