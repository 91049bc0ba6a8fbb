//! Recorded actions: one tool call of a recorded plan (UFO's `{agent, action,
//! parameters}`), with the result it is expected to have when replayed.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::text::shorten;
use crate::tool::{ResultStatus, ToolResult};

/// One action of a recorded plan or of a task's `setup`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Action {
    /// The agent that took the action (informational: `LinuxAgent`, `AppAgent`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) agent: Option<String>,
    /// The tool to call.
    pub(crate) action: String,
    /// The tool's arguments.
    #[serde(default)]
    pub(crate) parameters: Map<String, Value>,
    /// What the result must look like; without it the command must succeed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) expect: Option<Expect>,
    /// Why the action was taken (the recording agent's thought), shown in trajectories.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) comment: Option<String>,
}

impl Action {
    /// How `result` differs from what this action expects (success when it sets no
    /// `expect`); empty when it matches.
    pub(crate) fn differences(&self, result: &ToolResult) -> Vec<String> {
        match &self.expect {
            Some(expect) => expect.differences(result),
            None => Expect::default().differences(result),
        }
    }
}

/// The recorded result of an action, checked when the action is replayed.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Expect {
    /// The result status (`success` or `failure`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) status: Option<ResultStatus>,
    /// The exit code of a shell command.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) exit_code: Option<i64>,
    /// The exact standard output (compared without trailing whitespace).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) stdout: Option<String>,
    /// The control a desktop action acted on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) control: Option<ExpectControl>,
    /// The text a desktop action read (`texts`; compared without trailing whitespace).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) text: Option<String>,
}

/// The control a desktop action is expected to resolve to.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ExpectControl {
    /// Its name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) name: Option<String>,
    /// Its control type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) control_type: Option<String>,
}

impl ExpectControl {
    /// The control a desktop result says its action resolved to.
    pub(crate) fn of(result: &ToolResult) -> Option<Self> {
        let c = result.result.get("control")?.as_object()?;
        let text = |k: &str| {
            c.get(k)
                .and_then(serde_json::Value::as_str)
                .map(str::to_string)
        };
        Some(Self {
            name: text("name"),
            control_type: text("control_type"),
        })
    }
}

impl Expect {
    /// Every way `result` differs from this expectation, in words; empty when it
    /// matches. Without an explicit status or exit code, success is expected.
    pub(crate) fn differences(&self, result: &ToolResult) -> Vec<String> {
        let mut diffs = Vec::new();
        let wanted_status = self.status.unwrap_or(match self.exit_code {
            Some(0) | None => ResultStatus::Success,
            Some(_) => ResultStatus::Failure,
        });
        // A status the plan derives from its exit code is said by the exit code's own
        // difference below, not twice.
        let said_by_exit_code = self.status.is_none()
            && self
                .exit_code
                .is_some_and(|c| result.exit_code() != Some(c));
        if result.status != wanted_status && !said_by_exit_code {
            let why = result
                .error
                .as_deref()
                .map(|e| format!(" ({})", shorten(e, 200)))
                .unwrap_or_default();
            diffs.push(format!(
                "status {}{why}, expected {wanted_status}",
                result.status
            ));
        }
        if let Some(code) = self.exit_code {
            match result.exit_code() {
                Some(got) if got == code => {}
                Some(got) => diffs.push(format!("exit code {got}, expected {code}")),
                None => diffs.push(format!("no exit code, expected {code}")),
            }
        }
        if let Some(want) = &self.stdout {
            let got = result.stdout().unwrap_or("");
            if got.trim_end() != want.trim_end() {
                diffs.push(describe_text_difference("stdout", got, want));
            }
        }
        if let Some(want) = &self.control {
            let got = ExpectControl::of(result).unwrap_or_default();
            let same = |w: &Option<String>, g: &Option<String>| {
                w.as_ref()
                    .is_none_or(|w| Some(w.trim()) == g.as_deref().map(str::trim))
            };
            if !same(&want.name, &got.name) || !same(&want.control_type, &got.control_type) {
                let show = |c: &ExpectControl| {
                    format!(
                        "{} {:?}",
                        c.control_type.as_deref().unwrap_or("?"),
                        c.name.as_deref().unwrap_or("")
                    )
                };
                let got = if result.result.get("control").is_some_and(|c| !c.is_null()) {
                    show(&got)
                } else {
                    "no control".to_string()
                };
                diffs.push(format!("acted on {got}, expected {}", show(want)));
            }
        }
        if let Some(want) = &self.text {
            let got = result
                .result
                .get("text")
                .and_then(serde_json::Value::as_str)
                .unwrap_or("");
            if got.trim_end() != want.trim_end() {
                diffs.push(describe_text_difference("the text read", got, want));
            }
        }
        diffs
    }
}

