//! The secrets of a run (API keys, values injected into tools), and the one filter every
//! byte the runner writes or prints goes through: a secret, or a long piece of one (the
//! first or last eight characters, as servers echo masked keys), is replaced by `***`.
//! Keeping tasks from reading a secret is the sandbox's job; this is the last line: even
//! a secret that got into a command's output never reaches a results file.

use std::borrow::Cow;
use std::sync::RwLock;

use memchr::memmem;

/// Secrets shorter than this are not registered: they would match ordinary text.
const MIN_SECRET: usize = 8;
/// Secrets at least this long also have their head and tail removed.
const PIECES_FROM: usize = 16;
/// The length of a removed head or tail.
const PIECE: usize = 8;
/// What a secret becomes.
const MASK: &[u8] = b"***";

/// One registered secret, and the pieces of it that are looked for too.
struct Secret {
    /// The whole secret.
    whole: String,
    /// Its first and last [`PIECE`] characters (for a secret of [`PIECES_FROM`] or more).
    pieces: Option<(String, String)>,
}

static SECRETS: RwLock<Vec<Secret>> = RwLock::new(Vec::new());

/// Registers `secret` for the rest of the process.
pub(crate) fn register(secret: &str) {
    let secret = secret.trim();
    if secret.len() < MIN_SECRET {
        return;
    }
    let mut secrets = SECRETS.write().unwrap_or_else(|e| e.into_inner());
    if secrets.iter().any(|s| s.whole == secret) {
        return;
    }
    let chars: Vec<char> = secret.chars().collect();
    let pieces = (chars.len() >= PIECES_FROM).then(|| {
        (
            chars[..PIECE].iter().collect(),
            chars[chars.len() - PIECE..].iter().collect(),
        )
    });
    secrets.push(Secret {
        whole: secret.to_string(),
        pieces,
    });
}

/// `bytes` with every registered secret masked; borrowed when there is nothing to mask.
/// A piece of a secret is masked with as much of the secret as goes on beside it, so a
/// secret cut short (a command shortened for a title, a capped output) loses all that is
/// left of it, not only its first or last characters.
pub(crate) fn scrub_bytes(bytes: &[u8]) -> Cow<'_, [u8]> {
    let secrets = SECRETS.read().unwrap_or_else(|e| e.into_inner());
    let mut spans: Vec<(usize, usize)> = Vec::new();
    for secret in secrets.iter() {
        let whole = secret.whole.as_bytes();
        spans.extend(memmem::find_iter(bytes, whole).map(|i| (i, i + whole.len())));
        let Some((head, tail)) = &secret.pieces else {
            continue;
        };
        for i in memmem::find_iter(bytes, head.as_bytes()) {
            let mut n = common_prefix(whole, &bytes[i..]);
            while !secret.whole.is_char_boundary(n) {
                n -= 1;
            }
            spans.push((i, i + n));
        }
        for i in memmem::find_iter(bytes, tail.as_bytes()) {
            let end = i + tail.len();
            let mut n = common_suffix(whole, &bytes[..end]);
            while !secret.whole.is_char_boundary(whole.len() - n) {
                n -= 1;
            }
            spans.push((end - n, end));
        }
    }
    if spans.is_empty() {
        return Cow::Borrowed(bytes);
    }
    spans.sort_unstable();
    let mut masked = Vec::with_capacity(bytes.len());
    let mut done = 0;
    for (start, end) in spans {
        if end <= done {
            continue;
        }
        if start >= done {
            masked.extend_from_slice(&bytes[done..start]);
            masked.extend_from_slice(MASK);
        }
        // A span overlapping the one before widens its mask.
        done = end;
    }
    masked.extend_from_slice(&bytes[done..]);
    Cow::Owned(masked)
}

/// How many bytes `a` and `b` share at their start.
fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

/// How many bytes `a` and `b` share at their end.
fn common_suffix(a: &[u8], b: &[u8]) -> usize {
    a.iter()
        .rev()
        .zip(b.iter().rev())
        .take_while(|(x, y)| x == y)
        .count()
}

