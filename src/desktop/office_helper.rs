//! Talking to an Office API helper: a process that carries out UFO's Office API tools
//! (`desktop::office`) on the live document, beside the app (`uno_helper.py` on Linux,
//! `com_helper.ps1` on Windows). One JSON line each way: a request `{"id", "app",
//! "tool", "args"}` gets the answer `{"id", "ok": RESULT}` or `{"id", "error": WHY}`.
//! Each call is bounded in time, each answer in size.

use std::time::Duration;

use serde_json::{Map, Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};

use super::error::DesktopError;
use crate::tool::{Blame, Blamed};

/// Why a call of an Office API helper failed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum HelperError {
    /// The tool refused the call (`{"error": WHY}`: a text not found, a range that is
    /// not one): the agent's.
    #[error("{0}")]
    Refused(String),
    /// Its pipes broke.
    #[error("the Office API helper is gone ({0})")]
    Gone(#[source] std::io::Error),
    /// Its output ended.
    #[error("the Office API helper ended")]
    Ended,
    /// It wrote something that is not an answer.
    #[error("the Office API helper answered garbage ({0})")]
    Garbage(#[source] serde_json::Error),
    /// Its answer has neither `ok` nor `error`.
    #[error("the Office API helper gave no answer")]
    NoAnswer,
    /// It did not answer in time (the office hangs).
    #[error("`{tool}` took longer than {secs}s")]
    TimedOut {
        /// The tool called.
        tool: String,
        /// The limit.
        secs: u64,
    },
}

impl Blamed for HelperError {
    fn blame(&self) -> Blame {
        match self {
            Self::Refused(_) => Blame::Agent,
            Self::Gone(_)
            | Self::Ended
            | Self::Garbage(_)
            | Self::NoAnswer
            | Self::TimedOut { .. } => Blame::Environment,
        }
    }
}

impl From<HelperError> for DesktopError {
    fn from(e: HelperError) -> Self {
        DesktopError::classified(e)
    }
}

/// How long one call may take (a large document's export included; the first call also
/// waits for the office to answer).
const CALL_LIMIT: Duration = Duration::from_secs(120);
/// The longest answer line read.
const MAX_ANSWER: u64 = 16 << 20;

/// A running helper, through its standard input and output.
pub(crate) struct OfficeHelper {
    to: Box<dyn AsyncWrite + Send + Sync + Unpin>,
    from: BufReader<Box<dyn AsyncRead + Send + Sync + Unpin>>,
    next: u64,
}

impl OfficeHelper {
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

    /// Calls `tool` of `app` (`word`, `excel`, `powerpoint`) with `args`: its answer, or
    /// why it failed.
    pub(crate) async fn call(
        &mut self,
        app: &str,
        tool: &str,
        args: &Map<String, Value>,
    ) -> Result<Value, HelperError> {
        self.next += 1;
        let id = self.next;
        let request = json!({"id": id, "app": app, "tool": tool, "args": args});
        let exchange = async {
            let mut line = request.to_string();
            line.push('\n');
            self.to
                .write_all(line.as_bytes())
                .await
                .map_err(HelperError::Gone)?;
            self.to.flush().await.map_err(HelperError::Gone)?;
            loop {
                let mut answer = String::new();
                let read = (&mut self.from)
                    .take(MAX_ANSWER)
                    .read_line(&mut answer)
                    .await
                    .map_err(HelperError::Gone)?;
                if read == 0 {
                    return Err(HelperError::Ended);
                }
                let answer: Value =
                    serde_json::from_str(answer.trim()).map_err(HelperError::Garbage)?;
                if answer.get("id").and_then(Value::as_u64) != Some(id) {
                    continue;
                }
                return match (answer.get("ok"), answer.get("error")) {
                    (Some(ok), _) => Ok(ok.clone()),
                    (_, Some(Value::String(why))) => Err(HelperError::Refused(why.clone())),
                    _ => Err(HelperError::NoAnswer),
                };
            }
        };
        tokio::time::timeout(CALL_LIMIT, exchange)
            .await
            .unwrap_or_else(|_| {
                Err(HelperError::TimedOut {
                    tool: tool.to_string(),
                    secs: CALL_LIMIT.as_secs(),
                })
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A helper that answers garbage, another call's id, then the call; and one that
    /// ends: each is read as what it is.
    #[tokio::test]
    async fn answers_are_matched_by_id_and_a_gone_helper_is_said() {
        let (to, mut helper_in) = tokio::io::duplex(1 << 16);
        let (mut helper_out, from) = tokio::io::duplex(1 << 16);
        let mut helper = OfficeHelper::new(Box::new(to), Box::new(from));
        let serve = tokio::spawn(async move {
            let mut request = String::new();
            BufReader::new(&mut helper_in)
                .read_line(&mut request)
                .await
                .unwrap();
            let request: Value = serde_json::from_str(&request).unwrap();
            assert_eq!(request["tool"], "select_text");
            helper_out
                .write_all(b"{\"id\": 99, \"ok\": \"stale\"}\n{\"id\": 1, \"error\": \"Text x is not found.\"}\n")
                .await
                .unwrap();
            helper_out.write_all(b"not json\n").await.unwrap();
            // Its input stays open; its output closes: it ended.
            helper_in
        });
        let args = json!({"text": "x"}).as_object().cloned().unwrap();
        // The tool's own refusal is the agent's, in the helper's words.
        let refused = helper.call("word", "select_text", &args).await.unwrap_err();
        assert_eq!(refused.to_string(), "Text x is not found.");
        assert_eq!(refused.blame(), Blame::Agent);
        let _input = serve.await.unwrap();
        let garbage = helper.call("word", "select_text", &args).await.unwrap_err();
        assert!(
            garbage
                .to_string()
                .starts_with("the Office API helper answered garbage"),
            "{garbage}"
        );
        assert_eq!(garbage.blame(), Blame::Environment);
        let gone = helper.call("word", "select_text", &args).await.unwrap_err();
        assert_eq!(gone.to_string(), "the Office API helper ended");
        let gone = DesktopError::from(gone).failure();
        assert_eq!(
            gone,
            crate::tool::Failure::environment("the Office API helper ended")
        );
    }
}
