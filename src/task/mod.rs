//! Task files: their shapes (design.md §2), ids, recorded actions, checks, and loading a
//! folder of them. This module owns reading and validating; it runs nothing.

mod action;
mod check;
mod file;
mod id;
mod load;
mod model;
mod problem;

pub use action::{Action, Expect, describe_text_difference};
pub use check::Check;
pub use id::{IdError, TaskId};
pub use load::{
    FoundFile, InvalidTask, LoadError, LoadedTasks, RESERVED_NAMES, discover, load, load_files,
};
pub use model::{SessionKind, Shape, Task, TaskKind};
pub use problem::Problem;
