//! The AppAgent's side of the conversation (UFO's `app_agent.yaml`, ufo.md §6): its
//! system prompt (its tools, how to name a control, the reply format with
//! `save_screenshot`, the statuses including CONFIRM), the brief of a subtask, and the
//! JSON schema of its reply. Its replies are UFO's agent replies (`agent::reply`),
//! legacy `ControlLabel` / `ControlText` included.

use std::fmt::Write;

use serde_json::{Value, json};

use crate::agent::prompt::{json_type, reply_schema as action_schema};
use crate::tool::ToolSpec;

/// The AppAgent's system prompt for `tools`.
pub(super) fn system_prompt(tools: &[ToolSpec], vision: bool) -> String {
    let sees = if vision {
        "Each step you get the window's controls, each with an id, and two screenshots of the screen: one with \
         every listed control boxed and its id in the box's corner, and a clean one."
    } else {
        "Each step you get the window's controls as a list, each with an id, name and control type (no screenshots)."
    };
    let mut p = format!(
        "You are AppAgent. You carry out one subtask in one application window of a desktop, with one action \
         per reply, until the subtask is done. {sees}\n\n## Functions\n"
    );
    for tool in tools {
        let _ = writeln!(p, "- `{}`: {}", tool.name, tool.description);
        for param in &tool.params {
            let need = if param.required {
                "required"
            } else {
                "optional"
            };
            let _ = writeln!(
                p,
                "    - `{}` ({}, {need}): {}",
                param.name,
                json_type(&param.kind),
                param.description
            );
        }
    }
    // A device's UFO tools name a control by `id` and `name` only (ui_mcp_server.py),
    // and take no other argument.
    let typed = tools
        .iter()
        .any(|t| t.params.iter().any(|p| p.name == "control_type"));
    let (naming, example) = if typed {
        (
            "Give the control's `id` from the current list together with its `name` and `control_type` exactly \
             as listed: the id is only good for this step's list, the name and type find the control whatever \
             its id.",
            "{\"id\": \"12\", \"name\": \"...\", \"control_type\": \"...\"}",
        )
    } else {
        (
            "Give the control's `id` from the current list together with its `name` exactly as listed.",
            "{\"id\": \"12\", \"name\": \"...\"}",
        )
    };
    let _ = write!(p, "\n## Naming a control\n{naming}\n\n");
    p.push_str(&format!(
        "## Reply format\nReply with exactly one JSON object and nothing else:\n\
         {{\n  \"observation\": \"what the window shows now, and the result of your last action\",\n  \
         \"thought\": \"why your next action moves the subtask forward\",\n  \
         \"action\": {{\"function\": \"a function name, or \\\"\\\" for no action\", \"arguments\": {example}, \"status\": \"CONTINUE | FINISH | FAIL | CONFIRM\"}},\n  \
         \"plan\": [\"the steps you expect after this one\"],\n  \
         \"comment\": \"a short note; with FINISH, what was done; with FAIL, why\",\n  \
         \"save_screenshot\": {{\"save\": false, \"reason\": \"\"}}\n}}\n\n\
         ## Status\n\
         - CONTINUE: more actions are needed after this one.\n\
         - FINISH: the subtask is done once this reply's action (if any) has run.\n\
         - FAIL: the subtask cannot be done; say why in comment.\n\
         - CONFIRM: this action is sensitive (it deletes, sends or pays for something) and needs the user's \
         consent first; unattended runs may deny it.\n\n\
         ## Rules\n\
         - Act only in the selected window and on listed controls. After each action you see the new screen.\n\
         - If an action failed, read the error and try something different.\n\
         - No human is watching: do not ask questions; decide yourself.\n"
    ));
    if tools
        .iter()
        .any(|t| crate::desktop::office::is_office_tool(&t.name))
    {
        // UFO's hybrid AppAgent: the app's API beside its UI.
        p.push_str(
            "- Some functions call the application's own API on the open document (insert_table, set_font,              save_as, ...) and name no control: where one does what the subtask needs, prefer it to clicking              through menus; it is faster and surer.\n",
        );
    }
    p
}

