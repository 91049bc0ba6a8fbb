//! A batch, from the paths and options given to the moment its last result is written:
//! `prepare` loads and selects the tasks and opens the run dir (refusing what cannot
//! work before anything starts); `execute` runs them through the pool and hands every
//! event to the sink it is given. Neither prints.

mod error;
mod execute;
mod experience;
mod inputs;
mod prepare;
mod settings;
mod sources;

pub(crate) use error::BatchError;
pub(crate) use execute::execute;
pub(crate) use prepare::{prepare, task_tools};
pub(crate) use settings::RunSettings;
pub(crate) use sources::load_tasks_as;
