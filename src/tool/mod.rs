//! Tools: the data that passes between agents and executors. This module owns data
//! only: how a tool call is carried out belongs to `executor`, who decides on it to
//! `agent`.

mod call;
mod spec;

pub(crate) use call::{ResultStatus, ToolCall, ToolResult, ToolType};
pub(crate) use spec::{ParamKind, ParamSpec, ToolSpec};
