//! Tools: the data that passes between agents and executors. This module owns data
//! only: how a tool call is carried out belongs to `executor`, who decides on it to
//! `agent`; what UFO's own servers mean by a result is `ufo_shape`.

mod blame;
pub(crate) mod call;
pub(crate) mod desktop_names;
pub(crate) mod kept;
mod spec;
mod ufo_shape;

pub(crate) use blame::{Blame, Blamed, Failure};
pub(crate) use call::{ResultStatus, ToolCall, ToolResult, ToolType};
pub(crate) use desktop_names::is_desktop_tool;
pub(crate) use spec::{Bound, Limit, ParamKind, ParamSpec, ToolSpec, check_size};
pub(crate) use ufo_shape::{is_credential, refused_injection, settle as settle_ufo_shape};
