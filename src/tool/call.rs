//! A tool call and its result: what an agent asks an executor to do and what comes
//! back (UFO's AIP `ToolCall` and `Result`, ufo.md §7, with the same JSON keys).

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{Blame, Failure};

/// What kind of tool a command calls, as UFO distinguishes them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum ToolType {
    /// Changes the world (runs a command, writes a file).
    Action,
    /// Only observes (UFO's screenshots and UI trees).
    DataCollection,
}

/// One tool call sent to an executor.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct ToolCall {
    /// The tool to call, e.g. `execute_command`.
    pub(crate) tool_name: String,
    /// Named arguments for the tool.
    pub(crate) parameters: Map<String, Value>,
    /// Action or data collection.
    pub(crate) tool_type: ToolType,
    /// Correlates the command with its result in logs.
    pub(crate) call_id: String,
}

impl ToolCall {
    /// A new action command with a fresh call id.
    pub(crate) fn action(tool_name: impl Into<String>, parameters: Map<String, Value>) -> Self {
        Self {
            tool_name: tool_name.into(),
            parameters,
            tool_type: ToolType::Action,
            call_id: new_call_id(),
        }
    }

    /// `tool(key='value', ...)`, UFO's `action_string`.
    pub(crate) fn action_string(&self) -> String {
        action_string(&self.tool_name, &self.parameters)
    }
}

/// The most bytes a call's arguments may have as JSON: a call with more is refused
/// before it runs (`ToolSpec::check_arguments`), and recorded shortened.
pub(crate) const ARGUMENTS_LIMIT: usize = 1024 * 1024;

/// How much of each string a call over [`ARGUMENTS_LIMIT`] keeps in the records.
const RECORDED_STRING: usize = 1000;
/// How many items of each list the same keeps.
const RECORDED_ITEMS: usize = 100;

/// The size of `arguments` as JSON, in bytes, counted without making the text.
pub(crate) fn arguments_size(arguments: &Map<String, Value>) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    match serde_json::to_writer(&mut count, arguments) {
        Ok(()) => count.0,
        Err(_) => usize::MAX,
    }
}

/// `arguments` as the records keep them (the trajectory, `response.log`, `plan.json`,
/// the pages): whole when a call may have them, else with every long string cut to
/// its first characters and its size, so that a refused 10 MB argument is not written
/// six times over.
pub(crate) fn recorded_arguments(arguments: Map<String, Value>) -> Map<String, Value> {
    fn cut(value: Value) -> Value {
        match value {
            Value::String(s) if s.len() > RECORDED_STRING => Value::String(format!(
                "{}… ({} bytes in all, not recorded)",
                crate::text::shorten(&s, RECORDED_STRING),
                s.len()
            )),
            Value::Array(items) if items.len() > RECORDED_ITEMS => {
                let all = items.len();
                let mut kept: Vec<Value> =
                    items.into_iter().take(RECORDED_ITEMS).map(cut).collect();
                kept.push(Value::String(format!(
                    "… ({all} items in all, not recorded)"
                )));
                Value::Array(kept)
            }
            Value::Array(items) => Value::Array(items.into_iter().map(cut).collect()),
            Value::Object(map) => {
                Value::Object(map.into_iter().map(|(k, v)| (k, cut(v))).collect())
            }
            other => other,
        }
    }
    if arguments_size(&arguments) <= ARGUMENTS_LIMIT {
        return arguments;
    }
    arguments.into_iter().map(|(k, v)| (k, cut(v))).collect()
}

/// The parameters of a computer-use call that are for the record (the model's own
/// point, the window, the element a recording hit, its screenshot), left out of its
/// action string.
const RECORD_ONLY: [&str; 4] = ["model", "window", "element", "recorded_screenshot"];

/// `tool(key='value', ...)` with long values shortened, for logs and trajectories.
pub(crate) fn action_string(tool: &str, parameters: &Map<String, Value>) -> String {
    let computer = super::desktop_names::COMPUTER_TOOLS.contains(&tool);
    let args: Vec<String> = parameters
        .iter()
        .filter(|(k, _)| !(computer && RECORD_ONLY.contains(&k.as_str())))
        .map(|(k, v)| {
            let shown = match v {
                Value::String(s) => format!("{:?}", crate::text::shorten(s, 200)),
                other => crate::text::shorten(&other.to_string(), 200),
            };
            format!("{k}={shown}")
        })
        .collect();
    format!("{tool}({})", args.join(", "))
}

/// A process-unique call id: short, sortable, no randomness needed.
fn new_call_id() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(1);
    format!("call-{}", NEXT.fetch_add(1, Ordering::Relaxed))
}

/// How a command ended (UFO's `ResultStatus`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum ResultStatus {
    /// The tool did what was asked (for shell commands: exit code 0).
    Success,
    /// The tool ran and failed, or could not run.
    Failure,
    /// Not run because an earlier command of the same step failed.
    Skipped,
    /// No action was taken.
    None,
}

