//! Agents: what decides the next step of a session. Each agent turns the context into
//! one step (status, actions taken, reasoning) and acts only through the executor it is
//! handed. The ReplayAgent replays recorded actions with no LLM; the LinuxAgent asks an
//! LLM; the HostAgent and its AppAgents (`desktop`) work on desktop apps; the operator
//! (`operator`) works on the screen with mouse and keyboard, alone or under the HostAgent;
//! the EvaluationAgent judges a finished session; the summarizer condenses one into
//! experience.

mod act;
mod ask;
mod conversation;
mod desktop;
mod evaluation;
mod json_text;
mod linux;
mod operator;
mod prompt;
mod replay;
mod reply;
mod settings;
mod summarizer;

pub(crate) use ask::Spent;
pub(crate) use desktop::DesktopAgents;
pub(crate) use evaluation::{EvaluationAgent, JudgeFailure, JudgeScreen};
pub(crate) use linux::LinuxAgent;
pub(crate) use operator::formats::{format_named, format_names};
pub(crate) use operator::{
    OperatorAgent, OperatorRun, OperatorSettings, Provider, SafetyPolicy, Target,
};
pub(crate) use replay::ReplayAgent;
pub(crate) use settings::{AgentSettings, ConfirmPolicy};
pub(crate) use summarizer::summarize;

/// A short fingerprint of the agents' prompts (the LinuxAgent's system prompt and reply
/// schema, the judge's instructions): a result made with other prompts is not kept by a
/// resumed run.
pub(crate) fn prompt_version() -> String {
    static VERSION: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
        let tools = crate::executor::shell_tools();
        let text = format!(
            "{}\n{}\n{}\n{}\n{}",
            prompt::system_prompt(tools),
            prompt::reply_schema(tools),
            prompt::correction_message(""),
            evaluation::instructions(),
            desktop::prompts()
        );
        crate::hash::hex(text.as_bytes())
    });
    VERSION.clone()
}
