//! Task files: their shapes (design.md §2), ids, recorded actions, checks, and loading a
//! folder of them, OSWorld's task format among them (`osworld`). This module owns reading
//! and validating; it runs nothing.

mod action;
mod check;
mod discover;
mod file;
mod id;
mod known;
mod load;
mod model;
mod object;
pub(crate) mod osworld;
mod paths;
mod problem;
mod source;
mod unique;

pub(crate) use action::{Action, Expect, ExpectControl, describe_text_difference};
pub(crate) use check::Check;
pub(crate) use discover::{FoundFiles, LoadError, discover};
pub(crate) use id::{IdError, TaskId};
pub(crate) use known::Known;
pub(crate) use load::{LoadedTasks, load_files_as};
pub(crate) use model::{App, RecordedVerdict, SessionMode, Task, TaskShape};
pub(crate) use object::{MAX_OBJECT, ObjectFile};
pub(crate) use paths::FilePlace;
pub(crate) use problem::{InvalidTask, Problem};
pub(crate) use source::{Loading, REQUEST_SOURCE, ReloadError, TaskSource};
pub(crate) use unique::{Identified, ReservedNames};
