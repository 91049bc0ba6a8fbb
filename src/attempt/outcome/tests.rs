//! Tests of the outcome rules: whose failure decides status, retry and resume; the
//! status rules of a session that ran.

use super::*;
use crate::record::{Complete, Evaluator};

fn eval(complete: Complete) -> Evaluation {
    Evaluation {
        reason: "r".into(),
        sub_scores: vec![],
        complete,
        evaluator: Evaluator::Checks,
        judge: None,
        score: None,
    }
}

#[test]
fn whose_failure_decides_status_retry_and_resume() {
    let table: Vec<(Blame, TaskStatus, bool, bool)> = [
        Blame::Agent,
        Blame::TaskFile,
        Blame::Config,
        Blame::Environment,
        Blame::Runner,
    ]
    .into_iter()
    .map(|b| {
        let r = rule(b);
        (b, r.status, r.retried, r.kept_on_resume)
    })
    .collect();
    assert_eq!(
        table,
        [
            (Blame::Agent, TaskStatus::Failed, false, true),
            (Blame::TaskFile, TaskStatus::Error, false, false),
            (Blame::Config, TaskStatus::Error, false, true),
            (Blame::Environment, TaskStatus::Error, true, false),
            (Blame::Runner, TaskStatus::Error, true, false),
        ]
    );
    // A run-stopping failure is never retried, whoever's it is.
    let fatal = AttemptOutcome::from_end(
        Ended::Session {
            end: SessionEnd::Error("down".into(), ErrorKind::Fatal(Blame::Environment)),
            evaluation: None,
        },
        None,
        "the session",
    );
    assert_eq!(
        (fatal.status, fatal.retryable, fatal.blame),
        (TaskStatus::Error, false, Some(Blame::Environment))
    );
    assert_eq!(fatal.fatal.as_deref(), Some("down"));
}

#[test]
fn status_rules() {
    let finished = SessionEnd::Finished;
    assert_eq!(session_status(&finished, None).0, TaskStatus::Passed);
    assert_eq!(
        session_status(&finished, Some(&eval(Complete::Yes))).0,
        TaskStatus::Passed
    );
    assert_eq!(
        session_status(&finished, Some(&eval(Complete::No))),
        (TaskStatus::Failed, Some("r".into()))
    );
    assert_eq!(
        session_status(&finished, Some(&eval(Complete::Unsure))).0,
        TaskStatus::Failed
    );
    // An agent that gave up fails even when the checks happen to hold.
    let gave_up = SessionEnd::Failed("x".into());
    assert_eq!(
        session_status(&gave_up, Some(&eval(Complete::Yes))).0,
        TaskStatus::Failed
    );
    assert_eq!(
        session_status(&SessionEnd::StepLimit(5), None).0,
        TaskStatus::Failed
    );
    let infra = SessionEnd::Error("e".into(), ErrorKind::INFRASTRUCTURE);
    assert_eq!(session_status(&infra, None).0, TaskStatus::Error);
    let garbage = SessionEnd::Error("e".into(), ErrorKind::AGENT);
    assert_eq!(session_status(&garbage, None).0, TaskStatus::Failed);
}
