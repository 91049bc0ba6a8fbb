//! `ufo-batch validate PATH...`: every problem of every task file, printed; exit 2 when
//! any file is bad. With MCP servers in the config, they are started first and the plans'
//! calls of their tools are checked too.

use super::stdout::{Form, print};
use super::tools::start_mcp;
use crate::batch::{load_tasks_as, task_tools};
use crate::cli::ValidateArgs;
use crate::error::Error;
use crate::render::{Checked, validation_report};

/// Prints the validation report; 2 when some file has problems.
pub(super) fn validate(args: &ValidateArgs) -> Result<u8, Error> {
    let mcp = start_mcp(args.config.clone())?;
    let loaded = load_tasks_as(
        &args.paths,
        None,
        task_tools(mcp.as_ref().map(|(hub, _)| hub)).into(),
        Checked::of,
    )?;
    let (text, bad) = validation_report(&loaded);
    print(&text, Form::Text)?;
    Ok(if bad { 2 } else { 0 })
}
