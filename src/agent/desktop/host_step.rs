//! One step of the HostAgent: ask for its move, select the window it names, and hand
//! the AppAgent its subtask (UFO's HostAgent, ufo.md §6).

use serde_json::Value;

use super::log_keys::host_keys;
use super::view::screen_message;
use super::{DesktopAgents, HOST, host, said_fail};
use crate::agent::act;
use crate::agent::prompt::results_text;
use crate::executor::Executor;
use crate::record::AgentStatus;
use crate::session::{AgentStep, Context, Transition};
use crate::tool::{ResultStatus, ToolCall};

impl DesktopAgents {
    pub(super) async fn host_step(
        &mut self,
        ctx: &mut Context,
        executor: &mut dyn Executor,
    ) -> AgentStep {
        let mut step = AgentStep::new(HOST, HOST, AgentStatus::Continue);
        let mut text = std::mem::take(&mut self.host_news).join("\n");
        if !text.is_empty() {
            text.push('\n');
        }
        text.push_str("Choose your next move as one JSON object.");
        let (message, folded) = screen_message(text, ctx.screen.as_deref(), self.showing());
        self.host.conversation.push_folding(message, folded);
        let tries = self.settings.reply_retries + 1;
        let reply = match Self::ask(
            &self.llm,
            &mut self.host,
            tries,
            ctx,
            &mut step,
            host::parse,
            host::correction_message,
        )
        .await
        {
            Ok(reply) => reply,
            Err(e) => return self.failed(ctx, step, e),
        };
        step.reasoning(&reply.words);
        step.subtask = reply.current_subtask.clone();
        let mut status = reply.status;
        let mut summary = format!("{status}");
        if let Some(arguments) = reply.select.clone() {
            let (acted, said) = self.select_window(ctx, executor, arguments, status).await;
            status = acted;
            summary = said.0;
            step.actions = said.1;
        }
        self.next = self.after_host(ctx, &reply, &mut status, &mut step);
        step.status = status;
        self.host.conversation.end_step(summary);
        step.extra = host_keys(&reply, &step, self.window.as_ref(), self.assigned);
        step
    }

    /// Carries out the HostAgent's window selection: the window (and its app's API
    /// tools) the AppAgent works in from now on. Returns the status after it, and the
    /// step's summary and action records.
    async fn select_window(
        &mut self,
        ctx: &Context,
        executor: &mut dyn Executor,
        arguments: serde_json::Map<String, Value>,
        status: AgentStatus,
    ) -> (AgentStatus, (String, Vec<crate::record::ActionRecord>)) {
        let command = ToolCall::action(host::SELECT_WINDOW, arguments);
        let commands = std::slice::from_ref(&command);
        let acted = act::run(
            executor,
            &ctx.events,
            ctx.session_step + 1,
            status,
            commands,
        )
        .await;
        let status = acted.status;
        let result = &acted.executed[0].result;
        self.window = (result.status == ResultStatus::Success).then(|| {
            let text = |k: &str| {
                let v = result.result.get(k).and_then(Value::as_str);
                v.unwrap_or_default().to_string()
            };
            (text("window"), text("application"))
        });
        if result.status == ResultStatus::Success {
            let api = result.result.get("api").and_then(Value::as_str);
            self.offer_api(api);
        }
        let shown = acted.shown(commands);
        self.host_news
            .push(results_text(&shown, None, self.settings.observation_limit));
        let summary = act::step_summary(&shown, status);
        (status, (summary, acted.records(vec![command])))
    }

    /// What the round does after the HostAgent's step with `status` (which an ASSIGN
    /// with no window selected turns into CONTINUE, with a note).
    fn after_host(
        &mut self,
        ctx: &Context,
        reply: &host::HostReply,
        status: &mut AgentStatus,
        step: &mut AgentStep,
    ) -> Transition {
        let follower = self.steps.is_some();
        match *status {
            AgentStatus::Assign if follower && self.window.is_some() => Transition::EndRound,
            AgentStatus::Assign if self.window.is_some() => {
                let subtask = reply.current_subtask.clone().unwrap_or_default();
                self.assigned += 1;
                ctx.events.info(format!(
                    "step {}: the HostAgent assigns subtask {} to the AppAgent: {}",
                    ctx.session_step + 1,
                    self.assigned,
                    crate::text::shorten(&subtask, 200)
                ));
                self.start_subtask(ctx, subtask, &reply.message);
                Transition::Continue
            }
            AgentStatus::Assign => {
                *status = AgentStatus::Continue;
                self.host_news.push(
                    "Note: ASSIGN needs a window: select one with select_application_window (its id and name from the list) in the same reply."
                        .to_string(),
                );
                Transition::Continue
            }
            AgentStatus::Pending => {
                self.host_news.push(format!("Note: {}", act::NOBODY));
                Transition::Continue
            }
            AgentStatus::Finish => Transition::EndRound,
            AgentStatus::Fail => {
                step.error = Some(said_fail(HOST, reply.words.comment.as_deref()));
                Transition::Fail
            }
            _ => Transition::Continue,
        }
    }
}
