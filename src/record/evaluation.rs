//! Evaluation results in UFO's EvaluationAgent schema (ufo.md §5): `reason`,
//! `sub_scores: [{name, evaluation}]`, `complete: yes|no|unsure`, whether they come from
//! deterministic checks, an LLM judge, or the verdict a replayed plan was recorded with.

use std::fmt;

use serde::{Deserialize, Serialize};

/// UFO's three-valued verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Complete {
    /// The task is done.
    Yes,
    /// It is not.
    No,
    /// The judge cannot tell.
    Unsure,
}

impl fmt::Display for Complete {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Yes => "yes",
            Self::No => "no",
            Self::Unsure => "unsure",
        })
    }
}

/// Who evaluated.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Evaluator {
    /// The task's `evaluate` checks.
    Checks,
    /// The LLM judge (EvaluationAgent).
    Llm,
    /// A replay with no checks of its own: the verdict the plan was recorded with.
    Recording,
    /// OSWorld's own evaluator (its getters and metric functions).
    #[serde(rename = "osworld")]
    OsWorld,
}

/// One criterion and its verdict.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct SubScore {
    /// What was judged (`file_equals sorted.csv`).
    pub(crate) name: String,
    /// The verdict on it.
    pub(crate) evaluation: Complete,
    /// Why, when it did not hold (our extension; UFO has only name and evaluation).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) detail: Option<String>,
}

/// The evaluation of one task.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Evaluation {
    /// Why, in words.
    pub(crate) reason: String,
    /// Per-criterion verdicts.
    pub(crate) sub_scores: Vec<SubScore>,
    /// The overall verdict.
    pub(crate) complete: Complete,
    /// Checks or the LLM judge.
    pub(crate) evaluator: Evaluator,
    /// With `--eval both`, the LLM judge's verdict on a task the checks decided.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) judge: Option<JudgeOpinion>,
    /// The score from 0 to 1, where the evaluator gives one (OSWorld's): `complete` is
    /// `yes` when it is 1.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "super::checked::score"
    )]
    pub(crate) score: Option<f64>,
}

/// The LLM judge's verdict beside the checks' (`--eval both`): it decides nothing, it is
/// compared with them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct JudgeOpinion {
    /// The judge's verdict.
    pub(crate) complete: Complete,
    /// Why, in the judge's words.
    pub(crate) reason: String,
}

impl Evaluation {
    /// True when the verdict is `yes`.
    pub(crate) fn holds(&self) -> bool {
        self.complete == Complete::Yes
    }

    /// The `evaluation.log` line: UFO's fields plus `level`, `request` and `type`.
    pub(crate) fn log_line(&self, request: &str) -> serde_json::Value {
        let mut line = serde_json::json!({
            "reason": self.reason,
            "sub_scores": self.sub_scores,
            "complete": self.complete,
            "evaluator": self.evaluator,
            "level": "session",
            "request": request,
            "type": "evaluation_result",
        });
        if let Some(judge) = &self.judge {
            line["judge"] = serde_json::json!(judge);
        }
        line
    }
}
