//! The names results give a task's shape and the session type that ran it (UFO's
//! names), as `status.json` and `summary.csv` persist them.

use serde::{Deserialize, Serialize};

use crate::task::TaskShape;

/// The shape names used in results files.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum ShapeName {
    /// UFO request file.
    UfoRequest,
    /// UFO step plan.
    UfoStepPlan,
    /// Seed-doc request.
    SeedRequest,
    /// UFO dataflow task.
    UfoDataflow,
    /// Recorded plan.
    RecordedPlan,
    /// A file that could not be loaded.
    Invalid,
}

/// The session type that runs a shape, named as in UFO.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum SessionType {
    /// An LLM agent on one request (UFO's batch_normal).
    FromFileSession,
    /// Follows steps or recorded actions (UFO's follower mode).
    FollowerSession,
    /// One operator on the whole desktop (UFO's operator mode).
    OpenAIOperatorSession,
    /// No session could be built (bad task file).
    None,
}

impl SessionType {
    /// The name as written in results.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::FromFileSession => "FromFileSession",
            Self::FollowerSession => "FollowerSession",
            Self::OpenAIOperatorSession => "OpenAIOperatorSession",
            Self::None => "none",
        }
    }
}

impl ShapeName {
    /// The name of `shape`.
    pub(crate) fn of(shape: &TaskShape) -> Self {
        match shape {
            TaskShape::UfoRequest => Self::UfoRequest,
            TaskShape::UfoStepPlan { .. } => Self::UfoStepPlan,
            TaskShape::SeedRequest => Self::SeedRequest,
            TaskShape::UfoDataflow { .. } => Self::UfoDataflow,
            TaskShape::RecordedPlan { .. } => Self::RecordedPlan,
        }
    }
}

impl SessionType {
    /// The session type that runs `shape`.
    pub(crate) fn of(shape: &TaskShape) -> Self {
        match shape {
            TaskShape::UfoRequest | TaskShape::SeedRequest => Self::FromFileSession,
            TaskShape::UfoStepPlan { .. }
            | TaskShape::UfoDataflow { .. }
            | TaskShape::RecordedPlan { .. } => Self::FollowerSession,
        }
    }
}
