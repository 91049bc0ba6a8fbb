//! Tiny text helpers shared by logs, trajectories and error messages.

use std::borrow::Cow;
use std::fmt::Write as _;

use serde_json::Value;

/// `text` safe to show on a terminal or in a text file a person reads (`output.md`,
/// `report.md`, `summary.csv`): control characters (but line feeds, tabs, and a carriage
/// return before a line feed) and the characters that reorder text (bidirectional
/// overrides and isolates) are written as escapes, `\x1b` or `\u{202e}`. Nothing a task or
/// a model wrote can then move the cursor, clear the screen, retitle the terminal or make
/// a line read other than it is. JSON files keep the exact text.
pub(crate) fn printable(text: &str) -> Cow<'_, str> {
    let next = |i: usize, c: char| text.as_bytes().get(i + c.len_utf8()).copied();
    if !text.char_indices().any(|(i, c)| unprintable(c, next(i, c))) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for (i, c) in text.char_indices() {
        if !unprintable(c, next(i, c)) {
            out.push(c);
        } else if (c as u32) < 0x80 {
            let _ = write!(out, "\\x{:02x}", c as u32);
        } else {
            let _ = write!(out, "\\u{{{:04x}}}", c as u32);
        }
    }
    Cow::Owned(out)
}

/// Whether `c`, followed by the byte `next`, is written as an escape by [`printable`].
fn unprintable(c: char, next: Option<u8>) -> bool {
    match c {
        '\n' | '\t' => false,
        '\r' => next != Some(b'\n'),
        c if c.is_control() => true,
        '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' => true,
        '\u{200e}' | '\u{200f}' | '\u{061c}' | '\u{2028}' | '\u{2029}' => true,
        _ => false,
    }
}

/// `s` cut to at most `max` characters, with `…` marking the cut.
pub(crate) fn shorten(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut out: String = s.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// The first line of `s`, shortened, for one-line summaries.
pub(crate) fn first_line(s: &str, max: usize) -> String {
    let line = s.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    let more = s.trim().lines().count() > 1;
    let mut out = shorten(line.trim(), max);
    if more && !out.ends_with('…') {
        out.push_str(" …");
    }
    out
}

/// "a string", "an integer", ... for messages about JSON values.
pub(crate) fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(n) if n.is_f64() => "a number",
        Value::Number(n) if n.as_i64().is_some_and(|i| i < 0) => "a negative integer",
        Value::Number(_) => "an integer",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// `n thing` / `n things` (`n trajectories`, `n classes`).
pub(crate) fn plural(n: usize, thing: &str) -> String {
    let consonant_y = thing
        .strip_suffix('y')
        .filter(|stem| !stem.ends_with(['a', 'e', 'o', 'u']));
    if n == 1 {
        format!("1 {thing}")
    } else if let Some(stem) = consonant_y {
        format!("{n} {stem}ies")
    } else if thing.ends_with('s') {
        format!("{n} {thing}es")
    } else {
        format!("{n} {thing}s")
    }
}

/// A URL without `user:password@`.
pub(crate) fn without_userinfo(url: &str) -> String {
    match (url.find("://"), url.find('@')) {
        (Some(scheme), Some(at)) if at > scheme && !url[scheme + 3..at].contains('/') => {
            format!("{}***@{}", &url[..scheme + 3], &url[at + 1..])
        }
        _ => url.to_string(),
    }
}

/// An amount of US dollars with at least two decimals and as many more (up to six) as
/// it needs: `0.10`, `0.005`, `12.00`.
pub(crate) fn usd(amount: f64) -> String {
    let text = format!("{amount:.6}");
    let trimmed = text.trim_end_matches('0');
    let decimals = trimmed.split_once('.').map_or(0, |(_, d)| d.len());
    if decimals < 2 {
        format!("{amount:.2}")
    } else {
        trimmed.to_string()
    }
}

/// What a panic said (its message, when it is text).
pub(crate) fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_string())
}

/// The candidate `word` was most likely meant to be, when one is close enough to say
/// "did you mean ...?": as a misspelling is, similar (Jaro-Winkler 0.8 or more) and a
/// few edits away (at most a third of the word, and at least 2), so that `pattern` is
/// not taken for a misspelt `path`.
pub(crate) fn closest<'a>(
    word: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    candidates
        .into_iter()
        .map(|c| (strsim::jaro_winkler(word, c), c))
        .filter(|(score, c)| {
            *score >= 0.8
                && *c != word
                && strsim::damerau_levenshtein(word, c) <= (word.chars().count() / 3).max(2)
        })
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c)
}

/// `text` as one Markdown code span that shows it as written: fenced by one backtick
/// more than its longest run of them, and padded with a space where it begins or ends
/// with one (CommonMark strips one such space on each side).
pub(crate) fn code_span(text: &str) -> String {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    let pad = if text.starts_with('`') || text.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{text}{pad}{fence}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_spans_outlast_the_backticks_inside() {
        assert_eq!(code_span("ls -l"), "`ls -l`");
        assert_eq!(code_span("echo `date`"), "`` echo `date` ``");
        assert_eq!(code_span("a ``` b"), "````a ``` b````");
    }

    #[test]
    fn a_misspelling_finds_its_word() {
        let keys = ["timeout", "request", "evaluate"];
        assert_eq!(closest("timout", keys), Some("timeout"));
        assert_eq!(closest("evalute", keys), Some("evaluate"));
        assert_eq!(closest("colour", keys), None);
        assert_eq!(closest("pattern", ["path"]), None);
        assert_eq!(closest("patern", ["path", "pattern"]), Some("pattern"));
        assert_eq!(
            closest("file_exist", ["file_exists", "file_equals", "command"]),
            Some("file_exists")
        );
    }

    #[test]
    fn dollars_keep_the_digits_that_matter() {
        assert_eq!(usd(0.1), "0.10");
        assert_eq!(usd(0.005), "0.005");
        assert_eq!(usd(12.0), "12.00");
        assert_eq!(usd(0.1234567), "0.123457");
    }

    #[test]
    fn shortens_on_char_boundaries() {
        assert_eq!(shorten("héllo wörld", 6), "héllo…");
        assert_eq!(shorten("short", 10), "short");
    }

    #[test]
    fn first_line_marks_more() {
        assert_eq!(first_line("\nabc\ndef\n", 10), "abc …");
        assert_eq!(first_line("abc", 10), "abc");
    }

    #[test]
    fn plurals() {
        assert_eq!(plural(1, "task"), "1 task");
        assert_eq!(plural(0, "task"), "0 tasks");
        assert_eq!(plural(2, "trajectory"), "2 trajectories");
        assert_eq!(plural(1, "trajectory"), "1 trajectory");
        assert_eq!(plural(2, "day"), "2 days");
        assert_eq!(plural(3, "pass"), "3 passes");
    }

    #[test]
    fn control_codes_are_shown_not_obeyed() {
        assert!(matches!(printable("plain\ttext\r\nok"), Cow::Borrowed(_)));
        assert_eq!(
            printable("\x1b]0;owned\x07\x1b[2J\0done\rover\u{9b}\u{202e}txt"),
            "\\x1b]0;owned\\x07\\x1b[2J\\x00done\\x0dover\\u{009b}\\u{202e}txt"
        );
    }
}
