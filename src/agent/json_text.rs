//! Finding the JSON object in a model's reply: bare, inside a code fence, or surrounded
//! by prose. Models are told to answer with JSON only; many add a little more.

use serde_json::Value;

/// The first JSON object in `text`, or why there is none.
pub fn extract_object(text: &str) -> Result<Value, String> {
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
            match serde_json::from_str::<Value>(&candidate[start..start + end]) {
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