/// How much a [`ScrubbingWriter`] gathers before it passes some on.
const HOLD: usize = 64 << 10;

/// A writer that masks every registered secret in what goes through it, for files too
/// large to build in memory first. Once it holds more than [`HOLD`], it passes on what
/// it holds up to the last byte that no secret holds (a line break, a quote, a
/// space...): no secret, nor any piece of one, spans such a byte, so none is cut in two.
pub(crate) struct ScrubbingWriter<W: std::io::Write> {
    inner: W,
    held: Vec<u8>,
    /// How much of `held` is known to hold no place to cut.
    uncut: usize,
}

impl<W: std::io::Write> ScrubbingWriter<W> {
    /// A writer passing masked text on to `inner`.
    pub(crate) fn new(inner: W) -> Self {
        Self {
            inner,
            held: Vec::new(),
            uncut: 0,
        }
    }

    /// Passes on what it still holds, flushes, and hands `inner` back.
    pub(crate) fn finish(mut self) -> std::io::Result<W> {
        self.pass_on(self.held.len())?;
        self.inner.flush()?;
        Ok(self.inner)
    }

    fn pass_on(&mut self, upto: usize) -> std::io::Result<()> {
        self.inner.write_all(&scrub_bytes(&self.held[..upto]))?;
        self.held.drain(..upto);
        self.uncut = 0;
        Ok(())
    }

    /// Where what is held may be cut: after its last byte that no secret holds (a line
    /// break, a quote, a space...), so that no secret, nor piece of one, spans the cut.
    /// Only what came since the last look is searched: a long stretch with no such byte
    /// (one line of JSON) costs its length once, not once per write.
    fn safe_cut(&mut self) -> Option<usize> {
        let secrets = SECRETS.read().unwrap_or_else(|e| e.into_inner());
        let mut in_secret = [false; 256];
        for byte in secrets.iter().flat_map(|s| s.whole.bytes()) {
            in_secret[usize::from(byte)] = true;
        }
        let from = self.uncut;
        self.uncut = self.held.len();
        self.held[from..]
            .iter()
            .rposition(|b| !in_secret[usize::from(*b)])
            .map(|i| from + i + 1)
    }
}

impl<W: std::io::Write> std::io::Write for ScrubbingWriter<W> {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        self.held.extend_from_slice(data);
        if self.held.len() >= HOLD
            && let Some(cut) = self.safe_cut()
        {
            self.pass_on(cut)?;
        }
        Ok(data.len())
    }

    /// Passes on nothing: what it holds may end in part of a secret (see `finish`).
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Whether `text` holds a registered secret (or a long piece of one).
pub(crate) fn holds_secret(text: &str) -> bool {
    matches!(scrub_bytes(text.as_bytes()), Cow::Owned(_))
}

/// The variables that hold an LLM key whatever a run's config names.
const KEY_VARIABLES: [&str; 3] = [
    "OPENAI_API_KEY",
    "AZURE_OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
];

/// Registers the values of the environment variables `names`, and of the usual LLM key
/// variables, as secrets.
pub(crate) fn register_env_keys<'a>(names: impl IntoIterator<Item = &'a str>) {
    for name in names.into_iter().chain(KEY_VARIABLES) {
        if let Ok(key) = std::env::var(name) {
            register(&key);
        }
    }
}

/// `text` with every registered secret masked.
pub(crate) fn scrub(text: &str) -> Cow<'_, str> {
    match scrub_bytes(text.as_bytes()) {
        Cow::Borrowed(_) => Cow::Borrowed(text),
        // Masks replace whole UTF-8 sequences of the secrets with ASCII.
        Cow::Owned(bytes) => Cow::Owned(String::from_utf8_lossy(&bytes).into_owned()),
    }
}

/// Standard error with every registered secret masked: where the binary's logs go (a
/// library's debug log may hold what it sent, injected arguments included).
#[derive(Clone, Copy, Debug, Default)]
pub struct ScrubbedStderr;

