//! How far the LLM judge agrees with the checks, over the tasks both judged (`--eval
//! both`): the confusion matrix, the share of agreement, Cohen's κ (the judge's "unsure"
//! counts as not passed), and the tasks where they disagree with both reasons.

use serde::Serialize;

use crate::record::{Complete, TaskRow};
use crate::stats::cohen_kappa;
use crate::task::TaskId;

/// Disagreements listed (all are counted).
const LISTED: usize = 200;

/// The checks' verdicts against the judge's.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub(crate) struct Confusion {
    /// The checks passed the task, the judge said yes.
    pub(crate) checks_passed_judge_yes: u64,
    /// The checks passed it, the judge said no.
    pub(crate) checks_passed_judge_no: u64,
    /// The checks passed it, the judge was unsure.
    pub(crate) checks_passed_judge_unsure: u64,
    /// The checks failed it, the judge said yes.
    pub(crate) checks_failed_judge_yes: u64,
    /// The checks failed it, the judge said no.
    pub(crate) checks_failed_judge_no: u64,
    /// The checks failed it, the judge was unsure.
    pub(crate) checks_failed_judge_unsure: u64,
}

/// A task the two judged differently.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct Disagreement {
    /// The task (a repetition's own id with `--repeat`).
    pub(crate) id: TaskId,
    /// True when the checks passed it.
    pub(crate) checks_passed: bool,
    /// Why, by the checks.
    pub(crate) checks_reason: String,
    /// The judge's verdict.
    pub(crate) judge: Complete,
    /// Why, by the judge.
    pub(crate) judge_reason: String,
}

/// The judge's agreement with the checks in one run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct Agreement {
    /// Tasks both judged.
    pub(crate) tasks: u64,
    /// Their verdicts side by side.
    pub(crate) confusion: Confusion,
    /// The share of tasks they judged alike.
    pub(crate) agreement: f64,
    /// Cohen's κ; null when it is not defined (one and the same verdict from both on
    /// every task).
    pub(crate) kappa: Option<f64>,
    /// Tasks judged differently.
    pub(crate) disagreeing: u64,
    /// The first 200 of them, by id.
    pub(crate) disagreements: Vec<Disagreement>,
}

/// Counts the agreement over rows, one at a time.
#[derive(Default)]
pub(crate) struct AgreementCount {
    confusion: Confusion,
    disagreeing: u64,
    disagreements: Vec<Disagreement>,
}

impl AgreementCount {
    /// Counts one row (rows without both verdicts are not counted).
    pub(crate) fn add(&mut self, row: &TaskRow) {
        let (Some(checks), Some(judge)) = (row.complete, row.judge.as_ref()) else {
            return;
        };
        let passed = checks == Complete::Yes;
        let c = &mut self.confusion;
        *match (passed, judge.complete) {
            (true, Complete::Yes) => &mut c.checks_passed_judge_yes,
            (true, Complete::No) => &mut c.checks_passed_judge_no,
            (true, Complete::Unsure) => &mut c.checks_passed_judge_unsure,
            (false, Complete::Yes) => &mut c.checks_failed_judge_yes,
            (false, Complete::No) => &mut c.checks_failed_judge_no,
            (false, Complete::Unsure) => &mut c.checks_failed_judge_unsure,
        } += 1;
        if passed == (judge.complete == Complete::Yes) {
            return;
        }
        self.disagreeing += 1;
        if self.disagreements.len() < LISTED {
            self.disagreements.push(Disagreement {
                id: row.id.clone(),
                checks_passed: passed,
                checks_reason: row
                    .error
                    .clone()
                    .unwrap_or_else(|| "the checks hold".to_string()),
                judge: judge.complete,
                judge_reason: judge.reason.clone(),
            });
        }
    }

    /// The agreement; `None` when no task had both verdicts.
    pub(crate) fn finish(self) -> Option<Agreement> {
        let c = self.confusion;
        let (yes_yes, yes_no) = (
            c.checks_passed_judge_yes,
            c.checks_passed_judge_no + c.checks_passed_judge_unsure,
        );
        let (no_yes, no_no) = (
            c.checks_failed_judge_yes,
            c.checks_failed_judge_no + c.checks_failed_judge_unsure,
        );
        let kappa = cohen_kappa(yes_yes, yes_no, no_yes, no_no)?;
        let mut disagreements = self.disagreements;
        disagreements.sort_by(|x, y| x.id.cmp(&y.id));
        Some(Agreement {
            tasks: yes_yes + yes_no + no_yes + no_no,
            confusion: c,
            agreement: kappa.observed,
            kappa: kappa.kappa,
            disagreeing: self.disagreeing,
            disagreements,
        })
    }
}

impl Agreement {
    /// The agreement in one line: `The judge agreed with the checks on 18 of 20 tasks
    /// (90.0%), Cohen's κ = 0.78`.
    pub(crate) fn line(&self) -> String {
        let kappa = match self.kappa {
            Some(k) => format!("Cohen's κ = {k:.2}"),
            None => "κ not defined (one verdict for every task)".to_string(),
        };
        format!(
            "The judge agreed with the checks on {} of {} ({:.1}%), {kappa}",
            self.tasks - self.disagreeing,
            crate::text::plural(self.tasks as usize, "task"),
            self.agreement * 100.0
        )
    }
}
