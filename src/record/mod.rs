//! What a run produces and persists, as types: the schema of each task's `status.json`,
//! of `response.log` lines and of `evaluation.log`. The core fills these in; the
//! reporters write and read them. Nothing here does I/O.

mod agent_status;
mod evaluation;
mod status;
mod step;
mod task;

pub use agent_status::AgentStatus;
pub use evaluation::{Complete, Evaluation, Evaluator, SubScore};
pub use status::TaskStatus;
pub use step::{ActionRecord, StepRecord};
pub use task::{AttemptRecord, LlmStats, TaskRecord};