impl std::io::Write for ScrubbedStderr {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        std::io::stderr().write_all(&scrub_bytes(buf))?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        std::io::stderr().flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_and_their_pieces_are_masked() {
        register("sk-test-0123456789abcdefXYZ");
        register("short");
        let out = scrub("key sk-test-0123456789abcdefXYZ, masked sk-test-****bcdefXYZ, short");
        assert!(out.starts_with("key ***, masked ***"), "{out}");
        assert!(
            !out.contains("sk-test-") && !out.contains("bcdefXYZ"),
            "{out}"
        );
        assert!(out.ends_with(", short"), "{out}");
        assert!(matches!(scrub("nothing here"), Cow::Borrowed(_)));
    }

    #[test]
    fn what_is_left_of_a_secret_cut_short_is_masked_whole() {
        let key = "sk-cut-SECRETmiddlePART0123456789tail";
        register(key);
        // A title that shortened a command inside the key, from either end.
        let head_cut = format!("curl -H 'Bearer {}…", &key[..22]);
        assert_eq!(scrub(&head_cut), "curl -H 'Bearer ***…");
        let tail_cut = format!("…{} done", &key[14..]);
        assert_eq!(scrub(&tail_cut), "…*** done");
        // A cut copy right before a whole one: a mask each; the whole key (its head,
        // tail and whole spans overlap), one.
        let twice = format!("{}{key}", &key[..10]);
        assert_eq!(scrub(&twice), "******");
        assert_eq!(scrub(key), "***");
        // Text that only shares a piece's characters beyond it is kept.
        assert_eq!(scrub("sk-cut-SEC and more"), "*** and more");
        let wide = "пароль-ключ-секрет-значение";
        register(wide);
        let cut: String = wide.chars().take(12).collect();
        assert_eq!(scrub(&format!("{cut}…")), "***…");
    }

    #[test]
    fn a_streamed_file_is_masked_even_where_a_secret_meets_a_chunk_boundary() {
        use std::io::Write;
        let secret = "sk-stream-0123456789abcdefghij";
        register(secret);
        let mut text = String::new();
        for i in 0..20_000 {
            text.push_str(&format!("line {i} {secret} and more\n"));
        }
        let mut writer = ScrubbingWriter::new(Vec::new());
        // Odd-sized writes, so secrets straddle every boundary.
        for piece in text.as_bytes().chunks(7) {
            writer.write_all(piece).unwrap();
        }
        let out = String::from_utf8(writer.finish().unwrap()).unwrap();
        assert!(!out.contains("sk-stream") && !out.contains("cdefghij"));
        assert_eq!(out.lines().count(), 20_000);
        assert_eq!(out, scrub(&text));
        assert!(
            out.ends_with("line 19999 *** and more\n"),
            "{}",
            &out[out.len() - 40..]
        );
    }

    /// One long line (a page's JSON): passed on as it comes, cut only between secrets,
    /// and masked as if written whole.
    #[test]
    fn a_long_line_is_passed_on_as_it_comes_and_masked_whole() {
        use std::io::Write;
        let secret = "sk-oneline-0123456789abcdefghij";
        register(secret);
        let mut text = String::from("[");
        for i in 0..20_000 {
            text.push_str(&format!("[\"t{i}\",\"{secret}{i}\"],"));
        }
        let mut writer = ScrubbingWriter::new(Vec::new());
        for piece in text.as_bytes().chunks(5) {
            writer.write_all(piece).unwrap();
        }
        assert!(
            writer.held.len() < 2 * HOLD,
            "it holds {} bytes",
            writer.held.len()
        );
        assert!(!writer.inner.is_empty(), "nothing passed on before the end");
        let out = String::from_utf8(writer.finish().unwrap()).unwrap();
        assert!(!out.contains("sk-oneline") && !out.contains("cdefghij"));
        assert_eq!(out, scrub(&text));
    }
}
