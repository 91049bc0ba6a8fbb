//! `ufo-batch compare RUN_A RUN_B`: the comparison as markdown or JSON, on stdout and
//! optionally in a file; exit 1 when a task regressed.

use crate::cli::CompareArgs;
use crate::error::Error;
use crate::finished::compare as compare_runs;
use crate::render::compare_md;
use crate::rundir::{FileError, write_atomic};

/// Compares; 1 when a task regressed.
pub(super) fn compare(args: &CompareArgs) -> Result<u8, Error> {
    let c = compare_runs(&args.a, &args.b)?;
    let text = if args.json {
        serde_json::to_string_pretty(&c).map_err(|e| Error::internal(e.to_string()))? + "\n"
    } else {
        compare_md(&c)
    };
    print!("{text}");
    if let Some(out) = &args.out {
        write_atomic(out, text.as_bytes()).map_err(|e| FileError::write(out, e))?;
    }
    Ok(u8::from(c.regressed()))
}
