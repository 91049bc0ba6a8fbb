//! `ufo-batch validate PATH...`: every problem of every task file, printed; exit 2 when
//! any file is bad. With MCP servers in the config, they are started first and the plans'
//! calls of their tools are checked too; with `[devices]` in it, a tool no one here
//! offers is a warning (a device may), as in `run --devices`.

use super::stdout::{Form, print};
use super::tools::start_mcp;
use crate::batch::{load_tasks_as, task_tools};
use crate::cli::ValidateArgs;
use crate::error::Error;
use crate::render::{Checked, validation_report};

/// Prints the validation report; 2 when some file has problems.
pub(super) fn validate(args: &ValidateArgs) -> Result<u8, Error> {
    let mcp = start_mcp(args.config.clone())?;
    let mut tools = task_tools(mcp.as_ref().map(|(hub, _)| hub));
    let (file, _) = crate::config::read_config(args.config.clone())?;
    if file.devices.is_configured() {
        // As `run --devices` does: a device's tools are known once it connects.
        tools.push(crate::tool::ToolSpec::any());
    }
    let loaded = load_tasks_as(&args.paths, None, tools.into(), Checked::of)?;
    let (text, bad) = validation_report(&loaded);
    print(&text, Form::Text)?;
    Ok(if bad { 2 } else { 0 })
}
