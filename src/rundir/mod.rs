//! The run dir on disk, and its one owner: the layout and its names, atomic and durable
//! writes, reading stored records back, a task's files over its attempts, and what a
//! resumed run keeps. Reporters and the commands over finished runs go through here;
//! nothing else spells a file name of design.md §5.

mod atomic;
mod durable;
mod error;
pub(crate) mod layout;
mod lock;
mod records;
mod resume;
mod selection;
mod stored;
mod task_files;

pub(crate) use atomic::{
    Staged, append_line, remove_stale_temps, stage_json, stage_with, write_atomic, write_json,
};
pub(crate) use durable::{Committer, Pending, put_in_place};
pub(crate) use error::{FileError, FileErrors, RunDirError};
pub(crate) use layout::RunLayout;
pub(crate) use lock::RunLock;
pub(crate) use records::{StoredTask, is_run_dir, load_batch, recorded_plans};
pub(crate) use resume::{Discarding, Resumable, ResumeMode, plan_resume};
pub(crate) use selection::read_selection;
pub(crate) use stored::{STORED_FILE_LIMIT, Unreadable, read_run_json};
pub(crate) use task_files::{FinalFiles, TaskFiles, TaskPages};
