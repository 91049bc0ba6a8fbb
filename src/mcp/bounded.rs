//! A stdio MCP server's output, read with a bound on one message. MCP's stdio transport
//! sends one JSON message a line, and the client keeps a line until its end: a server in a
//! task's sandbox that sends a line of gigabytes (echoing a file the task made) would have
//! the runner hold it all. Here a line longer than the bound ends the stream with an
//! error instead, so the session closes and the call fails saying why. So does a line
//! nested deeper than JSON readers go (the client's parser gives up on it, and the call
//! would wait for an answer that never parses): a malformed answer is the server's fault,
//! said as such, not a call that did not answer in time.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, ReadBuf};

/// The longest message a stdio server may send (a few screenshots' worth; parsed, a
/// message can take many times its size).
pub(crate) const MAX_MESSAGE: usize = 16 << 20;

/// The deepest nesting of arrays and objects a message may have (serde_json, which the
/// MCP client parses with, stops at 128).
pub(crate) const MAX_DEPTH: usize = 100;

/// Why a server's output was refused, once it is: kept for the reader's owner, since
/// the MCP client reports only that the stream closed.
pub(crate) type Refusal = std::sync::Arc<std::sync::OnceLock<String>>;

/// `inner`, whose lines may be at most `max` bytes long and [`MAX_DEPTH`] deep.
pub(crate) struct BoundedLines<R> {
    inner: R,
    /// Why the stream was ended, once it was.
    refusal: Refusal,
    max: usize,
    /// Bytes since the last line feed.
    line: usize,
    /// Arrays and objects open on this line.
    depth: usize,
    /// Inside a JSON string, and just after a backslash in one.
    in_string: bool,
    escaped: bool,
}

impl<R> BoundedLines<R> {
    /// Reads `inner`, refusing a line over `max` bytes.
    pub(crate) fn new(inner: R, max: usize) -> Self {
        Self {
            inner,
            refusal: Refusal::default(),
            max,
            line: 0,
            depth: 0,
            in_string: false,
            escaped: false,
        }
    }
}

impl<R> BoundedLines<R> {
    /// Where why the stream was ended is kept.
    pub(crate) fn refusal(&self) -> Refusal {
        std::sync::Arc::clone(&self.refusal)
    }

    /// Takes the next `byte` of the stream; why the message it is in is refused, if it is.
    fn refuses(&mut self, byte: u8) -> Option<String> {
        if byte == b'\n' {
            (self.line, self.depth, self.in_string, self.escaped) = (0, 0, false, false);
            return None;
        }
        self.line += 1;
        if self.line > self.max {
            return Some(format!(
                "the server sent a message of more than {} MiB",
                self.max >> 20
            ));
        }
        if self.in_string {
            match (self.escaped, byte) {
                (true, _) => self.escaped = false,
                (false, b'\\') => self.escaped = true,
                (false, b'"') => self.in_string = false,
                _ => {}
            }
            return None;
        }
        match byte {
            b'"' => self.in_string = true,
            b'[' | b'{' => {
                self.depth += 1;
                if self.depth > MAX_DEPTH {
                    return Some(format!(
                        "the server sent a malformed message: JSON nested more than {MAX_DEPTH} levels deep, which no answer is"
                    ));
                }
            }
            b']' | b'}' => self.depth = self.depth.saturating_sub(1),
            _ => {}
        }
        None
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for BoundedLines<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let this = &mut *self;
        let polled = Pin::new(&mut this.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = polled {
            for &byte in &buf.filled()[before..] {
                if let Some(why) = this.refuses(byte) {
                    let _ = this.refusal.set(why.clone());
                    // An error hands back no bytes.
                    buf.set_filled(before);
                    return Poll::Ready(Err(io::Error::new(io::ErrorKind::InvalidData, why)));
                }
            }
        }
        polled
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    #[tokio::test]
    async fn lines_within_the_bound_pass_and_a_longer_one_ends_the_stream() {
        let mut ok = BoundedLines::new(&b"{\"a\":1}\n{\"b\":2}\n"[..], 8);
        let mut read = String::new();
        ok.read_to_string(&mut read).await.unwrap();
        assert_eq!(read, "{\"a\":1}\n{\"b\":2}\n");
        let long = [b'x'; 20];
        let mut bad = BoundedLines::new(&long[..], 8);
        let e = bad.read_to_end(&mut Vec::new()).await.unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidData);
    }

    #[tokio::test]
    async fn a_message_nested_too_deep_ends_the_stream_and_brackets_in_strings_do_not_count() {
        let fine = format!(
            "{}{}\n{{\"text\": \"{}\"}}\n",
            "[".repeat(MAX_DEPTH),
            "]".repeat(MAX_DEPTH),
            "[\\\"{".repeat(1000)
        );
        let mut ok = BoundedLines::new(fine.as_bytes(), 1 << 20);
        let mut read = String::new();
        ok.read_to_string(&mut read).await.unwrap();
        assert_eq!(read, fine);
        let deep = format!("{{\"result\": {}", "[".repeat(200_000));
        let mut bad = BoundedLines::new(deep.as_bytes(), 1 << 20);
        let e = bad.read_to_end(&mut Vec::new()).await.unwrap_err();
        assert!(e.to_string().contains("nested more than 100 levels"), "{e}");
    }
}
