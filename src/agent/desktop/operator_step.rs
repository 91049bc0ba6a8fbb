//! The AppAgent's tier done by an operator (UFO's `normal_operator`): the subtask and
//! the HostAgent's tips as UFO words them (`app_agent.py`, `OpenAIOperatorAgent.
//! message_constructor`), the operator's steps in the selected window, and its end
//! handed back to the HostAgent as an AppAgent's.

use super::{DesktopAgents, Turn, said_fail};
use crate::agent::operator::NO_CONSENT;
use crate::executor::Executor;
use crate::record::AgentStatus;
use crate::session::{AgentStep, Context, Transition};

/// The operator's instruction for `subtask` with the HostAgent's `tips` (UFO's words;
/// the consent guidance is always among the tips: the run is unattended).
pub(super) fn instruction(subtask: &str, tips: &[String]) -> String {
    let mut all: Vec<&str> = tips
        .iter()
        .map(|t| t.trim())
        .filter(|t| !t.is_empty())
        .collect();
    all.push(NO_CONSENT);
    format!(
        "Please complete the following subtask: {}\nHere are some tips for you to complete the task:\n - {}",
        subtask.trim(),
        all.join("\n- ")
    )
}

impl DesktopAgents {
    pub(super) async fn operator_step(
        &mut self,
        ctx: &mut Context,
        executor: &mut dyn Executor,
    ) -> AgentStep {
        let operator = self.operator.as_mut().expect("an operator's turn");
        let mut step = crate::session::Agent::handle(operator, ctx, executor).await;
        step.subtask = self.subtask.clone();
        self.next = match step.status {
            AgentStatus::Error => Transition::Error,
            AgentStatus::Finish if self.steps.is_some() => Transition::EndRound,
            AgentStatus::Finish => {
                let subtask = self.subtask.clone().unwrap_or_default();
                let said = step
                    .comment
                    .as_deref()
                    .filter(|c| !c.trim().is_empty())
                    .map(|c| format!(": {}", crate::text::shorten(c.trim(), 500)))
                    .unwrap_or_default();
                self.host_news.push(format!(
                    "<Subtask report> The operator finished \"{}\"{said}",
                    subtask.trim()
                ));
                self.turn = Turn::Host;
                Transition::Continue
            }
            AgentStatus::Fail => {
                if step.error.is_none() {
                    step.error = Some(said_fail("operator", step.comment.as_deref()));
                }
                Transition::Fail
            }
            _ => Transition::Continue,
        };
        step
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_subtask_and_tips_read_as_ufo_words_them() {
        let text = instruction("type the title", &["The document is open.".to_string()]);
        assert_eq!(
            text,
            "Please complete the following subtask: type the title\nHere are some tips for you to complete the task:\n - The document is open.\n- Please do not ask for consent to perform the task, just execute the action."
        );
    }
}
