//! A stdio MCP server's output, read with a bound on one message. MCP's stdio transport
//! sends one JSON message a line, and the client keeps a line until its end: a server in a
//! task's sandbox that sends a line of gigabytes (echoing a file the task made) would have
//! the runner hold it all. Here a line longer than the bound ends the stream with an
//! error instead, so the session closes and the call fails saying why.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, ReadBuf};

/// The longest message a stdio server may send (a few screenshots' worth; parsed, a
/// message can take many times its size).
pub(crate) const MAX_MESSAGE: usize = 16 << 20;

/// `inner`, whose lines may be at most `max` bytes long.
pub(crate) struct BoundedLines<R> {
    inner: R,
    max: usize,
    /// Bytes since the last line feed.
    line: usize,
}

impl<R> BoundedLines<R> {
    /// Reads `inner`, refusing a line over `max` bytes.
    pub(crate) fn new(inner: R, max: usize) -> Self {
        Self {
            inner,
            max,
            line: 0,
        }
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
                this.line = if byte == b'\n' { 0 } else { this.line + 1 };
                if this.line > this.max {
                    // An error hands back no bytes.
                    buf.set_filled(before);
                    return Poll::Ready(Err(io::Error::new(
                        io::ErrorKind::InvalidData,
                        format!(
                            "the server sent a message of more than {} MiB",
                            this.max >> 20
                        ),
                    )));
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
}
