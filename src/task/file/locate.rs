//! Where a place in a task file (`evaluate[1].path`, as a problem names it) is in its
//! text, as a line and a column, so that every problem of a file is said at its line,
//! not only the one the JSON parser stopped at. The text is valid JSON here (a syntax
//! error has the parser's own position); a place it cannot find exactly (a `files`
//! key with a dot in it, shortened in the message) is said at the nearest place that
//! holds it.

/// The 1-based line and column of `at` in `text`: the key of a value in an object, the
/// item of a list, the document itself when `at` is empty; else of the deepest place on
/// the way to it that is there.
pub(super) fn locate(text: &str, at: &str) -> Option<(usize, usize)> {
    let mut scan = Scan {
        bytes: text.as_bytes(),
        i: 0,
    };
    scan.space();
    let mut found = scan.i;
    for segment in segments(at) {
        let next = match segment {
            Segment::Key(key) => scan.key(&key),
            Segment::Index(index) => scan.item(index),
        };
        match next {
            Some(at) => found = at,
            None => break,
        }
    }
    (found < text.len()).then(|| line_column(text, found))
}

#[derive(Debug, PartialEq)]
enum Segment {
    Key(String),
    Index(usize),
}

/// `evaluate[1].path` as its segments, up to the first that cannot be read as one.
fn segments(at: &str) -> Vec<Segment> {
    let mut out = Vec::new();
    for part in at.split('.').filter(|p| !p.is_empty()) {
        let (key, mut rest) = part.split_once('[').map_or((part, ""), |(k, r)| (k, r));
        if !key.is_empty() {
            out.push(Segment::Key(key.to_string()));
        }
        while !rest.is_empty() {
            let Some((index, tail)) = rest.split_once(']') else {
                return out;
            };
            let Ok(index) = index.parse() else {
                return out;
            };
            out.push(Segment::Index(index));
            rest = tail.strip_prefix('[').unwrap_or(tail);
        }
    }
    out
}

struct Scan<'a> {
    bytes: &'a [u8],
    i: usize,
}

impl Scan<'_> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.i).copied()
    }

    fn space(&mut self) {
        while self.peek().is_some_and(|b| b.is_ascii_whitespace()) {
            self.i += 1;
        }
    }

    fn eat(&mut self, byte: u8) -> Option<()> {
        self.space();
        (self.peek()? == byte).then(|| self.i += 1)
    }

    /// In the object here: the start of `key`, the scan left at its value.
    fn key(&mut self, wanted: &str) -> Option<usize> {
        self.eat(b'{')?;
        loop {
            self.space();
            let start = self.i;
            let key: String = serde_json::from_slice(self.string()?).ok()?;
            self.eat(b':')?;
            self.space();
            if key == wanted {
                return Some(start);
            }
            self.value()?;
            self.eat(b',')?;
        }
    }

    /// In the list here: the start of item `index`, the scan left at it.
    fn item(&mut self, index: usize) -> Option<usize> {
        self.eat(b'[')?;
        for _ in 0..index {
            self.space();
            self.value()?;
            self.eat(b',')?;
        }
        self.space();
        (self.peek()? != b']').then_some(self.i)
    }

    /// Skips a string, quotes included; its text.
    fn string(&mut self) -> Option<&[u8]> {
        let start = self.i;
        (self.peek()? == b'"').then_some(())?;
        self.i += 1;
        loop {
            match self.peek()? {
                b'\\' => self.i += 2,
                b'"' => {
                    self.i += 1;
                    return Some(&self.bytes[start..self.i]);
                }
                _ => self.i += 1,
            }
        }
    }

    /// Skips one value.
    fn value(&mut self) -> Option<()> {
        match self.peek()? {
            b'"' => self.string().map(|_| ()),
            open @ (b'{' | b'[') => {
                let close = if open == b'{' { b'}' } else { b']' };
                let mut depth = 0usize;
                loop {
                    match self.peek()? {
                        b'"' => {
                            self.string()?;
                            continue;
                        }
                        b if b == open => depth += 1,
                        b if b == close => {
                            depth -= 1;
                            if depth == 0 {
                                self.i += 1;
                                return Some(());
                            }
                        }
                        _ => {}
                    }
                    self.i += 1;
                }
            }
            _ => {
                while self
                    .peek()
                    .is_some_and(|b| !matches!(b, b',' | b'}' | b']') && !b.is_ascii_whitespace())
                {
                    self.i += 1;
                }
                Some(())
            }
        }
    }
}

/// The 1-based line and column (in characters) of byte `at`.
fn line_column(text: &str, at: usize) -> (usize, usize) {
    let before = &text[..at.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
    (line, column)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "{\n  \"request\": \"r {x}\",\n  \"evaluate\": [\n    {\"type\": \"a\", \"path\": \"]\"},\n    {\"type\": \"b\",\n     \"path\": 5}\n  ],\n  \"timeout\": \"5\"\n}";

    #[test]
    fn a_place_is_found_at_its_key_or_item() {
        assert_eq!(locate(TEXT, ""), Some((1, 1)));
        assert_eq!(locate(TEXT, "timeout"), Some((8, 3)));
        assert_eq!(locate(TEXT, "evaluate[1]"), Some((5, 5)));
        assert_eq!(locate(TEXT, "evaluate[1].path"), Some((6, 6)));
        assert_eq!(locate(TEXT, "evaluate[0].path"), Some((4, 19)));
    }

    #[test]
    fn a_place_that_is_not_there_is_said_where_it_would_be() {
        assert_eq!(locate(TEXT, "evaluate[2]"), Some((3, 3)));
        assert_eq!(locate(TEXT, "nothing"), Some((1, 1)));
        assert_eq!(locate(TEXT, "request.deeper"), Some((2, 3)));
        assert_eq!(locate(TEXT, "evaluate[x]"), Some((3, 3)));
        // A `files` key with dots in it: at the `files` object.
        let text = "{\"request\": \"x\",\n \"files\": {\"../a.txt\": \"y\"}}";
        assert_eq!(locate(text, "files.../a.txt"), Some((2, 2)));
        assert_eq!(locate("", ""), None);
    }

    #[test]
    fn escaped_keys_and_characters_count_as_written() {
        let text = "{\"\\u0061ctions\": [1], \"é\": 1, \"b\": 2}";
        assert_eq!(locate(text, "actions[0]"), Some((1, 19)));
        assert_eq!(locate(text, "b"), Some((1, 31)));
    }
}
