//! An MCP tool's answer as UFO's Result: its text content becomes the result's `text`
//! (what a recorded plan's `expect.text` compares), structured content its
//! `structured`, and `isError` (absent means false) a failure whose message is that
//! text; so is a result that says so in UFO's shape (`{"success": false, "error"}`,
//! `tool::ufo_shape`), which UFO's own servers send without `isError`. Images and binary resources are described, not carried; a text or structured
//! content over 64 KiB is cut, and what was left out counted.

use rmcp::model::CallToolResult;
use serde_json::{Value, json};

use crate::tool::{ToolCall, ToolResult};

/// Characters of a failed call's text used as its error message.
const ERROR_TEXT: usize = 600;
/// Bytes of a result's text, and of its structured content, kept (as for a command's
/// output); what is left out is counted.
const KEPT: usize = 64 * 1024;

/// The Result of `call` that `server` answered with `answer`.
pub(crate) fn tool_result(call: &ToolCall, server: &str, answer: &CallToolResult) -> ToolResult {
    let mut text = content_text(answer);
    let mut result = json!({});
    if text.len() > KEPT {
        let mut end = KEPT;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        result["text_omitted_bytes"] = (text.len() - end).into();
        text.truncate(end);
    }
    result["text"] = text.clone().into();
    if let Some(structured) = &answer.structured_content {
        let size = structured.to_string().len();
        if size <= KEPT {
            result["structured"] = structured.clone();
        } else {
            result["structured_omitted_bytes"] = size.into();
        }
    }
    if answer.is_error == Some(true) {
        let error = if text.trim().is_empty() {
            format!(
                "the MCP tool `{}` failed and said nothing more",
                call.tool_name
            )
        } else {
            crate::text::shorten(text.trim(), ERROR_TEXT)
        };
        // The tool ran and said it failed: what the agent asked did not work.
        ToolResult::failure(call, server, crate::tool::Failure::agent(error), result)
    } else {
        // UFO's servers say a failure in the result, not with `isError`.
        let mut out = ToolResult::success(call, server, result);
        crate::tool::settle_ufo_shape(&mut out);
        out
    }
}

/// The answer's content as text: text blocks as they are, other blocks described.
fn content_text(answer: &CallToolResult) -> String {
    let blocks: Vec<String> = answer
        .content
        .iter()
        .filter_map(|b| serde_json::to_value(b).ok())
        .map(|b| block_text(&b))
        .collect();
    blocks.join("\n")
}

fn block_text(block: &Value) -> String {
    let field = |v: &Value, k: &str| {
        v.get(k)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    match block.get("type").and_then(Value::as_str) {
        Some("text") => field(block, "text"),
        Some(kind @ ("image" | "audio")) => format!(
            "[{kind} {}, {} bytes base64]",
            field(block, "mimeType"),
            field(block, "data").len()
        ),
        Some("resource") => {
            let r = block.get("resource").cloned().unwrap_or_default();
            match r.get("text").and_then(Value::as_str) {
                Some(text) => text.to_string(),
                None => format!("[resource {}]", field(&r, "uri")),
            }
        }
        Some("resource_link") => format!("[resource link {}]", field(block, "uri")),
        _ => block.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tool::ResultStatus;

    fn answer(v: Value) -> CallToolResult {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn text_structured_content_and_errors_map_onto_results() {
        let call = ToolCall::action("fs.read_text_file", Default::default());
        let ok = tool_result(
            &call,
            "fs",
            &answer(
                json!({"content": [{"type": "text", "text": "hello"}, {"type": "image", "data": "AAAA", "mimeType": "image/png"}],
                           "structuredContent": {"n": 1}}),
            ),
        );
        assert_eq!(ok.status, ResultStatus::Success);
        assert_eq!(
            ok.result["text"],
            "hello\n[image image/png, 4 bytes base64]"
        );
        assert_eq!(ok.result["structured"], json!({"n": 1}));
        let bad = tool_result(
            &call,
            "fs",
            &answer(
                json!({"content": [{"type": "text", "text": "Access denied"}], "isError": true}),
            ),
        );
        assert_eq!(bad.status, ResultStatus::Failure);
        assert_eq!(bad.error.as_deref(), Some("Access denied"));
        // The tool ran and said it failed: the agent's, the step fails.
        assert_eq!(bad.blame, Some(crate::tool::Blame::Agent));
        let silent = tool_result(
            &call,
            "fs",
            &answer(json!({"content": [], "isError": true})),
        );
        assert_eq!(
            (silent.error.as_deref(), silent.blame),
            (
                Some("the MCP tool `fs.read_text_file` failed and said nothing more"),
                Some(crate::tool::Blame::Agent)
            )
        );
        let absent = tool_result(&call, "fs", &answer(json!({"content": []})));
        assert_eq!(
            absent.status,
            ResultStatus::Success,
            "no isError means false"
        );
        let big = "é".repeat(KEPT);
        let huge = tool_result(
            &call,
            "fs",
            &answer(
                json!({"content": [{"type": "text", "text": big}], "structuredContent": {"t": big}}),
            ),
        );
        assert_eq!(huge.result["text"].as_str().unwrap().len(), KEPT);
        assert_eq!(huge.result["text_omitted_bytes"], KEPT);
        assert!(huge.result.get("structured").is_none());
        assert!(huge.result["structured_omitted_bytes"].as_u64().unwrap() > KEPT as u64);
    }
}
