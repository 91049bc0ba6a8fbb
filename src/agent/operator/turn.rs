//! Asking the model: its next reply on the screen, replies that cannot be used
//! corrected, a provider's refusal naming the setting to change, safety checks
//! acknowledged or refused.

use serde_json::json;

use super::{OperatorAgent, SafetyPolicy};
use crate::llm::computer::{Ask, ModelError, Png, SafetyCheck, Turn};
use crate::record::AgentStatus;
use crate::session::{AgentStep, Context, ErrorKind};
use crate::tool::Blame;

impl OperatorAgent {
    /// Asks the model for its next reply on the screen `view`, correcting replies that
    /// cannot be used; the asking's cost goes onto `step`.
    pub(super) async fn next_turn(
        &mut self,
        ctx: &Context,
        step: &mut AgentStep,
        screen: &Png,
    ) -> Result<Turn, (String, ErrorKind)> {
        let tries = self.agent.reply_retries + 1;
        let events = ctx.events.clone();
        let notify = move |message: String| events.warn(format!("operator: {message}"));
        let outcomes = std::mem::take(&mut self.outcomes);
        let acknowledged = std::mem::take(&mut self.acknowledged);
        let mut correction: Option<String> = None;
        let mut last = String::new();
        for attempt in 1..=tries {
            let first = !self.started;
            let ask = Ask {
                instruction: first.then_some(self.instruction.as_str()),
                outcomes: if attempt == 1 { &outcomes } else { &[] },
                screen,
                acknowledged: if attempt == 1 { &acknowledged } else { &[] },
                correction: correction.as_deref(),
            };
            let asked = self.model.ask(&self.client, ask, &notify).await;
            self.started = true;
            match asked {
                Ok(turn) => {
                    step.usage.add(turn.answered.usage);
                    step.cost.add(turn.answered.cost);
                    step.llm.calls += 1;
                    step.llm.images += turn.images;
                    step.llm.retries += turn.answered.attempts.saturating_sub(1);
                    if !turn.calls.is_empty() || turn.message.is_some() {
                        return Ok(turn);
                    }
                    last = "the reply has neither an action nor a message".to_string();
                }
                Err(ModelError::Llm(e)) => {
                    step.llm.retries += e.retries();
                    return Err(self.refused(e));
                }
                Err(ModelError::Unusable(why)) => {
                    step.llm.calls += 1;
                    last = why;
                }
            }
            step.llm.bad_replies += 1;
            ctx.events.warn(format!(
                "operator reply {attempt} of {tries} could not be used: {last}"
            ));
            correction = Some(format!(
                "Your last reply could not be used: {last}. Reply with your next action on the screen, or, \
                 when the task is done, with a message saying so."
            ));
        }
        Err((
            format!(
                "the operator's replies could not be used ({tries} tries; each is in task.log); last problem: {last}"
            ),
            ErrorKind::AGENT,
        ))
    }

    /// A failed request's error: a request the provider rejected (a tool version it
    /// does not serve, a model it does not have) names the setting to change.
    fn refused(&self, e: crate::llm::LlmError) -> (String, ErrorKind) {
        use crate::llm::LlmError;
        let kind = crate::agent::ask::llm_error_kind(&e);
        match &e {
            LlmError::Rejected { status, detail }
                if (400..500).contains(status) && names_the_tool(detail) =>
            {
                (
                    format!(
                        "{e}; the provider does not serve the computer tool {:?} for model {:?} as asked: check {} and [operator] model",
                        self.settings.provider.version(),
                        self.client.model(),
                        self.settings.provider.version_key()
                    ),
                    ErrorKind::Fatal(Blame::Config),
                )
            }
            _ => (e.to_string(), kind),
        }
    }

    /// What a reply's safety checks make of the step: recorded and counted; with
    /// `refuse`, the task's failure.
    pub(super) fn safety(
        &mut self,
        ctx: &Context,
        step: &mut AgentStep,
        checks: Vec<SafetyCheck>,
    ) -> bool {
        if checks.is_empty() {
            return true;
        }
        step.llm.safety_checks += checks.len() as u32;
        step.extra
            .insert("safety_checks".into(), json!(checks.clone()));
        let said: Vec<String> = checks
            .iter()
            .map(|c| {
                format!(
                    "{} ({})",
                    c.code.as_deref().unwrap_or("unnamed"),
                    c.message.as_deref().unwrap_or("no message")
                )
            })
            .collect();
        match self.settings.safety_checks {
            SafetyPolicy::Acknowledge => {
                ctx.events.warn(format!(
                    "the provider raised {}: acknowledged ([operator] safety_checks = \"acknowledge\"): {}",
                    crate::text::plural(checks.len(), "safety check"),
                    said.join("; ")
                ));
                self.acknowledged = checks;
                true
            }
            SafetyPolicy::Refuse => {
                let why = format!(
                    "the provider raised a safety check: {}; [operator] safety_checks = \"refuse\" fails the task",
                    said.join("; ")
                );
                ctx.events.warn(why.clone());
                step.status = AgentStatus::Fail;
                step.error = Some(why);
                false
            }
        }
    }
}

/// Whether a provider's refusal is of the tool or the model the configuration names
/// (every task would be refused alike), not of this one request (a context too long, a
/// conversation it lost).
fn names_the_tool(detail: &str) -> bool {
    let lower = detail.to_ascii_lowercase();
    ["tool", "computer", "beta", "model"]
        .iter()
        .any(|w| lower.contains(w))
        && ![
            "context",
            "too long",
            "too large",
            "previous_response",
            "call_id",
        ]
        .iter()
        .any(|w| lower.contains(w))
}
