//! The runner's side of OSWorld's evaluator bridge (`driver.py`, run by the Python that
//! has OSWorld's code, inside the task's desktop jail, beside OSWorld's server): one JSON
//! line each way (`desktop::json_lines`). `setup` runs the task's `config` through
//! OSWorld's `SetupController`, step by step and timed; `evaluate` runs OSWorld's own
//! `DesktopEnv.evaluate()` (postconfig, getters, metric) and answers its score. An
//! answer is `{"ok": ...}` or `{"error", "kind", "detail"}`, `kind` saying whose
//! failure it is.

use std::time::Duration;

use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::desktop::backend::HelperPipes;
use crate::desktop::json_lines::{JsonLines, LineError};
use crate::tool::{Blame, Failure};

/// The longest answer line read (an evaluation's details are a few kilobytes).
const MAX_ANSWER: u64 = 1 << 20;
/// How long one request may take: OSWorld's own `open` waits up to 1800 s for its window
/// (the task's wall-clock limit ends it sooner).
const REQUEST_LIMIT: Duration = Duration::from_secs(1900);

/// What the bridge's setup did.
#[derive(Clone, Debug, Deserialize, PartialEq)]
pub(crate) struct SetupDone {
    /// Seconds in all (waiting for the server included).
    pub(crate) seconds: f64,
    /// Each step: its type and seconds.
    #[serde(default)]
    pub(crate) steps: Vec<StepTime>,
}

/// One setup step's time.
#[derive(Clone, Debug, Deserialize, PartialEq)]
pub(crate) struct StepTime {
    /// Its type.
    #[serde(rename = "type")]
    pub(crate) kind: String,
    /// Seconds it took.
    pub(crate) seconds: f64,
}

/// OSWorld's score of a session.
#[derive(Clone, Debug, Deserialize, PartialEq)]
pub(crate) struct Scored {
    /// What OSWorld's evaluator returned (0–1).
    pub(crate) score: f64,
    /// Seconds the evaluation took.
    #[serde(default)]
    pub(crate) seconds: f64,
    /// Seconds of it its postconfig took.
    #[serde(default)]
    pub(crate) postconfig_seconds: f64,
    /// What each getter returned and each metric gave, as the bridge saw them.
    #[serde(default)]
    pub(crate) details: Vec<Value>,
}

/// How the agent's session ended, as OSWorld's action history says it: OSWorld scores
/// `FAIL` as the pass of an infeasible task and as 0 of any other.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LastAction {
    /// The agent said it is done.
    Done,
    /// The agent said the task cannot be done.
    Fail,
    /// It said neither (a step or round limit ended it).
    None,
}

/// The bridge, running.
pub(crate) struct Driver {
    lines: JsonLines,
}

/// The bridge's words for a failure that is its own, not the task's.
const BRIDGE: &str = "OSWorld's evaluator bridge";

impl Driver {
    /// The bridge on the ends of its pipes.
    pub(crate) fn over((to, from): HelperPipes) -> Self {
        Self {
            lines: JsonLines::new(to, from),
        }
    }

    /// Runs the task's setup steps (`task` is OSWorld's task object; `cache` the cache
    /// folder as the bridge sees it; `wait` how long the server may take to answer).
    pub(crate) async fn setup(
        &mut self,
        task: &Value,
        cache: &str,
        screen: (u32, u32),
        wait: Duration,
    ) -> Result<SetupDone, Failure> {
        let request = json!({
            "op": "setup",
            "task": task,
            "cache_dir": cache,
            "server": super::SERVER_URL,
            "screen": [screen.0, screen.1],
            "wait": wait.as_secs(),
        });
        let ok = self.ask(request).await?;
        serde_json::from_value(ok).map_err(|e| garbage(&e))
    }

    /// Scores the session as OSWorld does.
    pub(crate) async fn evaluate(&mut self, last: LastAction) -> Result<Scored, Failure> {
        let last = match last {
            LastAction::Done => json!("DONE"),
            LastAction::Fail => json!("FAIL"),
            LastAction::None => Value::Null,
        };
        let ok = self
            .ask(json!({"op": "evaluate", "last_action": last}))
            .await?;
        let scored: Scored = serde_json::from_value(ok).map_err(|e| garbage(&e))?;
        if !(0.0..=1.0).contains(&scored.score) {
            return Err(Failure::new(
                Blame::TaskFile,
                format!(
                    "OSWorld's evaluator returned {}, not a score from 0 to 1",
                    scored.score
                ),
            ));
        }
        Ok(scored)
    }

    /// One request; its `ok`, or its error as a failure of whoever's it is.
    async fn ask(&mut self, request: Value) -> Result<Value, Failure> {
        let Value::Object(request) = request else {
            unreachable!("requests are objects")
        };
        let mut answer = self
            .lines
            .exchange(request, REQUEST_LIMIT, MAX_ANSWER)
            .await
            .map_err(|e: LineError| Failure::environment(format!("{BRIDGE} {e}")))?;
        if let Some(ok) = answer.remove("ok") {
            return Ok(ok);
        }
        Err(refusal(&answer))
    }
}

/// An answer that is not what the protocol says.
fn garbage(e: &serde_json::Error) -> Failure {
    Failure::environment(format!("{BRIDGE} answered garbage ({e})"))
}

/// The failure an error answer tells, by its `kind`: the machine's (a server that does
/// not answer, a package that is missing), or the task file's (a step, getter or metric
/// OSWorld's code does not have, a step that fails, an evaluator that raised).
pub(crate) fn refusal(answer: &Map<String, Value>) -> Failure {
    let text = |k: &str| answer.get(k).and_then(Value::as_str).unwrap_or_default();
    let (error, kind, detail) = (text("error"), text("kind"), text("detail"));
    if error.is_empty() {
        return Failure::environment(format!("{BRIDGE} gave no answer"));
    }
    let blame = match kind {
        // A step as the task file writes it that fails on a desktop that answers (a file
        // it opens that nothing downloaded) fails the same way on the next try.
        "task" | "setup" | "evaluator" => Blame::TaskFile,
        _ => Blame::Environment,
    };
    let detail = crate::text::shorten(detail.trim(), 600);
    let message = match detail.is_empty() {
        true => error.to_string(),
        false => format!("{error} ({detail})"),
    };
    Failure::new(blame, message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_answer_is_whoevers_its_kind_says() {
        let answer = |v: Value| v.as_object().cloned().unwrap();
        let machine = refusal(&answer(
            json!({"error": "the OSWorld server did not answer within 60s", "kind": "machine"}),
        ));
        assert_eq!(machine.blame, Blame::Environment);
        assert_eq!(
            machine.message,
            "the OSWorld server did not answer within 60s"
        );
        let metric = refusal(&answer(
            json!({"error": "the metric compare_table raised KeyError: 'Sheet2'", "kind": "evaluator", "detail": "Traceback ...\nKeyError: 'Sheet2'\n"}),
        ));
        assert_eq!(metric.blame, Blame::TaskFile);
        assert!(
            metric
                .message
                .ends_with("(Traceback ...\nKeyError: 'Sheet2')"),
            "{}",
            metric.message
        );
        let missing = refusal(&answer(
            json!({"error": "the metric compare_images needs skimage, which is not installed", "kind": "missing"}),
        ));
        assert_eq!(missing.blame, Blame::Environment);
        assert_eq!(
            refusal(&answer(json!({"ok2": 1}))).message,
            "OSWorld's evaluator bridge gave no answer"
        );
    }
}
