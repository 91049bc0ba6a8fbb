//! What the runner keeps of a result that comes from outside (a remote device's answer,
//! an MCP server's): the same bound as a local command's output, applied as soon as the
//! answer is read and before it is held, logged or shown to a model. Each text keeps its
//! first 64 KiB and says how much was left out; a whole result keeps at most 256 KiB of
//! text and numbers, its later items dropped and counted; nesting deeper than a result
//! has is cut.

use serde_json::{Map, Value};

/// Bytes of one text kept (a local command's output keeps as many of each stream).
pub(crate) const TEXT_KEPT: usize = 64 * 1024;
/// Bytes of a whole result kept.
pub(crate) const RESULT_KEPT: usize = 4 * TEXT_KEPT;
/// Bytes of a key kept.
const KEY_KEPT: usize = 256;
/// Levels of nesting kept.
const DEPTH_KEPT: usize = 32;

/// `value` within the bounds, and how many bytes (or items) of it were left out.
pub(crate) fn kept(value: Value) -> (Value, usize) {
    let mut budget = RESULT_KEPT;
    let mut omitted = 0;
    let value = cut(value, &mut budget, &mut omitted, 0);
    (value, omitted)
}

/// An error message from outside within the bounds of one text.
pub(crate) fn kept_text(mut text: String) -> String {
    if text.len() > TEXT_KEPT {
        let left_out = text.len() - floor(&text, TEXT_KEPT);
        text.truncate(floor(&text, TEXT_KEPT));
        text.push_str(&format!("… ({left_out} bytes left out)"));
    }
    text
}

/// The largest char boundary of `s` at or below `at`.
fn floor(s: &str, at: usize) -> usize {
    let mut end = at.min(s.len());
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    end
}

fn cut(value: Value, budget: &mut usize, omitted: &mut usize, depth: usize) -> Value {
    match value {
        Value::String(mut s) => {
            let keep = floor(&s, TEXT_KEPT.min(*budget));
            if keep < s.len() {
                let left_out = s.len() - keep;
                *omitted += left_out;
                s.truncate(keep);
                s.push_str(&format!("… ({left_out} bytes left out)"));
            }
            // Each value costs at least its quotes: a million empty texts are not free.
            *budget = budget.saturating_sub(keep.max(2));
            Value::String(s)
        }
        Value::Array(items) if depth >= DEPTH_KEPT => {
            *omitted += items.len();
            Value::String(format!(
                "… ({} items nested too deep, left out)",
                items.len()
            ))
        }
        Value::Object(map) if depth >= DEPTH_KEPT => {
            *omitted += map.len();
            Value::String(format!("… ({} keys nested too deep, left out)", map.len()))
        }
        Value::Array(items) => {
            let mut out = Vec::new();
            let all = items.len();
            for item in items {
                if *budget == 0 {
                    break;
                }
                out.push(cut(item, budget, omitted, depth + 1));
            }
            if out.len() < all {
                *omitted += all - out.len();
                out.push(Value::String(format!(
                    "… ({} more items left out)",
                    all - out.len()
                )));
            }
            Value::Array(out)
        }
        Value::Object(map) => {
            let mut out = Map::new();
            let all = map.len();
            for (mut k, v) in map {
                if *budget == 0 {
                    break;
                }
                if k.len() > KEY_KEPT {
                    *omitted += k.len() - floor(&k, KEY_KEPT);
                    k.truncate(floor(&k, KEY_KEPT));
                    k.push('…');
                }
                *budget = budget.saturating_sub(k.len() + 2);
                out.insert(k, cut(v, budget, omitted, depth + 1));
            }
            if out.len() < all {
                *omitted += all - out.len();
            }
            Value::Object(out)
        }
        other => {
            *budget = budget.saturating_sub(8);
            other
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn long_texts_many_items_and_deep_nesting_are_cut_and_counted() {
        let (v, omitted) = kept(json!({"stdout": "x".repeat(90 << 20), "exit_code": 0}));
        let stdout = v["stdout"].as_str().unwrap();
        assert!(stdout.len() < TEXT_KEPT + 64, "{}", stdout.len());
        assert!(stdout.ends_with(&format!("… ({} bytes left out)", (90 << 20) - TEXT_KEPT)));
        assert_eq!(v["exit_code"], 0);
        assert_eq!(omitted, (90 << 20) - TEXT_KEPT);
        // A million small items: the whole result stays within its bound.
        let (v, omitted) = kept(json!({"lines": vec!["a line"; 1_000_000]}));
        assert!(
            v.to_string().len() < 2 * RESULT_KEPT,
            "{}",
            v.to_string().len()
        );
        assert!(omitted > 900_000);
        // Nested far deeper than any result: cut where results stop.
        let mut deep = json!(1);
        for _ in 0..10_000 {
            deep = json!([deep]);
        }
        let (v, omitted) = kept(deep);
        assert!(v.to_string().contains("nested too deep"));
        assert_eq!(omitted, 1);
        // Empty texts and long keys cost their share too.
        let (v, _) = kept(json!({"lines": vec![""; 1_000_000], "k".repeat(1 << 20): 1}));
        assert!(
            v.to_string().len() < 2 * RESULT_KEPT,
            "{}",
            v.to_string().len()
        );
        // What is small is kept as it is.
        let small = json!({"stdout": "hi\n", "exit_code": 0, "items": [1, 2, 3]});
        assert_eq!(kept(small.clone()), (small, 0));
        let text = kept_text("é".repeat(TEXT_KEPT));
        assert!(text.ends_with("bytes left out)"), "{text}");
    }
}
