//! `ufo-batch read-document NAME` (hidden): reads a document's text or one cell from
//! standard input and prints the answer as one JSON object (`{"ok": TEXT}` or
//! `{"error": WHY}`). The runner starts it for each document check in a child process with
//! bounded memory and time, the document open as its standard input, so a document built
//! to exhaust a parser ends that child, never the runner.

use std::io::Read;

use crate::cli::ReadDocumentArgs;
use crate::document::{CellRef, DocumentError, TEXT_LIMIT, cell_value, text_of};

/// Reads and prints; the exit code is 0 whenever an answer was printed.
pub(super) fn read_document(args: &ReadDocumentArgs) -> u8 {
    let answer = read(args);
    let json = match answer {
        Ok(text) => serde_json::json!({ "ok": text }),
        Err(why) => serde_json::json!({ "error": why.to_string() }),
    };
    println!("{json}");
    0
}

fn read(args: &ReadDocumentArgs) -> Result<String, DocumentError> {
    let mut bytes = Vec::new();
    std::io::stdin().lock().read_to_end(&mut bytes)?;
    let text = match &args.cell {
        Some(cell) => cell_value(&bytes, args.sheet.as_deref(), CellRef::parse(cell)?)?,
        None => text_of(&args.name, &bytes)?,
    };
    if text.len() > TEXT_LIMIT {
        return Err(DocumentError::TooLong { bytes: text.len() });
    }
    Ok(text)
}
