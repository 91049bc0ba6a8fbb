//! An agent's conversation with the model during one round: the round's brief, the
//! steps taken (each the model's reply, any corrections, and the results), and the step
//! under way. Only the last `keep` steps go to the model in full; older ones are folded
//! into one summary line each, so a long session stays within the model's context; only
//! the step under way carries images.

use std::fmt::Write;

use crate::llm::Message;

/// One finished step: its messages, and a line that stands for them once folded.
struct Turn {
    messages: Vec<Message>,
    summary: String,
}

/// The conversation of one round.
pub(super) struct Conversation {
    brief: Message,
    done: Vec<Turn>,
    /// The step under way: each message, and what it becomes once the step is done
    /// (a desktop step's screen, folded to a line), if not itself.
    current: Vec<(Message, Option<Message>)>,
    /// Steps sent in full (0: all).
    keep: usize,
}

impl Conversation {
    /// An empty conversation that sends the last `keep` steps in full (0: all).
    pub(super) fn new(keep: usize) -> Self {
        Self {
            brief: Message::user(String::new()),
            done: Vec::new(),
            current: Vec::new(),
            keep,
        }
    }

    /// Starts a round with its brief, forgetting the previous round.
    pub(super) fn start(&mut self, brief: String) {
        self.start_with(Message::user(brief));
    }

    /// Starts a round with a brief that may hold images (the judge's screenshots).
    pub(super) fn start_with(&mut self, brief: Message) {
        self.brief = brief;
        self.done.clear();
        self.current.clear();
    }

    /// Adds a message to the step under way.
    pub(super) fn push(&mut self, message: Message) {
        self.current.push((message, None));
    }

    /// Adds a message to the step under way that is sent as `folded` once the step is
    /// done (a screen's listing and screenshots, which only the step under way needs).
    pub(super) fn push_folding(&mut self, message: Message, folded: Message) {
        self.current.push((message, Some(folded)));
    }

    /// Closes the step under way; `summary` stands for it once it is folded. Its
    /// images (a desktop step's screenshots) are not sent again: only the step under
    /// way shows the screen.
    pub(super) fn end_step(&mut self, summary: String) {
        let messages = std::mem::take(&mut self.current)
            .into_iter()
            .map(|(m, folded)| {
                folded.unwrap_or_else(|| {
                    m.without_images("(the screenshots of this step are not shown again)")
                })
            })
            .collect();
        self.done.push(Turn { messages, summary });
    }

    /// What to send: the system prompt, the brief (with the folded steps summarized),
    /// the last `keep` steps and the step under way.
    pub(super) fn messages(&self, system: &str) -> Vec<Message> {
        let folded = if self.keep == 0 {
            0
        } else {
            self.done.len().saturating_sub(self.keep)
        };
        let mut brief = self.brief.clone();
        if folded > 0 {
            let mut summary = format!("\n\n<Earlier steps, summarized ({folded} of them)>");
            for (i, turn) in self.done[..folded].iter().enumerate() {
                let _ = write!(summary, "\n{}. {}", i + 1, turn.summary);
            }
            brief.append_text(&summary);
        }
        let mut out = vec![Message::system(system), brief];
        out.extend(
            self.done[folded..]
                .iter()
                .flat_map(|t| t.messages.iter().cloned()),
        );
        out.extend(self.current.iter().map(|(m, _)| m.clone()));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::Role;

    fn texts(messages: &[Message]) -> Vec<String> {
        messages
            .iter()
            .map(|m| format!("{:?}: {}", m.role, m.text()))
            .collect()
    }

    #[test]
    fn keeps_the_last_steps_and_summarizes_the_rest() {
        let mut c = Conversation::new(2);
        c.start("do it".into());
        for i in 1..=4 {
            c.push(Message::assistant(format!("reply {i}")));
            c.push(Message::user(format!("results {i}")));
            c.end_step(format!("ls {i} -> success"));
        }
        c.push(Message::assistant("bad"));
        let m = c.messages("sys");
        assert_eq!(m[0].role, Role::System);
        assert_eq!(
            m[1].text(),
            "do it\n\n<Earlier steps, summarized (2 of them)>\n1. ls 1 -> success\n2. ls 2 -> success"
        );
        assert_eq!(
            texts(&m[2..]),
            [
                "Assistant: reply 3",
                "User: results 3",
                "Assistant: reply 4",
                "User: results 4",
                "Assistant: bad"
            ]
        );
    }

    #[test]
    fn keep_zero_sends_everything_and_a_new_round_forgets() {
        let mut c = Conversation::new(0);
        c.start("one".into());
        for i in 0..30 {
            c.push(Message::assistant(format!("r{i}")));
            c.end_step(String::new());
        }
        assert_eq!(c.messages("s").len(), 32);
        c.start("two".into());
        assert_eq!(texts(&c.messages("s")), ["System: s", "User: two"]);
    }
}
