//! Carrying out one of UFO's Office API tools (`desktop::office`): checked against its
//! parameters and against the app the actions go to, then called on the platform's
//! office automation (`Backend::office`). Its answer is UFO's text (and for
//! `get_range_values` the rows), which a replay compares.

use serde_json::Value;

use super::{DesktopExecutor, NAMESPACE};
use crate::desktop::office::{api_of, office_tools, refused_on, result};
use crate::tool::{Failure, ToolCall, ToolResult};

pub(super) async fn call(ex: &mut DesktopExecutor, command: &ToolCall) -> ToolResult {
    // What the agent asked that cannot be done here.
    let failed =
        |why: String| ToolResult::failure(command, NAMESPACE, Failure::agent(why), Value::Null);
    let tool = command.tool_name.as_str();
    let Some(spec) = office_tools().iter().find(|t| t.name == tool) else {
        return failed(format!("`{tool}` is not an API tool"));
    };
    if let Err(e) = spec.check_arguments(&command.parameters) {
        return failed(e.to_string());
    }
    if let Some(why) = refused_on(tool, ex.current) {
        return failed(why);
    }
    let Some(app) = ex.current.and_then(api_of) else {
        return failed(format!(
            "`{tool}` needs a Word, Excel or PowerPoint document open"
        ));
    };
    let document = ex.document.clone();
    let answer = match ex.backend() {
        Ok(backend) => {
            backend
                .office(app, tool, &command.parameters, document.as_deref())
                .await
        }
        Err(gone) => Err(gone),
    };
    // The document changed (or its selection did): the next step looks again.
    ex.snapshot = None;
    match answer {
        Ok(answer) => ToolResult::success(command, NAMESPACE, result(answer)),
        Err(e) => {
            let failure = ex.failed(e);
            ToolResult::failure(command, NAMESPACE, failure, Value::Null)
        }
    }
}
