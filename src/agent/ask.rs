//! Asking the model until a reply can be used, for both the agent and the judge: each
//! reply goes into the conversation; one that does not parse is quoted in the task's log
//! and answered with a correction, up to a number of tries. What the asking cost is
//! counted whatever the outcome.

use serde_json::Value;

use super::conversation::Conversation;
use crate::event::TaskEvents;
use crate::llm::{LlmClient, LlmError, Message};
use crate::record::LlmStats;
use crate::units::{Cost, Usage};

/// Characters of an unusable reply quoted in the task's log.
const QUOTE_LIMIT: usize = 4000;

/// Who is asking; sets how its notices read in the task's log.
#[derive(Clone, Copy, Debug)]
pub(super) enum Asker {
    Agent,
    Judge,
    Summarizer,
}

impl Asker {
    fn notice(self, message: String) -> String {
        match self {
            Self::Agent => message,
            Self::Judge => format!("judge: {message}"),
            Self::Summarizer => format!("experience summary: {message}"),
        }
    }

    fn unusable(self, attempt: u32, tries: u32, problem: &str) -> String {
        match self {
            Self::Agent => format!("reply {attempt} of {tries} could not be used: {problem}"),
            Self::Judge => format!("judge reply {attempt} could not be used: {problem}"),
            Self::Summarizer => {
                format!("experience summary reply {attempt} could not be used: {problem}")
            }
        }
    }
}

/// What asking cost.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Spent {
    pub(crate) usage: Usage,
    pub(crate) cost: Cost,
    pub(crate) llm: LlmStats,
}

/// Why asking gave no usable reply.
pub(super) enum AskError {
    /// The request itself failed (after the client's own retries).
    Llm(LlmError),
    /// Every reply was unusable; the last one's problem.
    Unusable(String),
}

/// What a failed LLM request makes of a step: whose failure it is (a refused key or
/// model is the configuration's, the rest the provider's or the network's), and
/// whether every other task would fail the same way.
pub(super) fn llm_error_kind(e: &LlmError) -> crate::session::ErrorKind {
    use crate::tool::Blamed;
    if e.is_fatal() {
        crate::session::ErrorKind::Fatal(e.blame())
    } else {
        crate::session::ErrorKind::Blamed(e.blame())
    }
}

impl AskError {
    /// The step error this is (why, in words, and whose failure), `tries` having been
    /// made.
    pub(super) fn into_step_error(self, tries: u32) -> (String, crate::session::ErrorKind) {
        use crate::session::ErrorKind;
        match self {
            Self::Llm(e) => (e.to_string(), llm_error_kind(&e)),
            Self::Unusable(last_problem) => (
                format!(
                    "the model's replies could not be used ({tries} tries; each is quoted in task.log); last problem: {last_problem}"
                ),
                ErrorKind::AGENT,
            ),
        }
    }
}

/// One way of asking: whom, with which system prompt and reply schema, how often.
pub(super) struct Ask<'a> {
    pub(crate) llm: &'a LlmClient,
    pub(crate) asker: Asker,
    pub(crate) system: &'a str,
    pub(crate) schema: &'a Value,
    pub(crate) tries: u32,
    pub(crate) events: &'a TaskEvents,
}

impl Ask<'_> {
    /// Asks for an agent's step until `parse` accepts a reply, counting what asking cost
    /// on `step`; an `Err` is why the step ends in ERROR, and whose failure that is.
    pub(super) async fn for_step<T>(
        &self,
        conversation: &mut Conversation,
        step: &mut crate::session::AgentStep,
        // Its error is the correction the model is sent, word for word.
        parse: impl Fn(&str) -> Result<T, String>,
        correct: impl Fn(&str) -> String,
    ) -> Result<T, (String, crate::session::ErrorKind)> {
        let mut spent = Spent::default();
        let result = self
            .until_parsed(conversation, &mut spent, parse, correct)
            .await;
        step.usage.add(spent.usage);
        step.cost.add(spent.cost);
        step.llm.add(spent.llm);
        result.map_err(|e| e.into_step_error(self.tries))
    }

    /// Asks until `parse` accepts a reply; `correct` words the answer to one it refuses.
    pub(super) async fn until_parsed<T>(
        &self,
        conversation: &mut Conversation,
        spent: &mut Spent,
        // Its error is the correction the model is sent, word for word.
        parse: impl Fn(&str) -> Result<T, String>,
        correct: impl Fn(&str) -> String,
    ) -> Result<T, AskError> {
        let events = self.events.clone();
        let asker = self.asker;
        let notify = move |message: String| events.warn(asker.notice(message));
        let mut last_problem = String::new();
        for attempt in 1..=self.tries {
            let messages = conversation.messages(self.system);
            let answer = match self.llm.chat(&messages, Some(self.schema), &notify).await {
                Ok(answer) => answer,
                Err(e) => {
                    spent.llm.retries += e.retries();
                    return Err(AskError::Llm(e));
                }
            };
            spent.usage.add(answer.usage);
            spent.cost.add(answer.cost);
            spent.llm.calls += 1;
            spent.llm.images += messages.iter().map(Message::images).sum::<usize>() as u32;
            spent.llm.retries += answer.attempts - 1;
            conversation.push(Message::assistant(answer.content.clone()));
            match parse(&answer.content) {
                Ok(reply) => return Ok(reply),
                Err(problem) => {
                    spent.llm.bad_replies += 1;
                    self.events.warn(format!(
                        "{}\n--- reply ---\n{}",
                        asker.unusable(attempt, self.tries, &problem),
                        crate::text::shorten(&answer.content, QUOTE_LIMIT)
                    ));
                    conversation.push(Message::user(correct(&problem)));
                    last_problem = problem;
                }
            }
        }
        Err(AskError::Unusable(last_problem))
    }
}
