//! One step of the AppAgent: ask for its actions in the window its HostAgent selected,
//! carry them out, and report its subtask's end to the HostAgent (UFO's AppAgent).

use super::log_keys::app_keys;
use super::view::screen_message;
use super::{APP, DesktopAgents, Turn, app, said_fail};
use crate::agent::act;
use crate::agent::prompt::results_text;
use crate::agent::reply::parse_reply;
use crate::executor::Executor;
use crate::record::AgentStatus;
use crate::session::{AgentStep, Context, Transition};

impl DesktopAgents {
    pub(super) async fn app_step(
        &mut self,
        ctx: &mut Context,
        executor: &mut dyn Executor,
    ) -> AgentStep {
        let application = self.application(ctx);
        let name = if application.is_empty() {
            APP.to_string()
        } else {
            format!("{APP}/{application}")
        };
        let mut step = AgentStep::new(APP, name, AgentStatus::Continue);
        step.subtask = self.subtask.clone();
        let text = match self.app_news.take() {
            Some(results) => format!("{results}Reply with your next action as one JSON object."),
            None => "Reply with your first action as one JSON object.".to_string(),
        };
        let (message, folded) = screen_message(text, ctx.screen.as_deref(), self.showing());
        self.app.conversation.push_folding(message, folded);
        let tries = self.settings.reply_retries + 1;
        let tools = self.app_tools.clone();
        let reply = match Self::ask(
            &self.llm,
            &mut self.app,
            tries,
            ctx,
            &mut step,
            |content| parse_reply(content, &tools),
            app::correction_message,
        )
        .await
        {
            Ok(reply) => reply,
            Err(e) => return self.failed(ctx, step, e),
        };
        step.reasoning(&reply.words);
        let Some(commands) =
            act::commands_of(&mut step, &ctx.events, &reply, self.settings.confirm)
        else {
            self.next = Transition::Fail;
            return step;
        };
        let said = status_said(reply.status, commands.is_empty(), ctx);
        let acted = act::run(executor, &ctx.events, ctx.session_step + 1, said, &commands).await;
        let shown = acted.shown(&commands);
        let note = (reply.status == AgentStatus::Pending).then_some(act::NOBODY);
        self.app_news = Some(results_text(&shown, note, self.settings.observation_limit));
        self.app
            .conversation
            .end_step(act::step_summary(&shown, acted.status));
        step.status = acted.status;
        step.actions = acted.records(commands);
        step.extra = app_keys(
            &reply.save_screenshot,
            &step.actions,
            &application,
            self.window.as_ref(),
        );
        self.next = self.after_app(&reply.words, &mut step);
        step
    }

    /// The application the AppAgent works in: the window its HostAgent selected, else
    /// the one the screen shows.
    fn application(&self, ctx: &Context) -> String {
        self.window
            .as_ref()
            .map(|(_, a)| a.clone())
            .or_else(|| ctx.screen.as_ref().and_then(|s| s.application.clone()))
            .unwrap_or_default()
    }

    /// What the round does after the AppAgent's step: a finished subtask goes back to
    /// the HostAgent with a report (a step plan's round ends), FAIL fails.
    fn after_app(&mut self, words: &crate::session::Words, step: &mut AgentStep) -> Transition {
        match step.status {
            AgentStatus::Finish if self.steps.is_some() => Transition::EndRound,
            AgentStatus::Finish => {
                let subtask = self.subtask.clone().unwrap_or_default();
                let comment = words.comment.clone().unwrap_or_default();
                self.host_news.push(format!(
                    "<Subtask report> The AppAgent finished \"{}\"{}",
                    subtask.trim(),
                    if comment.is_empty() {
                        String::new()
                    } else {
                        format!(": {comment}")
                    }
                ));
                self.turn = Turn::Host;
                Transition::Continue
            }
            AgentStatus::Fail => {
                step.error = Some(said_fail(APP, words.comment.as_deref()));
                Transition::Fail
            }
            _ => Transition::Continue,
        }
    }
}

/// The status the AppAgent's reply says: as UFO reads it, a step with no action is the
/// end of the subtask (unless it gives up), which is told.
fn status_said(status: AgentStatus, no_action: bool, ctx: &Context) -> AgentStatus {
    match status {
        AgentStatus::Continue | AgentStatus::Pending if no_action => {
            ctx.events.info(format!(
                "step {}: the AppAgent took no action; its subtask is done (as UFO reads it)",
                ctx.session_step + 1
            ));
            AgentStatus::Finish
        }
        other => other,
    }
}
