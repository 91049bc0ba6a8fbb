//! A task's `status.json`: the one record that says where a task stands. It is written
//! atomically at each state change, and every summary is rebuilt from these files.

use serde::{Deserialize, Serialize};

use super::{AttemptStatus, Complete, ExperienceNote, Inputs, JudgeOpinion, TaskStatus};
use super::{SessionType, ShapeName};
use crate::task::TaskId;
use crate::units::{Timestamp, Usage};

/// How the LLM was used: calls made, transport retries, replies that could not be used,
/// and the provider's rate limits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct LlmStats {
    /// Successful chat calls.
    pub(crate) calls: u32,
    /// Requests retried after a transient failure (5xx, timeout, ...).
    pub(crate) retries: u32,
    /// Replies that could not be used and were asked again.
    pub(crate) bad_replies: u32,
    /// Rate-limit and overload answers (429, 503, 529), waited out, not retried.
    #[serde(default)]
    pub(crate) rate_limited: u32,
    /// Seconds spent waiting for the provider (a call slot, a pause it asked for, a
    /// backoff after a rate limit); not counted against the task's timeout.
    #[serde(default, deserialize_with = "super::checked::seconds")]
    pub(crate) waited_s: f64,
    /// Images sent (desktop steps' screenshots), over every call.
    #[serde(default, skip_serializing_if = "crate::record::is_zero")]
    pub(crate) images: u32,
    /// Safety checks a computer-use provider raised (each acknowledged, or the one
    /// that failed the task).
    #[serde(default, skip_serializing_if = "crate::record::is_zero")]
    pub(crate) safety_checks: u32,
}

impl LlmStats {
    /// Adds other counts to these.
    pub(crate) fn add(&mut self, other: LlmStats) {
        self.calls += other.calls;
        self.retries += other.retries;
        self.bad_replies += other.bad_replies;
        self.rate_limited += other.rate_limited;
        self.images += other.images;
        self.safety_checks += other.safety_checks;
        self.waited_s = ((self.waited_s + other.waited_s) * 1000.0).round() / 1000.0;
    }
}

/// One attempt at a task.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct AttemptRecord {
    /// 1-based attempt number.
    pub(crate) attempt: u32,
    /// When it started.
    pub(crate) started: Timestamp,
    /// When it ended (absent if the runner died during it).
    #[serde(default)]
    pub(crate) finished: Option<Timestamp>,
    /// How it ended.
    pub(crate) status: AttemptStatus,
    /// Why it did not pass, if it did not.
    #[serde(default)]
    pub(crate) error: Option<String>,
    /// The device it ran on (`--devices`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) device: Option<String>,
}

/// The content of `TASK_ID/status.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct TaskRecord {
    /// Task id.
    pub(crate) id: TaskId,
    /// The task file.
    pub(crate) source: String,
    /// Hash of the task file's bytes when it ran.
    #[serde(default)]
    pub(crate) source_hash: String,
    /// What made this result (absent in records of older versions: such a result is
    /// never kept by a resumed run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) inputs: Option<Inputs>,
    /// The task file's shape.
    pub(crate) shape: ShapeName,
    /// The session type that ran it.
    pub(crate) session: SessionType,
    /// The request text.
    pub(crate) request: String,
    /// Tags from the task file.
    #[serde(default)]
    pub(crate) tags: Vec<String>,
    /// With `--repeat K`: which repetition this is (1..=K); the id ends in `/rep-N`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) repeat: Option<u32>,
    /// Where the task stands.
    pub(crate) status: TaskStatus,
    /// The evaluation's verdict, when there was an evaluation.
    #[serde(default)]
    pub(crate) complete: Option<Complete>,
    /// Why it did not pass, in one line (empty when passed).
    #[serde(default)]
    pub(crate) error: Option<String>,
    /// With status `error`: whose failure it was (`task_file`, `environment`, `config`,
    /// `runner`), which decides whether it was retried and whether a resumed run keeps
    /// it (the README's "Whose failure it is").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) blame: Option<crate::tool::Blame>,
    /// With `--eval both`: the LLM judge's verdict beside the checks' that decided.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) judge: Option<JudgeOpinion>,
    /// The evaluator's score from 0 to 1, where it gives one (OSWorld's).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "super::checked::score"
    )]
    pub(crate) score: Option<f64>,
    /// The benchmark domain it belongs to (an OSWorld task's folder: `os`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) domain: Option<String>,
    /// Experience given to its agents and saved from it (`--experience`,
    /// `--demonstrations`, `--save-experience`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) experience: Option<ExperienceNote>,
    /// Every attempt, oldest first.
    pub(crate) attempts: Vec<AttemptRecord>,
    /// When the latest attempt started.
    #[serde(default)]
    pub(crate) started: Option<Timestamp>,
    /// When the latest attempt ended.
    #[serde(default)]
    pub(crate) finished: Option<Timestamp>,
    /// Wall-clock seconds of the latest attempt.
    #[serde(default, deserialize_with = "super::checked::seconds")]
    pub(crate) duration_s: f64,
    /// Rounds run.
    #[serde(default)]
    pub(crate) rounds: u32,
    /// Steps run in the session.
    #[serde(default)]
    pub(crate) steps: u32,
    /// Steps per round.
    #[serde(default)]
    pub(crate) round_steps: Vec<u32>,
    /// Tokens used, all attempts and the evaluator included.
    #[serde(default)]
    pub(crate) usage: Usage,
    /// Cost in USD; absent when the model has no configured price.
    #[serde(default, deserialize_with = "super::checked::cost")]
    pub(crate) cost_usd: Option<f64>,
    /// LLM calls, retries and unusable replies, all attempts and the evaluator included.
    #[serde(default)]
    pub(crate) llm: LlmStats,
    /// Remarks from loading the task file.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) warnings: Vec<String>,
}

impl TaskRecord {
    /// A record with nothing run yet: `pending`, no attempts, no usage, cost 0.
    pub(crate) fn new(
        id: TaskId,
        source: String,
        source_hash: String,
        shape: ShapeName,
        session: SessionType,
        request: String,
    ) -> Self {
        Self {
            id,
            source,
            source_hash,
            inputs: None,
            shape,
            session,
            request,
            tags: Vec::new(),
            repeat: None,
            status: TaskStatus::Pending,
            complete: None,
            judge: None,
            score: None,
            domain: None,
            error: None,
            blame: None,
            experience: None,
            attempts: Vec::new(),
            started: None,
            finished: None,
            duration_s: 0.0,
            rounds: 0,
            steps: 0,
            round_steps: Vec::new(),
            usage: Usage::default(),
            cost_usd: Some(0.0),
            llm: LlmStats::default(),
            warnings: Vec::new(),
        }
    }

    /// The task this record is a repetition of (its own id when not repeated).
    pub(crate) fn base_id(&self) -> TaskId {
        self.id.base(self.repeat)
    }

    /// The attempts so far, counted.
    pub(crate) fn attempt_count(&self) -> u32 {
        self.attempts.len() as u32
    }
}
