//! How an attempt ended, turned into a status and a one-line reason (design.md §4).

use std::time::Duration;

use crate::record::{Evaluation, ExperienceNote, LlmStats, StepRecord, TaskStatus};
use crate::session::{Context, ErrorKind, SessionEnd};
use crate::tool::{Blame, Failure};
use crate::units::{Cost, Usage};

mod rules;
mod status;

pub(crate) use rules::rule;
use status::{retried_or_fatal, session_status, timed_out};

/// How the attempt's future ended.
pub(super) enum Ended {
    /// The task could not be carried out, through no doing of the agent's: a setup
    /// action that failed (the task file's), no session that could be built, a desktop
    /// or app that did not start, a device that refused the runner's argument. Whose
    /// failure it was decides the status.
    Broken(Failure),
    /// The session ran; maybe evaluated.
    Session {
        end: SessionEnd,
        evaluation: Option<Evaluation>,
    },
    /// The session ran but its evaluator (OSWorld's) failed: whose failure it was
    /// decides the status.
    Unscored { end: SessionEnd, failure: Failure },
    /// The session ran but the LLM judge could not give a verdict.
    JudgeFailed {
        end: SessionEnd,
        reason: String,
        kind: ErrorKind,
    },
    /// The wall-clock limit struck; the time waited for the LLM provider is not counted.
    TimedOut { limit: Duration, waited: Duration },
    /// The run killed it (second Ctrl-C).
    Killed,
}

/// What one attempt produced.
#[derive(Clone, Debug)]
pub(crate) struct AttemptOutcome {
    /// The attempt's status.
    pub(crate) status: TaskStatus,
    /// Why it did not pass.
    pub(crate) reason: Option<String>,
    /// True when an infrastructure failure ended it, so a retry may help.
    pub(crate) retryable: bool,
    /// Whose failure ended it, when it ended in `error` (or `failed` by the agent).
    pub(crate) blame: Option<Blame>,
    /// The evaluation, if one ran.
    pub(crate) evaluation: Option<Evaluation>,
    /// The steps taken.
    pub(crate) trajectory: Vec<StepRecord>,
    /// The actions taken as a recorded plan (`plan.json`).
    pub(crate) plan: Option<serde_json::Value>,
    /// Rounds started.
    pub(crate) rounds: u32,
    /// Steps taken.
    pub(crate) steps: u32,
    /// Steps per round.
    pub(crate) round_steps: Vec<u32>,
    /// Tokens used.
    pub(crate) usage: Usage,
    /// Cost.
    pub(crate) cost: Cost,
    /// LLM calls, retries and unusable replies.
    pub(crate) llm: LlmStats,
    /// Set when the failure will recur for every task (wrong API key, unknown model):
    /// the pool stops scheduling, with this reason.
    pub(crate) fatal: Option<String>,
    /// The device it ran on, when it ran on one.
    pub(crate) device: Option<String>,
    /// Experience given to its agents and saved from it.
    pub(crate) experience: ExperienceNote,
    /// The session that ran, once one was built (its type depends on the mode as well
    /// as the task's shape).
    pub(crate) session: Option<crate::record::SessionType>,
}

impl AttemptOutcome {
    fn blank(status: TaskStatus, reason: Option<String>) -> Self {
        Self {
            status,
            reason,
            retryable: false,
            blame: None,
            evaluation: None,
            trajectory: Vec::new(),
            plan: None,
            rounds: 0,
            steps: 0,
            round_steps: Vec::new(),
            usage: Usage::default(),
            cost: Cost::default(),
            llm: LlmStats::default(),
            fatal: None,
            device: None,
            experience: ExperienceNote::default(),
            session: None,
        }
    }

    /// An attempt that could not be carried out, through no doing of the agent's:
    /// whose failure it was decides its status and whether it is retried.
    pub(crate) fn failed(failure: Failure) -> Self {
        let rule = rule(failure.blame);
        Self {
            retryable: rule.retried,
            blame: Some(failure.blame),
            ..Self::blank(rule.status, Some(failure.message))
        }
    }

    /// A task this machine cannot run (an app, a cached file, a package it lacks), as
    /// `reason` says: `unsupported`, not retried, never a failure.
    pub(crate) fn unsupported(reason: String) -> Self {
        Self::blank(TaskStatus::Unsupported, Some(reason))
    }

    /// An attempt the runner itself could not carry out (a panic, a folder it cannot
    /// make): an `error`, retried.
    pub(crate) fn infrastructure_error(reason: String) -> Self {
        Self::failed(Failure::new(Blame::Runner, reason))
    }

