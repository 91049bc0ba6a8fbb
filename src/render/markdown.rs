//! The one escaping rule of the Markdown files (`output.md`, `report.md`, the comparison):
//! a task's words (a request, a thought, an error, a reason) are shown, never rendered as
//! markup. HTML's special characters are escaped as entities in running text; inside a
//! code span (`` `ls *.py > list.txt` ``) they are kept as they are, since a Markdown
//! viewer shows a code span's characters literally and would show `&gt;` there. Code
//! spans are found as CommonMark finds them: a run of backticks up to the next run of the
//! same length; a run without one is literal text.

/// Text on one Markdown line: line breaks shown as ` ⏎ `, HTML escaped outside code spans.
pub(super) fn inline(text: &str) -> String {
    let one_line = text.trim().replace("\r\n", "\n").replace('\n', " ⏎ ");
    let mut out = String::with_capacity(one_line.len() + 16);
    let mut rest = one_line.as_str();
    while let Some(start) = rest.find('`') {
        escape_into(&mut out, &rest[..start]);
        let run = rest[start..].len() - rest[start..].trim_start_matches('`').len();
        let after = &rest[start + run..];
        match closing(after, run) {
            Some(end) => {
                out.push_str(&rest[start..start + run + end + run]);
                rest = &after[end + run..];
            }
            None => {
                out.push_str(&rest[start..start + run]);
                rest = after;
            }
        }
    }
    escape_into(&mut out, rest);
    out
}

/// Text fit for one Markdown table cell: [`inline`], shortened to `limit` characters,
/// with `|` escaped (GitHub's tables need that inside code spans too).
pub(super) fn cell(text: &str, limit: usize) -> String {
    let shown = crate::text::shorten(&crate::text::printable(text.trim()), limit);
    inline(&shown).replace('|', "\\|")
}

/// Where, in `text`, the next run of exactly `run` backticks starts.
fn closing(text: &str, run: usize) -> Option<usize> {
    let mut at = 0;
    while let Some(found) = text[at..].find('`') {
        let start = at + found;
        let len = text[start..].len() - text[start..].trim_start_matches('`').len();
        if len == run {
            return Some(start);
        }
        at = start + len;
    }
    None
}

fn escape_into(out: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            // No link and no image: a model's `![x](http://...)` stays text, fetching
            // nothing when the page is viewed.
            '[' => out.push_str("\\["),
            ']' => out.push_str("\\]"),
            c => out.push(c),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_and_images_stay_text() {
        assert_eq!(
            inline("![pixel](http://evil.example/t.png) [click](javascript:alert(1))"),
            "!\\[pixel\\](http://evil.example/t.png) \\[click\\](javascript:alert(1))"
        );
    }

    #[test]
    fn markup_in_running_text_is_escaped() {
        assert_eq!(
            inline("<img src=x onerror=alert(1)> & co\nnext"),
            "&lt;img src=x onerror=alert(1)&gt; &amp; co ⏎ next"
        );
    }

    #[test]
    fn code_spans_keep_their_characters() {
        assert_eq!(
            inline("the command `ls *.py > list.txt` failed: a <b> tag"),
            "the command `ls *.py > list.txt` failed: a &lt;b&gt; tag"
        );
        assert_eq!(inline("``a ` <b>`` <c>"), "``a ` <b>`` &lt;c&gt;");
    }

    #[test]
    fn a_backtick_without_its_pair_is_text() {
        assert_eq!(inline("it's `x <y"), "it's `x &lt;y");
        assert_eq!(inline("``a` <b>"), "``a` &lt;b&gt;");
    }

    #[test]
    fn table_cells_escape_pipes_everywhere() {
        assert_eq!(cell("`a | b` | <c>", 100), "`a \\| b` \\| &lt;c&gt;");
        assert_eq!(cell("one\ntwo", 100), "one ⏎ two");
    }
}
