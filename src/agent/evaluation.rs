//! The EvaluationAgent: an LLM judge of a finished session (UFO's evaluation contract,
//! ufo.md §5). It sees the request, every step (thought, action, result) and the final
//! workspace, and answers `{reason, sub_scores: [{name, evaluation}], complete}`.

use std::fmt::Write;
use std::path::Path;
use std::sync::Arc;

use serde_json::{Value, json};

use super::ask::{Ask, AskError, Asker, Spent};
use super::conversation::Conversation;
use super::json_text::extract_object;
use super::prompt::workspace_listing;
use crate::event::TaskEvents;
use crate::llm::{LlmClient, Message, Part};
use crate::record::{Complete, Evaluation, Evaluator, LlmStats, StepRecord, SubScore};
use crate::tool::ResultStatus;
use crate::units::{Cost, Usage};

/// Characters of each command output shown to the judge.
const OUTPUT_LIMIT: usize = 600;
/// Small text files whose content the judge sees, and their size limit.
const FILES_SHOWN: usize = 8;
const FILE_LIMIT: usize = 1500;

/// What the judge said, and what asking cost.
#[derive(Clone, Debug)]
pub(crate) struct Judgement {
    /// The verdict.
    pub(crate) evaluation: Evaluation,
    /// Tokens used.
    pub(crate) usage: Usage,
    /// Their cost.
    pub(crate) cost: Cost,
    /// Calls, retries, unusable replies.
    pub(crate) llm: LlmStats,
}

/// Why there is no verdict, with what asking cost so far.
#[derive(Clone, Debug)]
pub(crate) struct JudgeFailure {
    /// In words.
    pub(crate) reason: String,
    /// Whose failure it is (the LLM's configuration, or the provider's), and whether
    /// every task would fail the same way.
    pub(crate) kind: crate::session::ErrorKind,
    /// Tokens used before it failed.
    pub(crate) usage: Usage,
    /// Their cost.
    pub(crate) cost: Cost,
    /// Calls made.
    pub(crate) llm: LlmStats,
}

/// The judge.
pub(crate) struct EvaluationAgent {
    llm: Arc<LlmClient>,
    reply_retries: u32,
}

impl EvaluationAgent {
    /// A judge asking `llm`, re-asking an unusable reply `reply_retries` times.
    pub(crate) fn new(llm: Arc<LlmClient>, reply_retries: u32) -> Self {
        Self { llm, reply_retries }
    }

    /// Judges a session; `desktop` says it was a desktop session, whose `screens` (step
    /// and final screenshots, labelled) are shown with the trajectory, UFO's
    /// `EVA_ALL_SCREENSHOTS` (none without vision).
    pub(crate) async fn judge(
        &self,
        request: &str,
        steps: &[StepRecord],
        workspace: &Path,
        desktop: Option<&[JudgeScreen]>,
        events: &TaskEvents,
    ) -> Result<Judgement, JudgeFailure> {
        let mut conversation = Conversation::new(0);
        let text = brief(request, steps, workspace);
        let system = match desktop {
            None => {
                conversation.start(format!("{text}\n<Your response>"));
                SYSTEM
            }
            Some([]) => {
                conversation.start(format!("{text}\n<Your response>"));
                SYSTEM_DESKTOP
            }
            Some(screens) => {
                let mut parts = vec![Part::text(text)];
                for screen in screens {
                    parts.push(Part::text(format!("<{}>", screen.label)));
                    parts.push(Part::png(&screen.png));
                }
                parts.push(Part::text("<Your response>"));
                conversation.start_with(Message::user_parts(parts));
                SYSTEM_DESKTOP
            }
        };
        let schema = schema();
        let ask = Ask {
            llm: &self.llm,
            asker: Asker::Judge,
            system,
            schema: &schema,
            tries: self.reply_retries + 1,
            events,
        };
        let mut spent = Spent::default();
        let verdict = ask
            .until_parsed(&mut conversation, &mut spent, parse_verdict, |p| {
                format!(
                    "That reply could not be used: {p}. Reply with one JSON object with the keys reason, sub_scores and complete."
                )
            })
            .await;
        let Spent { usage, cost, llm } = spent;
        match verdict {
            Ok(evaluation) => Ok(Judgement {
                evaluation,
                usage,
                cost,
                llm,
            }),
            Err(e) => {
                let (reason, kind) = match e {
                    AskError::Llm(e) => (e.to_string(), super::ask::llm_error_kind(&e)),
                    // The judge's model, not the agent: another try may do better.
                    AskError::Unusable(problem) => (
                        format!("its replies could not be used; last problem: {problem}"),
                        crate::session::ErrorKind::INFRASTRUCTURE,
                    ),
                };
                Err(JudgeFailure {
                    reason,
                    kind,
                    usage,
                    cost,
                    llm,
                })
            }
        }
    }
}