impl fmt::Display for ResultStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Success => "success",
            Self::Failure => "failure",
            Self::Skipped => "skipped",
            Self::None => "none",
        })
    }
}

/// The result of one command (UFO's `Result`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct ToolResult {
    /// Success, failure or skipped.
    pub(crate) status: ResultStatus,
    /// Why it failed, in words, when it did.
    pub(crate) error: Option<String>,
    /// The tool's output (for shell commands: exit code, stdout, stderr).
    pub(crate) result: Value,
    /// The executor that ran it (`shell`, an MCP server name, ...).
    pub(crate) namespace: Option<String>,
    /// The id of the command this answers.
    pub(crate) call_id: String,
    /// Whose failure it was, when it failed (the agent's, the task file's, the
    /// machine's, ...): what decides the task's status. Not sent to the model or
    /// written with the result; the model sees `error`.
    #[serde(skip)]
    pub(crate) blame: Option<Blame>,
    /// A picture the tool took for the agent (a computer-use `screenshot` or `zoom`),
    /// as PNG: what the agent shows its model. Not written with the result (the file
    /// the tool saved is).
    #[serde(skip)]
    pub(crate) picture: Option<std::sync::Arc<Vec<u8>>>,
}

impl ToolResult {
    /// A successful result.
    pub(crate) fn success(command: &ToolCall, namespace: &str, result: Value) -> Self {
        Self {
            status: ResultStatus::Success,
            error: None,
            result,
            namespace: Some(namespace.to_string()),
            call_id: command.call_id.clone(),
            blame: None,
            picture: None,
        }
    }

    /// A failed result with its reason and whose failure it was; `result` may still
    /// carry partial output.
    pub(crate) fn failure(
        command: &ToolCall,
        namespace: &str,
        failure: Failure,
        result: Value,
    ) -> Self {
        Self {
            status: ResultStatus::Failure,
            error: Some(failure.message),
            result,
            namespace: Some(namespace.to_string()),
            call_id: command.call_id.clone(),
            blame: Some(failure.blame),
            picture: None,
        }
    }

    /// A failure that is not the agent's (the task file's, the machine's, the
    /// configuration's, the runner's): one that ends the session as an `error`.
    pub(crate) fn not_the_agents(&self) -> Option<Failure> {
        let blame = self.blame.filter(|b| *b != Blame::Agent)?;
        Some(Failure::new(blame, self.error.clone().unwrap_or_default()))
    }

    /// The result of a command skipped after an earlier failure in the same step.
    pub(crate) fn skipped(command: &ToolCall) -> Self {
        Self {
            status: ResultStatus::Skipped,
            error: Some("Skipped due to previous failure (early_exit=True).".to_string()),
            result: Value::Null,
            namespace: None,
            call_id: command.call_id.clone(),
            blame: None,
            picture: None,
        }
    }

    /// The same within the bounds of a result from outside (`tool::kept`): what a
    /// device or a server answers is cut as a local command's output is.
    pub(crate) fn kept(mut self) -> Self {
        if let Some(error) = self.error.take() {
            self.error = Some(super::kept::kept_text(error));
        }
        let (result, omitted) = super::kept::kept(std::mem::take(&mut self.result));
        self.result = result;
        if omitted > 0
            && let Value::Object(map) = &mut self.result
        {
            map.insert("omitted".into(), Value::from(omitted));
        }
        self
    }

    /// The result with every registered secret masked (a tool that echoed an injected
    /// key): what agents, expectations and files see.
    pub(crate) fn scrubbed(mut self) -> Self {
        if let Some(e) = &self.error {
            self.error = Some(crate::secrets::scrub(e).into_owned());
        }
        let text = self.result.to_string();
        if let std::borrow::Cow::Owned(clean) = crate::secrets::scrub(&text) {
            self.result = serde_json::from_str(&clean).unwrap_or(Value::String(clean));
        }
        self
    }

    /// The shell exit code carried in `result`, if any.
    pub(crate) fn exit_code(&self) -> Option<i64> {
        self.result.get("exit_code").and_then(Value::as_i64)
    }

    /// A `list_dir` result's entries: name (folders end in `/`) and size.
    pub(crate) fn entries(&self) -> Option<Vec<(String, u64)>> {
        let entries = self.result.get("entries")?.as_array()?;
        Some(
            entries
                .iter()
                .map(|e| {
                    let name = e["name"].as_str().unwrap_or("?");
                    let shown = if e["type"] == "dir" {
                        format!("{name}/")
                    } else {
                        name.to_string()
                    };
                    (shown, e["size"].as_u64().unwrap_or(0))
                })
                .collect(),
        )
    }

    /// The stdout carried in `result`, if any.
    pub(crate) fn stdout(&self) -> Option<&str> {
        self.result.get("stdout").and_then(Value::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn args(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn action_string_is_readable() {
        let c = ToolCall::action(
            "write_file",
            args(json!({"path": "a.txt", "content": "hi"})),
        );
        assert_eq!(
            c.action_string(),
            r#"write_file(path="a.txt", content="hi")"#
        );
    }
}