    pub(super) fn from_end(ended: Ended, ctx: Option<&Context>, stage: &str) -> Self {
        let mut retryable = false;
        let mut fatal = None;
        let mut blame = None;
        let (status, reason, evaluation) = match ended {
            Ended::Broken(failure) => {
                let rule = rule(failure.blame);
                retryable = rule.retried;
                blame = Some(failure.blame);
                (rule.status, Some(failure.message), None)
            }
            Ended::TimedOut { limit, waited } => (
                TaskStatus::Timeout,
                Some(timed_out(limit, waited, ctx, stage)),
                None,
            ),
            Ended::Killed => (
                TaskStatus::Cancelled,
                Some(format!("cancelled during {stage}: the run was interrupted")),
                None,
            ),
            Ended::Session { end, evaluation } => {
                if let SessionEnd::Error(why, kind) = &end {
                    (retryable, fatal) = retried_or_fatal(*kind, why);
                    blame = Some(kind.blame());
                }
                let (status, reason) = session_status(&end, evaluation.as_ref());
                (status, reason, evaluation)
            }
            Ended::Unscored { end, failure } => {
                let rule = rule(failure.blame);
                retryable = rule.retried;
                blame = Some(failure.blame);
                let why = format!(
                    "the session {}, but its evaluation failed: {}",
                    end.describe(),
                    failure.message
                );
                (rule.status, Some(why), None)
            }
            Ended::JudgeFailed { end, reason, kind } => {
                let session = end.describe();
                (retryable, fatal) = retried_or_fatal(kind, &reason);
                blame = Some(kind.blame());
                let why = format!("the session {session}, but the LLM judge failed: {reason}");
                (TaskStatus::Error, Some(why), None)
            }
        };
        let mut out = Self::blank(status, reason);
        out.retryable = retryable;
        out.blame = blame;
        out.fatal = fatal;
        out.evaluation = evaluation;
        if let Some(ctx) = ctx {
            out.take_context(ctx);
        }
        out
    }

    /// What the session did: its trajectory, rounds and steps, and what the LLM cost.
    fn take_context(&mut self, ctx: &Context) {
        self.trajectory = ctx.trajectory.clone();
        self.rounds = ctx.rounds();
        self.steps = ctx.session_step;
        self.round_steps = ctx.round_steps.clone();
        self.usage = ctx.usage;
        self.cost = ctx.cost;
        self.llm = ctx.llm;
    }

    /// How the last command of an attempt that did not pass ended, when the way it ended
    /// could be a signal from outside (a scheduler or Ctrl-C stopping the run) rather than
    /// the task's own failure. Timeouts of ours are the task's failure.
    pub(crate) fn last_command_end(&self) -> Option<CommandEnd> {
        if self.status == TaskStatus::Passed {
            return None;
        }
        // An app tool that failed last (its desktop going down with the run): not a
        // shell command, but stopped the same way.
        if let Some(last) = self
            .trajectory
            .iter()
            .flat_map(|step| &step.action)
            .next_back()
            && last.result.status == crate::tool::ResultStatus::Failure
            && crate::desktop::tools::is_desktop_tool(&last.function)
        {
            return Some(CommandEnd::ToolFailed);
        }
        let last = self
            .trajectory
            .iter()
            .flat_map(|step| &step.action)
            .rev()
            .find(|a| {
                a.result.result.get("exit_code").is_some()
                    || a.result.result.get("signal").is_some()
            })?;
        let result = &last.result.result;
        if result.get("timed_out").and_then(|v| v.as_bool()) == Some(true) {
            return None;
        }
        if let Some(signal) = result.get("signal").and_then(|v| v.as_i64()) {
            return Some(CommandEnd::Signal(signal));
        }
        match result.get("exit_code").and_then(|v| v.as_i64()) {
            Some(0) | None => None,
            // A shell reports a child killed by signal N as exit code 128 + N.
            Some(code @ 129..=192) => Some(CommandEnd::ShellSignal(code)),
            Some(code) => Some(CommandEnd::Failed(code)),
        }
    }

    /// Turns the outcome into a cancellation (the task runs again on resume).
    pub(crate) fn cancel(&mut self, reason: String) {
        self.status = TaskStatus::Cancelled;
        self.reason = Some(reason);
        self.retryable = false;
        self.blame = None;
        self.evaluation = None;
    }

    /// One line for logs.
    pub(crate) fn describe(&self) -> String {
        match &self.reason {
            Some(r) => format!("{}: {r}", self.status),
            None => self.status.to_string(),
        }
    }
}

/// How an attempt's last command ended, when it did not succeed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CommandEnd {
    /// Killed by this signal.
    Signal(i64),
    /// Exited with 128 + N: the shell's report of a child killed by signal N.
    ShellSignal(i64),
    /// Exited with another non-zero code.
    Failed(i64),
    /// A desktop tool failed (its desktop may have gone down with the run).
    ToolFailed,
}

impl CommandEnd {
    /// Whether the command was (or looks) killed by a signal, which a stopping run sends.
    pub(crate) fn by_signal(self) -> bool {
        !matches!(self, CommandEnd::Failed(_) | CommandEnd::ToolFailed)
    }
}

impl std::fmt::Display for CommandEnd {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CommandEnd::Signal(n) => write!(f, "was killed by signal {n}"),
            CommandEnd::ShellSignal(code) => {
                write!(f, "exited with code {code} (128 + signal {})", code - 128)
            }
            CommandEnd::Failed(code) => write!(f, "exited with code {code}"),
            CommandEnd::ToolFailed => write!(f, "(an app tool) failed"),
        }
    }
}

#[cfg(test)]
mod tests;
