//! Talking to an Office API helper: a process that carries out UFO's Office API tools
//! (`desktop::office`) on the live document, beside the app (`uno_helper.py` on Linux,
//! `com_helper.ps1` on Windows). One JSON line each way: a request `{"id", "app",
//! "tool", "args"}` gets the answer `{"id", "ok": RESULT}` or `{"id", "error": WHY}`
//! (`json_lines`). Each call is bounded in time, each answer in size.

use std::time::Duration;

use serde_json::{Map, Value, json};
use tokio::io::{AsyncRead, AsyncWrite};

use super::error::DesktopError;
use super::json_lines::{JsonLines, LineError};
use crate::tool::{Blame, Blamed};

/// Why a call of an Office API helper failed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum HelperError {
    /// The tool refused the call (`{"error": WHY}`: a text not found, a range that is
    /// not one): the agent's.
    #[error("{0}")]
    Refused(String),
    /// The helper gave no answer (its pipes broke, it ended, it answered garbage or
    /// not in time).
    #[error("the Office API helper {0}")]
    Line(#[from] LineError),
    /// Its answer has neither `ok` nor `error`.
    #[error("the Office API helper gave no answer")]
    NoAnswer,
}

impl Blamed for HelperError {
    fn blame(&self) -> Blame {
        match self {
            Self::Refused(_) => Blame::Agent,
            Self::Line(_) | Self::NoAnswer => Blame::Environment,
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
    lines: JsonLines,
}

impl OfficeHelper {
    /// The helper whose standard input is `to` and whose standard output is `from`.
    pub(crate) fn new(
        to: Box<dyn AsyncWrite + Send + Sync + Unpin>,
        from: Box<dyn AsyncRead + Send + Sync + Unpin>,
    ) -> Self {
        Self {
            lines: JsonLines::new(to, from),
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
        let request = json!({"app": app, "tool": tool, "args": args});
        let Value::Object(request) = request else {
            unreachable!("an object")
        };
        let answer = self.lines.exchange(request, CALL_LIMIT, MAX_ANSWER).await?;
        match (answer.get("ok"), answer.get("error")) {
            (Some(ok), _) => Ok(ok.clone()),
            (_, Some(Value::String(why))) => Err(HelperError::Refused(why.clone())),
            _ => Err(HelperError::NoAnswer),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

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