/// "stdout line 2 is `x`, expected `y`" for two texts that differ.
pub(crate) fn describe_text_difference(what: &str, got: &str, want: &str) -> String {
    let got_lines: Vec<&str> = got.trim_end().lines().collect();
    let want_lines: Vec<&str> = want.trim_end().lines().collect();
    for (i, (g, w)) in got_lines.iter().zip(&want_lines).enumerate() {
        if g != w {
            return format!(
                "{what} line {} is {:?}, expected {:?}",
                i + 1,
                shorten(g, 120),
                shorten(w, 120)
            );
        }
    }
    format!(
        "{what} has {} lines, expected {}",
        got_lines.len(),
        want_lines.len()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn result(status: ResultStatus, exit: i64, stdout: &str) -> ToolResult {
        ToolResult {
            status,
            error: None,
            result: json!({"exit_code": exit, "stdout": stdout}),
            namespace: None,
            call_id: "c".into(),
            blame: None,
            picture: None,
        }
    }

    #[test]
    fn desktop_results_compare_control_and_text() {
        let got = ToolResult {
            status: ResultStatus::Success,
            error: None,
            result: json!({"control": {"id": "4", "name": "Save", "control_type": "Button"}, "text": "a\nb"}),
            namespace: None,
            call_id: "c".into(),
            blame: None,
            picture: None,
        };
        let e = Expect {
            control: Some(ExpectControl {
                name: Some("Save".into()),
                control_type: Some("Button".into()),
            }),
            text: Some("a\nb\n".into()),
            ..Default::default()
        };
        assert!(e.differences(&got).is_empty());
        let e = Expect {
            control: Some(ExpectControl {
                name: Some("Save As".into()),
                control_type: None,
            }),
            text: Some("a\nc".into()),
            ..Default::default()
        };
        assert_eq!(
            e.differences(&got),
            vec![
                r#"acted on Button "Save", expected ? "Save As""#,
                r#"the text read line 2 is "b", expected "c""#
            ]
        );
    }

    #[test]
    fn no_expectation_means_success() {
        let e = Expect::default();
        assert!(
            e.differences(&result(ResultStatus::Success, 0, ""))
                .is_empty()
        );
        let d = e.differences(&result(ResultStatus::Failure, 1, ""));
        assert_eq!(d, vec!["status failure, expected success"]);
    }

    #[test]
    fn nonzero_exit_code_implies_failure_expected() {
        let e = Expect {
            exit_code: Some(1),
            ..Default::default()
        };
        assert!(
            e.differences(&result(ResultStatus::Failure, 1, ""))
                .is_empty()
        );
        let d = e.differences(&result(ResultStatus::Failure, 2, ""));
        assert_eq!(d, vec!["exit code 2, expected 1"]);
    }

    #[test]
    fn stdout_compared_without_trailing_whitespace() {
        let e = Expect {
            stdout: Some("a\nb\n".into()),
            ..Default::default()
        };
        assert!(
            e.differences(&result(ResultStatus::Success, 0, "a\nb"))
                .is_empty()
        );
        let d = e.differences(&result(ResultStatus::Success, 0, "a\nc\n"));
        assert_eq!(d, vec![r#"stdout line 2 is "c", expected "b""#]);
        let d = e.differences(&result(ResultStatus::Success, 0, "a\n"));
        assert_eq!(d, vec!["stdout has 1 lines, expected 2"]);
    }
}
