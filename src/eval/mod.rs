//! Evaluation: deciding whether a finished session did its task. Deterministic checks
//! from the task file (design.md §4) produce an [`Evaluation`] in UFO's schema, with
//! one sub-score per check.

mod checks;
mod error;

use std::path::Path;

use serde::{Deserialize, Serialize};

pub(crate) use checks::run_check;
pub(crate) use error::UnknownEvalMode;

use crate::executor::Executor;
use crate::record::{Complete, Evaluation, Evaluator, SubScore};
use crate::task::Check;

/// Which evaluation a run uses (`--eval`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum EvalMode {
    /// The task's checks if it has any, else the LLM judge if an LLM is configured,
    /// else none.
    #[default]
    Auto,
    /// Only the task's checks (a task without checks is judged by finishing).
    Checks,
    /// Only the LLM judge.
    Llm,
    /// No evaluation: a task passes when its session finishes without error.
    None,
    /// As auto, and the LLM judge also gives its verdict on the tasks the checks decide,
    /// to measure how far it agrees with them (the checks still decide).
    Both,
}

impl std::str::FromStr for EvalMode {
    type Err = UnknownEvalMode;

    fn from_str(s: &str) -> Result<Self, UnknownEvalMode> {
        match s {
            "auto" => Ok(Self::Auto),
            "checks" => Ok(Self::Checks),
            "llm" => Ok(Self::Llm),
            "none" => Ok(Self::None),
            "both" => Ok(Self::Both),
            other => Err(UnknownEvalMode(other.to_string())),
        }
    }
}

/// Runs every check (in the workspace, commands through `executor`) and combines them:
/// complete is `yes` only when all hold.
pub(crate) async fn run_checks(
    checks: &[Check],
    workspace: &Path,
    executor: &mut dyn Executor,
) -> Evaluation {
    let mut sub_scores = Vec::with_capacity(checks.len());
    for check in checks {
        let detail = run_check(check, workspace, executor)
            .await
            .err()
            .map(|e| e.to_string());
        sub_scores.push(SubScore {
            name: check.name(),
            evaluation: if detail.is_none() {
                Complete::Yes
            } else {
                Complete::No
            },
            detail,
        });
    }
    let failed: Vec<&SubScore> = sub_scores
        .iter()
        .filter(|s| s.evaluation != Complete::Yes)
        .collect();
    let reason = match failed.as_slice() {
        [] if checks.len() == 1 => "the check holds".to_string(),
        [] => format!("all {} checks hold", checks.len()),
        [only] => format!(
            "check failed: {}: {}",
            only.name,
            only.detail.as_deref().unwrap_or("")
        ),
        [first, ..] => format!(
            "{} of {} checks failed; first: {}: {}",
            failed.len(),
            checks.len(),
            first.name,
            first.detail.as_deref().unwrap_or("")
        ),
    };
    Evaluation {
        reason,
        complete: if failed.is_empty() {
            Complete::Yes
        } else {
            Complete::No
        },
        sub_scores,
        evaluator: Evaluator::Checks,
        judge: None,
        score: None,
    }
}
