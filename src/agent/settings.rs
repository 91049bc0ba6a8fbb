//! The knobs every LLM agent shares (the LinuxAgent, the HostAgent and AppAgent, the
//! judge), and the unattended answer to a CONFIRM.

/// What to do when the model asks to confirm a sensitive action.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum ConfirmPolicy {
    /// Refuse it: the action does not run and the task fails, saying why.
    #[default]
    Deny,
    /// Run it.
    Allow,
}

/// Knobs of LLM agents.
#[derive(Clone, Debug, serde::Serialize)]
pub(crate) struct AgentSettings {
    /// Characters of command results sent back to the model per step.
    pub(crate) observation_limit: usize,
    /// Times a reply that cannot be used is asked again before the step ends in ERROR.
    pub(crate) reply_retries: u32,
    /// The unattended answer to CONFIRM.
    pub(crate) confirm: ConfirmPolicy,
    /// Steps sent to the model in full; older ones are summarized (0: all).
    pub(crate) history_steps: u32,
    /// Send desktop steps' screenshots to the model (`[llm] vision`); without, only
    /// the control list as text (UFO's non-visual mode, for text-only models).
    pub(crate) vision: bool,
    /// The longer side of a screenshot sent to the model, in pixels (larger ones are
    /// scaled down).
    pub(crate) image_max_side: u32,
    /// Step screenshots the judge sees besides the final one (UFO's
    /// `EVA_ALL_SCREENSHOTS`; 0: the final one only).
    pub(crate) judge_screenshots: u32,
}

impl Default for AgentSettings {
    fn default() -> Self {
        Self {
            observation_limit: 4000,
            reply_retries: 3,
            confirm: ConfirmPolicy::Deny,
            history_steps: 20,
            vision: true,
            image_max_side: 1280,
            judge_screenshots: 8,
        }
    }
}
