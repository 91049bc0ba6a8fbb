//! serde's messages about a task file's values said in the user's words: `expected u32`
//! is "a whole number (0 or more)", `invalid type: map, expected a sequence` is "must
//! be a list ([...]), not an object". A message serde words otherwise is kept as it is.

/// `message` (serde's, without its position) in the user's words.
pub(super) fn plain(message: &str) -> String {
    let typed = message
        .strip_prefix("invalid type: ")
        .or_else(|| message.strip_prefix("invalid value: "));
    if let Some((found, expected)) = typed.and_then(|r| r.split_once(", expected ")) {
        return format!(
            "must be {}, not {}",
            expected_words(expected),
            found_words(found)
        );
    }
    let variant = message.strip_prefix("unknown variant `");
    if let Some((word, expected)) = variant.and_then(|r| r.split_once("`, expected ")) {
        return format!("`{word}` is not one of {}", names(expected));
    }
    let field = message.strip_prefix("unknown field `");
    if let Some((word, expected)) = field.and_then(|r| r.split_once("`, expected ")) {
        return format!("unknown key `{word}` (the keys here: {})", names(expected));
    }
    if let Some(field) = message
        .strip_prefix("missing field `")
        .and_then(|r| r.strip_suffix('`'))
    {
        return format!("`{field}` is missing");
    }
    message.to_string()
}

/// What serde says was expected, as a user would say it.
fn expected_words(expected: &str) -> String {
    let said = match expected {
        "u8" | "u16" | "u32" | "u64" | "usize" => "a whole number (0 or more)",
        "i8" | "i16" | "i32" | "i64" | "isize" => "a whole number",
        "f32" | "f64" => "a number",
        "a boolean" => "true or false",
        "a sequence" => "a list ([...])",
        "a map" => "an object ({...})",
        "a string" | "a borrowed string" => "a string (\"...\")",
        e if e.starts_with("struct ") => "an object ({...})",
        "variant identifier" => "a name (\"...\")",
        e if e.starts_with("one of ") || e.starts_with('`') => {
            return format!("one of {}", names(e));
        }
        other => other,
    };
    said.to_string()
}

/// What serde says it found (`string "5"`, ``integer `5` ``, `map`), as a user would.
fn found_words(found: &str) -> String {
    let value = |prefix: &str| {
        found
            .strip_prefix(prefix)
            .map(|v| v.trim_matches('`').to_string())
    };
    if let Some(text) = found.strip_prefix("string ") {
        return format!("the string {text}");
    }
    if let Some(n) = value("integer ").or_else(|| value("floating point ")) {
        return format!("the number {n}");
    }
    if let Some(b) = value("boolean ") {
        return b;
    }
    match found {
        "map" => "an object".into(),
        "sequence" => "a list".into(),
        "null" | "unit value" => "null".into(),
        other => other.into(),
    }
}

/// "one of `a`, `b`" or "`a` or `b`" as "a, b".
fn names(expected: &str) -> String {
    let words: Vec<&str> = expected.split('`').skip(1).step_by(2).collect();
    if words.is_empty() {
        expected.to_string()
    } else {
        words.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::plain;

    #[test]
    fn serdes_words_become_the_users() {
        assert_eq!(
            plain("invalid type: string \"5\", expected u32"),
            "must be a whole number (0 or more), not the string \"5\""
        );
        assert_eq!(
            plain("invalid type: map, expected a sequence"),
            "must be a list ([...]), not an object"
        );
        assert_eq!(
            plain("invalid value: integer `-1`, expected u32"),
            "must be a whole number (0 or more), not the number -1"
        );
        assert_eq!(
            plain("invalid type: integer `5`, expected a string"),
            "must be a string (\"...\"), not the number 5"
        );
        assert_eq!(
            plain("unknown variant `file_exist`, expected one of `file_exists`, `file_equals`"),
            "`file_exist` is not one of file_exists, file_equals"
        );
        assert_eq!(plain("missing field `type`"), "`type` is missing");
        assert_eq!(
            plain("invalid type: boolean `true`, expected a string"),
            "must be a string (\"...\"), not true"
        );
        assert_eq!(
            plain("invalid type: sequence, expected variant identifier"),
            "must be a name (\"...\"), not a list"
        );
        // A message of our own is kept.
        assert_eq!(plain("a string or a number"), "a string or a number");
    }
}
