//! Running the reply's actions one a step: each mapped to the desktop and run through
//! the executor like every agent's, what became of it told back in the model's words
//! and space.

use serde_json::{Value, json};

use super::{OPERATOR, OperatorAgent, Planned, calls, picture};
use crate::agent::act;
use crate::desktop::computer::space::Space;
use crate::executor::Executor;
use crate::llm::computer::{ModelAction, Outcome};
use crate::record::{ActionRecord, AgentStatus};
use crate::session::{AgentStep, Context};
use crate::tool::{Failure, ResultStatus, ToolCall, ToolResult};

impl OperatorAgent {
    /// Runs the next action of the reply under way as this step.
    pub(super) async fn run_next(
        &mut self,
        ctx: &Context,
        executor: &mut dyn Executor,
        step: &mut AgentStep,
    ) {
        let Some(planned) = self.queue.pop_front() else {
            return;
        };
        let (n, of) = planned.place;
        if of > 1 {
            step.extra.insert(
                "batch".into(),
                json!({"action": n, "of": of, "asked_at_step": self.asked_at}),
            );
        }
        let done = match &planned.action {
            Ok(ModelAction::Done { success, message }) => Some((*success, message.clone())),
            _ => None,
        };
        if let Ok(ModelAction::AskUser { question }) = &planned.action {
            // Nobody will answer in an unattended run: the model is told so, and goes on.
            step.status = AgentStatus::Pending;
            step.comment = Some(question.clone()).filter(|q| !q.trim().is_empty());
            ctx.events.info(format!(
                "step {}: the operator asked for the user; {}",
                ctx.session_step + 1,
                act::NOBODY
            ));
            self.outcomes.push(Outcome {
                id: planned.id.clone(),
                result: Ok(act::NOBODY.to_string()),
                skipped: false,
                picture: None,
            });
            return;
        }
        if let Some((success, message)) = done {
            self.queue.clear();
            step.comment = Some(message.clone())
                .filter(|m| !m.trim().is_empty())
                .or(step.comment.take());
            if success {
                step.status = AgentStatus::Finish;
            } else {
                // The agent's answer, not an error of its step: OSWorld's FAIL, the pass
                // of an infeasible task.
                step.status = AgentStatus::Fail;
                step.comment = Some(format!(
                    "the operator said the task cannot be done: {}",
                    message.trim()
                ));
            }
            return;
        }
        let (space, window) = self
            .space
            .clone()
            .expect("a reply under way was decided on a picture");
        let call = match &planned.action {
            Ok(action) => calls::call_for(action, &space, window),
            Err(why) => Err(why.clone()),
        };
        let (command, result, duration_s) = match call {
            Ok(command) => {
                let acted = act::run(
                    executor,
                    &ctx.events,
                    ctx.session_step + 1,
                    AgentStatus::Continue,
                    std::slice::from_ref(&command),
                )
                .await;
                let executed = acted
                    .executed
                    .into_iter()
                    .next()
                    .expect("one command, one result");
                (command, executed.result, executed.duration_s)
            }
            Err(why) => {
                // The model's action could not become a call: its failure, as the
                // model wrote it.
                let mut args = serde_json::Map::new();
                args.insert("model".into(), planned.raw.clone());
                let command = ToolCall::action(calls::tool_of_raw(&planned.raw), args);
                ctx.events.info(format!(
                    "step {}: {} refused: {why}",
                    ctx.session_step + 1,
                    command.tool_name
                ));
                let result =
                    ToolResult::failure(&command, OPERATOR, Failure::agent(why), Value::Null);
                (command, result, 0.0)
            }
        };
        let outcome = self.outcome(&planned, &result, &space);
        let failed = result.status != ResultStatus::Success;
        self.outcomes.push(outcome);
        if failed {
            // The rest of the reply is not run; the model is told.
            for rest in self.queue.drain(..) {
                self.outcomes.push(Outcome {
                    id: rest.id,
                    result: Err("not run".to_string()),
                    skipped: true,
                    picture: None,
                });
            }
        }
        step.actions.push(ActionRecord {
            function: command.tool_name.clone(),
            action_string: command.action_string(),
            arguments: crate::tool::call::recorded_arguments(command.parameters),
            status: step.status,
            result,
            divergence: None,
            duration_s,
        });
    }

    /// What became of `planned`, in the model's words and space.
    fn outcome(&self, planned: &Planned, result: &ToolResult, space: &Space) -> Outcome {
        let mut picture = None;
        let said = match result.status {
            ResultStatus::Success => {
                let r = &result.result;
                if let Some(png) = &result.picture
                    && let Ok(image) = crate::desktop::screenshot::Image::from_png(png, 64 << 20)
                {
                    // A zoom scaled up; a fresh screenshot shown as the batch's was (the
                    // same part of the screen, the same fit), so that its points are in
                    // the space the batch's points are mapped from.
                    let fitted = if r.get("region").is_some() {
                        picture::zoomed(&image, &self.settings).ok()
                    } else {
                        picture::refit(&image, space.region, &self.settings).ok()
                    };
                    picture = fitted;
                }
                Ok(
                    match (
                        r.get("x").and_then(Value::as_i64),
                        r.get("y").and_then(Value::as_i64),
                    ) {
                        (Some(x), Some(y)) if r.get("at").is_none() => {
                            let (mx, my) = space.to_model((x as i32, y as i32));
                            format!("the pointer is at ({mx}, {my})")
                        }
                        _ => String::new(),
                    },
                )
            }
            _ => Err(result
                .error
                .clone()
                .unwrap_or_else(|| result.status.to_string())),
        };
        Outcome {
            id: planned.id.clone(),
            result: said,
            skipped: false,
            picture,
        }
    }
}
