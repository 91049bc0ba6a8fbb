//! `ufo-batch read-document` (hidden): reads a document's text or one cell and prints the
//! answer as one JSON object (`{"ok": TEXT}` or `{"error": WHY}`). The runner starts it
//! for each document check in a child process with bounded memory and time, so a
//! document built to exhaust a parser ends that child, never the runner.

use crate::cli::ReadDocumentArgs;
use crate::document::{CellRef, cell_value, text_of};

/// Reads and prints; the exit code is 0 whenever an answer was printed.
pub(super) fn read_document(args: &ReadDocumentArgs) -> u8 {
    let answer = read(args);
    let json = match answer {
        Ok(text) => serde_json::json!({ "ok": text }),
        Err(why) => serde_json::json!({ "error": why }),
    };
    println!("{json}");
    0
}

fn read(args: &ReadDocumentArgs) -> Result<String, String> {
    let bytes = std::fs::read(&args.path).map_err(|e| e.to_string())?;
    match &args.cell {
        Some(cell) => {
            let at = CellRef::parse(cell)?;
            cell_value(&bytes, args.sheet.as_deref(), at).map_err(|e| e.to_string())
        }
        None => text_of(&args.path, &bytes).map_err(|e| e.to_string()),
    }
}
