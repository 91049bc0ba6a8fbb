//! Bounded capture of a child's output: the head and the tail are kept, the middle is
//! counted and dropped, and the pipe is always drained so the child never blocks.

use tokio::io::{AsyncRead, AsyncReadExt};

/// Output kept from one stream.
#[derive(Debug, Default)]
pub(crate) struct Captured {
    head: Vec<u8>,
    tail: Vec<u8>,
    dropped: u64,
    limit: usize,
}

impl Captured {
    /// Keeps at most `limit` bytes: three quarters from the start, a quarter from the end.
    pub(crate) fn new(limit: usize) -> Self {
        Self {
            limit,
            ..Self::default()
        }
    }

    fn head_limit(&self) -> usize {
        self.limit - self.limit / 4
    }

    fn tail_limit(&self) -> usize {
        self.limit / 4
    }

    /// Adds bytes read from the stream.
    pub(crate) fn push(&mut self, mut bytes: &[u8]) {
        let room = self.head_limit().saturating_sub(self.head.len());
        let into_head = room.min(bytes.len());
        self.head.extend_from_slice(&bytes[..into_head]);
        bytes = &bytes[into_head..];
        if bytes.is_empty() {
            return;
        }
        self.tail.extend_from_slice(bytes);
        let keep = self.tail_limit();
        if self.tail.len() > keep {
            let excess = self.tail.len() - keep;
            self.dropped += excess as u64;
            self.tail.drain(..excess);
        }
    }

    /// Bytes dropped from the middle.
    pub(crate) fn dropped(&self) -> u64 {
        self.dropped
    }

    /// The kept text, with a marker where bytes were dropped.
    pub(crate) fn text(&self) -> String {
        let mut out = String::from_utf8_lossy(&self.head).into_owned();
        if self.dropped > 0 {
            out.push_str(&format!("\n…[{} bytes omitted]…\n", self.dropped));
        }
        out.push_str(&String::from_utf8_lossy(&self.tail));
        out
    }
}

/// Reads `reader` to its end into `into`.
pub(crate) async fn drain<R: AsyncRead + Unpin>(mut reader: R, into: &mut Captured) {
    // Read into the buffer's spare capacity: a zeroed buffer per stream cost more than
    // most commands' whole output.
    let mut buf = Vec::with_capacity(16 * 1024);
    loop {
        buf.clear();
        match reader.read_buf(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(_) => into.push(&buf),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_everything_under_the_limit() {
        let mut c = Captured::new(100);
        c.push(b"hello ");
        c.push(b"world");
        assert_eq!(c.text(), "hello world");
        assert_eq!(c.dropped(), 0);
    }

    #[test]
    fn keeps_head_and_tail_over_the_limit() {
        let mut c = Captured::new(8);
        for chunk in [b"abcd".as_slice(), b"efgh", b"ijkl"] {
            c.push(chunk);
        }
        // head 6 bytes, tail 2 bytes, 4 dropped
        assert_eq!(c.text(), "abcdef\n…[4 bytes omitted]…\nkl");
        assert_eq!(c.dropped(), 4);
    }

    #[tokio::test]
    async fn drains_a_reader() {
        let mut c = Captured::new(1024);
        drain(&b"some bytes"[..], &mut c).await;
        assert_eq!(c.text(), "some bytes");
    }
}
