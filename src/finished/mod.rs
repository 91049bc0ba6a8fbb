//! Commands over finished run dirs: re-rendering one from its stored results
//! (`report`), comparing two (`compare`), merging shards into one (`merge`), writing
//! one as a Harbor job (`export --harbor`). They read
//! through `rundir`, render through `render`, and never run a task.

mod compare;
mod copy;
mod error;
mod harbor;
mod merge;
mod missing;
mod rerender;

pub(crate) use compare::{compare, series};
pub(crate) use error::FinishedError;
pub(crate) use harbor::export_harbor;
pub(crate) use merge::{MergeReport, merge};
pub(crate) use rerender::rerender;
