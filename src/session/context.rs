//! The session's shared state (UFO's Context), typed: counters, the trajectory so far,
//! usage and cost, where the task's files live, and the screen the step under way
//! began with.

use std::path::PathBuf;
use std::sync::Arc;

use crate::event::TaskEvents;
use crate::executor::ScreenView;
use crate::record::{GivenExample, LlmStats, StepRecord};
use crate::units::{Cost, Usage};

/// State shared by the rounds and agents of one session.
#[derive(Debug)]
pub(crate) struct Context {
    /// The task's request (what the evaluation judges).
    pub(crate) request: String,
    /// The current round's request.
    pub(crate) round_request: String,
    /// The current round's subtask (a follower step), if any.
    pub(crate) subtask: Option<String>,
    /// Steps so far in the session (UFO's SESSION_STEP).
    pub(crate) session_step: u32,
    /// The current round, 0-based.
    pub(crate) round_num: u32,
    /// Steps so far in the current round.
    pub(crate) round_step: u32,
    /// Steps of each round started so far.
    pub(crate) round_steps: Vec<u32>,
    /// Every step so far, in order.
    pub(crate) trajectory: Vec<StepRecord>,
    /// Tokens used so far.
    pub(crate) usage: Usage,
    /// Cost so far.
    pub(crate) cost: Cost,
    /// LLM calls, retries and unusable replies so far.
    pub(crate) llm: LlmStats,
    /// The task's workspace folder.
    pub(crate) workspace: PathBuf,
    /// Where log lines and steps go.
    pub(crate) events: TaskEvents,
    /// The screen as the step under way began (desktop tasks): what its agent sees.
    pub(crate) screen: Option<Arc<ScreenView>>,
    /// Experience records and demonstrations put in the agents' prompts so far.
    pub(crate) given: Vec<GivenExample>,
}

impl Context {
    /// A fresh context for a session on `request`.
    pub(crate) fn new(request: String, workspace: PathBuf, events: TaskEvents) -> Self {
        Self {
            round_request: request.clone(),
            request,
            subtask: None,
            session_step: 0,
            round_num: 0,
            round_step: 0,
            round_steps: Vec::new(),
            trajectory: Vec::new(),
            usage: Usage::default(),
            cost: Cost::default(),
            llm: LlmStats::default(),
            workspace,
            events,
            screen: None,
            given: Vec::new(),
        }
    }

    /// Notes the records an agent was given (each once per agent), in the task's log.
    pub(crate) fn give(&mut self, given: Vec<GivenExample>) {
        if given.is_empty() {
            return;
        }
        let shown: Vec<String> = given
            .iter()
            .map(|g| format!("{} {} ({:.2})", g.source.as_str(), g.key, g.score))
            .collect();
        self.events.info(format!(
            "{} given {}: {}",
            given[0].agent,
            crate::text::plural(given.len(), "example"),
            shown.join(", ")
        ));
        for g in given {
            let seen = self
                .given
                .iter()
                .any(|s| s.agent == g.agent && s.source == g.source && s.key == g.key);
            if !seen {
                self.given.push(g);
            }
        }
    }

    /// Rounds started so far.
    pub(crate) fn rounds(&self) -> u32 {
        self.round_steps.len() as u32
    }
}
