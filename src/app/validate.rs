//! `ufo-batch validate PATH...`: every problem of every task file, printed; exit 2 when
//! any file is bad.

use crate::batch::load_tasks;
use crate::cli::ValidateArgs;
use crate::error::Error;
use crate::render::validation_report;

/// Prints the validation report; 2 when some file has problems.
pub(super) fn validate(args: &ValidateArgs) -> Result<u8, Error> {
    let loaded = load_tasks(&args.paths, None)?;
    let (text, bad) = validation_report(&loaded);
    print!("{text}");
    Ok(if bad { 2 } else { 0 })
}