/// The JSON schema of an AppAgent reply, for constrained decoding: UFO's agent reply
/// with CONFIRM among the statuses and `save_screenshot`.
pub(super) fn reply_schema(tools: &[ToolSpec]) -> Value {
    let mut schema = action_schema(tools);
    let statuses = json!({"type": "string", "enum": ["CONTINUE", "FINISH", "FAIL", "CONFIRM"]});
    if let Some(alternatives) = schema["properties"]["action"]["anyOf"].as_array_mut() {
        for a in alternatives {
            a["properties"]["status"] = statuses.clone();
        }
    }
    schema["properties"]["save_screenshot"] = json!({
        "type": "object",
        "properties": {"save": {"type": "boolean"}, "reason": {"type": "string", "maxLength": 200}}
    });
    schema
}

/// The correction after an AppAgent reply that could not be used.
pub(super) fn correction_message(why: &str) -> String {
    format!(
        "Your last reply could not be used: {why}. Reply again with exactly one JSON object with the keys \
         observation, thought, action (function, arguments, status), plan, comment and save_screenshot."
    )
}

/// The first message of a subtask.
pub(super) struct SubtaskBrief<'a> {
    /// The task's request.
    pub(super) request: &'a str,
    /// The subtask.
    pub(super) subtask: &'a str,
    /// The HostAgent's tips, if any.
    pub(super) tips: &'a [String],
    /// For a step plan: the step's number and the step count, and the steps done.
    pub(super) step: Option<(usize, usize, &'a [String])>,
}

/// The subtask's brief: the first message of the AppAgent's conversation.
pub(super) fn brief(b: &SubtaskBrief<'_>) -> String {
    let mut m = String::new();
    let _ = writeln!(m, "<Overall request> {}", b.request.trim());
    if let Some((n, total, done)) = b.step {
        if !done.is_empty() {
            m.push_str("<Steps already done>\n");
            for (i, s) in done.iter().enumerate() {
                let _ = writeln!(m, "{}. {}", i + 1, s.trim());
            }
        }
        let _ = writeln!(
            m,
            "<Current subtask (step {n} of {total})> {}",
            b.subtask.trim()
        );
    } else {
        let _ = writeln!(
            m,
            "<Current subtask, from the HostAgent> {}",
            b.subtask.trim()
        );
    }
    if !b.tips.is_empty() {
        m.push_str("<Tips from the HostAgent>\n");
        for t in b.tips {
            let _ = writeln!(m, "- {}", t.trim());
        }
    }
    m.push_str("Do only this subtask; set status FINISH as soon as it is done.");
    m
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::desktop::tools::app_agent_tools;

    #[test]
    fn the_prompt_lists_the_app_tools_and_confirm() {
        let p = system_prompt(app_agent_tools(), true);
        for needle in [
            "`click_input`",
            "`set_edit_text`",
            "`keyboard_input`",
            "CONFIRM",
            "save_screenshot",
            "boxed",
        ] {
            assert!(p.contains(needle), "{needle}");
        }
        assert!(!system_prompt(app_agent_tools(), false).contains("boxed"));
        let schema = reply_schema(app_agent_tools());
        assert_eq!(
            schema["properties"]["action"]["anyOf"][0]["properties"]["status"]["enum"][3],
            "CONFIRM"
        );
    }

    #[test]
    fn a_follower_step_says_where_it_is() {
        let done = vec!["type the title".to_string()];
        let m = brief(&SubtaskBrief {
            request: "make a doc",
            subtask: "make it bold",
            tips: &[],
            step: Some((2, 3, &done)),
        });
        assert!(
            m.contains("<Current subtask (step 2 of 3)> make it bold"),
            "{m}"
        );
        assert!(m.contains("1. type the title"), "{m}");
    }
}