const SYSTEM: &str = "You evaluate whether an agent completed a task. The agent worked in a Linux workspace \
folder through tools (shell commands and file operations). You get the original request, the agent's \
trajectory (for each step: its thought, the action it took and the result), and the final content of the \
workspace.\n\nJudge only from this evidence, never from the agent's own claims of success. List sub-scores: \
the separate requirements the request states (for example \"output file exists\", \"rows sorted by score\"), \
each judged yes, no or unsure. complete is yes only if every requirement is met, no if one is not, unsure if \
the evidence cannot tell.\n\nReply with exactly one JSON object and nothing else:\n\
{\"reason\": \"why, citing the evidence\", \"sub_scores\": [{\"name\": \"requirement\", \"evaluation\": \"yes | no | unsure\"}], \
\"complete\": \"yes | no | unsure\"}";

/// The judge's standing instructions for a desktop session, which also sees screenshots.
const SYSTEM_DESKTOP: &str = "You evaluate whether an agent completed a task on desktop applications. A HostAgent \
selected application windows and handed subtasks to AppAgents, which acted on the windows' controls (clicks, typed \
keys, text). You get the original request, the trajectory (for each step: the agent, its subtask, its thought, the \
action it took and the result), the final content of the workspace folder (the documents saved there), and, when \
there are any, screenshots: some of the steps' screens and the final screen.\n\nJudge only from this evidence, never from the \
agents' own claims of success; what a screenshot or a saved document shows outweighs what an agent says. List \
sub-scores: the separate requirements the request states, each judged yes, no or unsure. complete is yes only if \
every requirement is met, no if one is not, unsure if the evidence cannot tell.\n\nReply with exactly one JSON \
object and nothing else:\n{\"reason\": \"why, citing the evidence\", \"sub_scores\": [{\"name\": \"requirement\", \
\"evaluation\": \"yes | no | unsure\"}], \"complete\": \"yes | no | unsure\"}";

/// A screenshot the judge sees.
#[derive(Clone, Debug)]
pub(crate) struct JudgeScreen {
    /// What it shows (`Final Screenshot`, `Screenshot of step 3`).
    pub(crate) label: String,
    /// The PNG.
    pub(crate) png: Vec<u8>,
}

/// The judge's standing instructions.
pub(super) fn instructions() -> String {
    format!("{SYSTEM}\n{SYSTEM_DESKTOP}")
}

fn brief(request: &str, steps: &[StepRecord], workspace: &Path) -> String {
    let mut m = format!(
        "<Original Request> {}\n\n<Execution Trajectory>\n",
        request.trim()
    );
    if steps.is_empty() {
        m.push_str("(no steps)\n");
    }
    for s in steps {
        let _ = write!(m, "Step {} [{}]", s.session_step, s.status);
        if matches!(s.agent_type.as_str(), "HostAgent" | "AppAgent") {
            let _ = write!(m, " {}", s.agent_name);
        }
        if let Some(subtask) = &s.subtask {
            let _ = write!(m, " subtask: {}", subtask.trim());
        }
        m.push('\n');
        if let Some(t) = s.thought.as_deref().filter(|t| !t.trim().is_empty()) {
            let _ = writeln!(m, "  thought: {}", t.trim());
        }
        for a in &s.action {
            let r = &a.result;
            let code = r
                .exit_code()
                .map(|c| format!(", exit code {c}"))
                .unwrap_or_default();
            let _ = writeln!(m, "  action: {} -> {}{code}", a.action_string, r.status);
            if let Some(e) = r
                .error
                .as_deref()
                .filter(|_| r.status != ResultStatus::Success)
            {
                let _ = writeln!(m, "    error: {}", crate::text::shorten(e, OUTPUT_LIMIT));
            }
            for key in ["stdout", "stderr", "content", "text"] {
                if let Some(text) = r
                    .result
                    .get(key)
                    .and_then(Value::as_str)
                    .filter(|t| !t.trim().is_empty())
                {
                    let shown = crate::text::shorten(text.trim_end(), OUTPUT_LIMIT)
                        .replace('\n', "\n      ");
                    let _ = writeln!(m, "    {key}: {shown}");
                }
            }
        }
        if let Some(c) = s.comment.as_deref().filter(|c| !c.trim().is_empty()) {
            let _ = writeln!(m, "  comment: {}", c.trim());
        }
    }
    let _ = write!(
        m,
        "\n<Final workspace>\n{}\n",
        workspace_listing(workspace, 50)
    );
    for (path, text) in small_text_files(workspace) {
        let _ = write!(m, "\n<File {path}>\n{text}\n");
    }
    m
}

