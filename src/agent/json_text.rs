//! Finding the JSON object in a model's reply: bare, inside a code fence, or surrounded
//! by prose. Models are told to answer with JSON only; many add a little more.

use serde_json::Value;

/// The first JSON object in `text`, or why there is none.
// The error is the data: the correction the model is sent, word for word.
pub(crate) fn extract_object(text: &str) -> Result<Value, String> {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Err("the reply is empty".to_string());
    }
    let mut first_error = None;
    for candidate in fenced_blocks(trimmed)
        .into_iter()
        .chain(std::iter::once(trimmed))
    {
        for start in candidate.match_indices('{').map(|(i, _)| i) {
            let Some(end) = matching_brace(&candidate[start..]) else {
                continue;
            };
            let text = &candidate[start..start + end];
            let parsed = serde_json::from_str::<Value>(text).or_else(|e| {
                serde_json::from_str::<Value>(&escape_raw_controls(text)).map_err(|_| e)
            });
            match parsed {
                Ok(v @ Value::Object(_)) => return Ok(v),
                Ok(_) => {}
                Err(e) => {
                    first_error
                        .get_or_insert_with(|| format!("the JSON in the reply is invalid: {e}"));
                }
            }
        }
    }
    Err(first_error.unwrap_or_else(|| {
        format!(
            "the reply has no JSON object: {:?}",
            crate::text::shorten(trimmed, 120)
        )
    }))
}

/// `text` with raw control characters inside string literals escaped (models often put
/// a real newline or tab inside a JSON string, which strict JSON forbids).
fn escape_raw_controls(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    let mut in_string = false;
    let mut escaped = false;
    for c in text.chars() {
        if in_string && !escaped && c.is_control() {
            match c {
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '\t' => out.push_str("\\t"),
                other => out.push_str(&format!("\\u{:04x}", other as u32)),
            }
            continue;
        }
        match (in_string, escaped, c) {
            (true, true, _) => escaped = false,
            (true, false, '\\') => escaped = true,
            (_, false, '"') => in_string = !in_string,
            _ => {}
        }
        out.push(c);
    }
    out
}

/// The contents of ``` fenced blocks, in order.
fn fenced_blocks(text: &str) -> Vec<&str> {
    let mut blocks = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find("```") {
        let after = &rest[open + 3..];
        let body_start = after.find('\n').map(|i| i + 1).unwrap_or(0);
        let Some(close) = after[body_start..].find("```") else {
            break;
        };
        blocks.push(&after[body_start..body_start + close]);
        rest = &after[body_start + close + 3..];
    }
    blocks
}

/// The length of the balanced `{...}` at the start of `text`, skipping braces inside
/// strings.
fn matching_brace(text: &str) -> Option<usize> {
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for (i, c) in text.char_indices() {
        if in_string {
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => in_string = true,
            '{' => depth += 1,
            '}' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn bare_fenced_and_wrapped() {
        assert_eq!(extract_object(r#"{"a": 1}"#).unwrap(), json!({"a": 1}));
        assert_eq!(
            extract_object("```json\n{\"a\": 2}\n```").unwrap(),
            json!({"a": 2})
        );
        assert_eq!(
            extract_object("Sure! Here it is:\n{\"a\": {\"b\": \"}\"}}\nHope it helps.").unwrap(),
            json!({"a": {"b": "}"}})
        );
        assert_eq!(
            extract_object("text ```\n{\"a\": 3}\n``` more").unwrap(),
            json!({"a": 3})
        );
    }

    #[test]
    fn raw_newlines_and_tabs_in_strings_are_tolerated() {
        let reply = "{\"thought\": \"line one\nline\ttwo\", \"n\": 1}";
        assert_eq!(
            extract_object(reply).unwrap(),
            json!({"thought": "line one\nline\ttwo", "n": 1})
        );
        // Newlines between tokens are ordinary JSON whitespace and stay as they are.
        assert_eq!(extract_object("{\n\"a\":\n 1\n}").unwrap(), json!({"a": 1}));
    }

    #[test]
    fn explains_failures() {
        assert_eq!(extract_object("  ").unwrap_err(), "the reply is empty");
        assert!(
            extract_object("I cannot do that.")
                .unwrap_err()
                .starts_with("the reply has no JSON object")
        );
        let e = extract_object("{\"a\": 1,}").unwrap_err();
        assert!(
            e.starts_with("the JSON in the reply is invalid: trailing comma"),
            "{e}"
        );
    }
}
