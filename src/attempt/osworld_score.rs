//! OSWorld's score as a task's evaluation: the number its evaluator returned (`score`,
//! `complete` yes only at 1, as OSWorld counts success), a sub-score per metric with
//! what it gave, and a reason that says what the getters could not find.

use serde_json::Value;

use crate::osworld::{LastAction, Scored};
use crate::record::{Complete, Evaluation, Evaluator, SubScore};
use crate::task::Task;

/// The evaluation of `task` that OSWorld scored `scored`, the agent having ended with
/// `last`.
pub(super) fn verdict(task: &Task, scored: &Scored, last: LastAction) -> Evaluation {
    let complete = if scored.score >= 1.0 {
        Complete::Yes
    } else {
        Complete::No
    };
    let infeasible = task.osworld.as_ref().is_some_and(|o| o.infeasible());
    let metrics: Vec<&str> = task
        .osworld
        .as_ref()
        .map(|o| o.evaluator.funcs.iter().map(String::as_str).collect())
        .unwrap_or_default();
    let mut sub_scores: Vec<SubScore> = scored
        .details
        .iter()
        .filter_map(|d| {
            let name = d.get("metric")?.as_str()?;
            let value = match d.get("value") {
                Some(Value::Bool(b)) => Some(f64::from(u8::from(*b))),
                other => other.and_then(Value::as_f64),
            };
            let holds = value.is_some_and(|v| v >= 1.0);
            Some(SubScore {
                name: format!("OSWorld metric {name}"),
                evaluation: if holds { Complete::Yes } else { Complete::No },
                detail: (!holds).then(|| match value {
                    Some(v) => format!("gave {v}"),
                    None => format!(
                        "gave {}",
                        crate::text::shorten(
                            &d.get("value").map(Value::to_string).unwrap_or_default(),
                            200
                        )
                    ),
                }),
            })
        })
        .collect();
    if infeasible {
        sub_scores.push(SubScore {
            name: "OSWorld metric infeasible".to_string(),
            evaluation: complete,
            detail: (complete != Complete::Yes).then(|| "the agent did not say FAIL".to_string()),
        });
    }
    let missing: Vec<String> = scored
        .details
        .iter()
        .filter(|d| d.get("role").and_then(Value::as_str) == Some("result"))
        .filter_map(|d| d.get("missing"))
        .map(|m| match m {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
        .collect();
    let what = match (infeasible, metrics.as_slice()) {
        (true, _) => "an infeasible task".to_string(),
        (false, [one]) => one.to_string(),
        (false, many) => many.join(", "),
    };
    let mut reason = format!("OSWorld's evaluator ({what}) scored {}", scored.score);
    if infeasible {
        reason.push_str(match last {
            LastAction::Fail => ": the agent said the task cannot be done (FAIL)",
            LastAction::Done => ": the agent said it finished an infeasible task",
            LastAction::None => ": the agent never said the task cannot be done",
        });
    } else if complete != Complete::Yes && !missing.is_empty() {
        reason.push_str(&format!(
            "; the result was not found: {}",
            missing.join(", ")
        ));
    } else if complete != Complete::Yes && last == LastAction::Fail {
        reason.push_str(": the agent said FAIL, which OSWorld scores 0 on a feasible task");
    }
    Evaluation {
        reason,
        sub_scores,
        complete,
        evaluator: Evaluator::OsWorld,
        judge: None,
        score: Some(scored.score),
    }
}