/// Up to FILES_SHOWN small UTF-8 files of the workspace, with their text, read beneath
/// it with the task's rights (`confined`).
fn small_text_files(root: &Path) -> Vec<(String, String)> {
    let Ok(ws) = crate::confined::Confined::open(root) else {
        return Vec::new();
    };
    let limit = FILE_LIMIT as u64;
    ws.walk(usize::MAX, super::prompt::WORKSPACE_SEEN)
        .entries
        .into_iter()
        .filter(|e| e.kind == crate::confined::Kind::File && e.size <= limit)
        .filter_map(|e| {
            let file = ws.read(&e.path, limit, Some(limit)).ok()?;
            Some((e.path.to_string(), String::from_utf8(file.bytes).ok()?))
        })
        .take(FILES_SHOWN)
        .collect()
}

fn schema() -> Value {
    let verdict = json!({"type": "string", "enum": ["yes", "no", "unsure"]});
    json!({
        "type": "object",
        "properties": {
            "reason": {"type": "string"},
            "sub_scores": {"type": "array", "items": {"type": "object",
                "properties": {"name": {"type": "string"}, "evaluation": verdict}, "required": ["name", "evaluation"]}},
            "complete": verdict
        },
        "required": ["reason", "sub_scores", "complete"]
    })
}

/// A judge's reply, leniently: keys in any case, sub-scores as a list or as a map
/// (dataflow's form), verdicts as yes/no/unsure or booleans.
// The error is the data: the correction the model is sent, word for word.
pub(crate) fn parse_verdict(text: &str) -> Result<Evaluation, String> {
    let value = extract_object(text)?;
    let object: serde_json::Map<String, Value> = value
        .as_object()
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .map(|(k, v)| (k.to_ascii_lowercase(), v))
        .collect();
    let complete = match object.get("complete") {
        Some(v) => {
            verdict(v).ok_or_else(|| format!("`complete` must be yes, no or unsure, not {v}"))?
        }
        None => return Err("the reply has no `complete`".to_string()),
    };
    let sub_scores = match object.get("sub_scores") {
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(|item| {
                let name = item.get("name").and_then(Value::as_str)?.to_string();
                let evaluation = item.get("evaluation").and_then(verdict)?;
                Some(SubScore {
                    name,
                    evaluation,
                    detail: None,
                })
            })
            .collect(),
        Some(Value::Object(map)) => map
            .iter()
            .filter_map(|(name, v)| {
                Some(SubScore {
                    name: name.clone(),
                    evaluation: verdict(v)?,
                    detail: None,
                })
            })
            .collect(),
        _ => Vec::new(),
    };
    let reason = object
        .get("reason")
        .and_then(Value::as_str)
        .unwrap_or("")
        .trim()
        .to_string();
    Ok(Evaluation {
        reason,
        sub_scores,
        complete,
        evaluator: Evaluator::Llm,
        judge: None,
        score: None,
    })
}

fn verdict(v: &Value) -> Option<Complete> {
    match v {
        Value::Bool(true) => Some(Complete::Yes),
        Value::Bool(false) => Some(Complete::No),
        Value::String(s) => match s.trim().to_ascii_lowercase().as_str() {
            "yes" | "true" => Some(Complete::Yes),
            "no" | "false" => Some(Complete::No),
            "unsure" => Some(Complete::Unsure),
            _ => None,
        },
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_in_ufo_and_dataflow_forms() {
        let e = parse_verdict(r#"{"reason": "ok", "sub_scores": [{"name": "file", "evaluation": "yes"}], "complete": "yes"}"#).unwrap();
        assert_eq!(
            (e.complete, e.sub_scores.len(), e.evaluator),
            (Complete::Yes, 1, Evaluator::Llm)
        );
        let e = parse_verdict("```json\n{\"Reason\": \"r\", \"Sub_Scores\": {\"a\": \"no\"}, \"Complete\": \"NO\"}\n```").unwrap();
        assert_eq!(
            (e.complete, e.sub_scores[0].evaluation),
            (Complete::No, Complete::No)
        );
        assert_eq!(
            parse_verdict(r#"{"reason": "r"}"#).unwrap_err(),
            "the reply has no `complete`"
        );
        assert!(
            parse_verdict(r#"{"complete": "maybe"}"#)
                .unwrap_err()
                .contains("must be yes, no or unsure")
        );
    }
}
