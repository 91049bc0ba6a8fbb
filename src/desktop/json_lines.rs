//! One JSON object per line each way with a helper process (the Office API helper,
//! OSWorld's evaluator bridge): each request carries an `id`, and its answer is the
//! next line with the same `id` (lines of other ids, left from a call that timed out,
//! are passed over). Each exchange is bounded in time, each answer line in size.

use std::time::Duration;

use serde_json::{Map, Value};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};

/// Why an exchange gave no answer (said after the helper's name).
#[derive(Debug, thiserror::Error)]
pub(crate) enum LineError {
    /// The pipes broke.
    #[error("is gone ({0})")]
    Gone(#[source] std::io::Error),
    /// Its output ended.
    #[error("ended")]
    Ended,
    /// It wrote a line that is not a JSON object.
    #[error("answered garbage ({0})")]
    Garbage(#[source] serde_json::Error),
    /// No answer came in time.
    #[error("gave no answer within {0}s")]
    TimedOut(u64),
}

/// A helper process, through its standard input and output.
pub(crate) struct JsonLines {
    to: Box<dyn AsyncWrite + Send + Sync + Unpin>,
    from: BufReader<Box<dyn AsyncRead + Send + Sync + Unpin>>,
    next: u64,
}

impl JsonLines {
    /// The helper whose standard input is `to` and whose standard output is `from`.
    pub(crate) fn new(
        to: Box<dyn AsyncWrite + Send + Sync + Unpin>,
        from: Box<dyn AsyncRead + Send + Sync + Unpin>,
    ) -> Self {
        Self {
            to,
            from: BufReader::new(from),
            next: 0,
        }
    }

    /// Sends `request` (its `id` set here) and returns the answer with the same `id`,
    /// within `limit`; an answer line longer than `max` bytes is garbage.
    pub(crate) async fn exchange(
        &mut self,
        mut request: Map<String, Value>,
        limit: Duration,
        max: u64,
    ) -> Result<Map<String, Value>, LineError> {
        self.next += 1;
        let id = self.next;
        request.insert("id".into(), Value::from(id));
        let exchange = async {
            let mut line = Value::Object(request).to_string();
            line.push('\n');
            self.to
                .write_all(line.as_bytes())
                .await
                .map_err(LineError::Gone)?;
            self.to.flush().await.map_err(LineError::Gone)?;
            loop {
                let mut answer = String::new();
                let read = (&mut self.from)
                    .take(max)
                    .read_line(&mut answer)
                    .await
                    .map_err(LineError::Gone)?;
                if read == 0 {
                    return Err(LineError::Ended);
                }
                let answer: Map<String, Value> =
                    serde_json::from_str(answer.trim()).map_err(LineError::Garbage)?;
                if answer.get("id").and_then(Value::as_u64) == Some(id) {
                    return Ok(answer);
                }
            }
        };
        tokio::time::timeout(limit, exchange)
            .await
            .unwrap_or(Err(LineError::TimedOut(limit.as_secs())))
    }
}
