//! What a run produces and persists, as types: the schema of each task's `status.json`,
//! of `response.log` lines and of `evaluation.log`. The core fills these in; the
//! reporters write and read them. Nothing here does I/O.

mod agent_status;
pub(crate) mod checked;
mod encoded;
mod evaluation;
mod experience;
mod inputs;
mod names;
mod row;
mod status;
mod step;
mod task;

pub(crate) use agent_status::AgentStatus;
pub(crate) use encoded::{EncodedRows, decode_row, encode_row, row_len};
pub(crate) use evaluation::{Complete, Evaluation, Evaluator, JudgeOpinion, SubScore};
pub(crate) use experience::{ExampleSource, ExperienceNote, GivenExample};
pub(crate) use inputs::{HeldInputs, Inputs};
pub(crate) use names::{SessionType, ShapeName};
pub(crate) use row::{RowSource, TaskRow};
pub(crate) use status::{AttemptStatus, TaskStatus};
pub(crate) use step::{ActionRecord, StepRecord};
pub(crate) use task::{AttemptRecord, LlmStats, TaskRecord};

/// For `skip_serializing_if`: a count that is zero is left out.
pub(crate) fn is_zero(n: &u32) -> bool {
    *n == 0
}
