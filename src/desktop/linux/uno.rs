//! The Office API tools on Linux: one helper per desktop (`uno_helper.py`, run by
//! `/usr/bin/python3`, for which Debian builds `python3-uno`), started at the first call
//! inside the desktop's jail, beside the office it drives. It reaches LibreOffice over the
//! named pipe the office was started to accept (`--accept=pipe,...`, in the jail's own
//! `/tmp`), acts on the live document the user sees, and answers each call with one JSON
//! line. It ends with the desktop, like the app.

use std::time::Duration;

use serde_json::{Map, Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::unix::pipe;

/// The helper's code, written into the desktop's `/tmp` at its start.
const HELPER: &str = include_str!("uno_helper.py");
/// Its name there.
const HELPER_FILE: &str = "ufo-batch-uno.py";
/// The interpreter python3-uno is built for (a pyenv's first on the PATH is not).
const PYTHON: &str = "/usr/bin/python3";
/// The office's automation pipe (each desktop jail has its own `/tmp`, so one name
/// serves every desktop).
pub(crate) const PIPE: &str = "ufo-batch";
/// How long one call may take (a large document's export included; the first call also
/// waits for the office to take the pipe).
const CALL_LIMIT: Duration = Duration::from_secs(120);
/// The longest answer line read.
const MAX_ANSWER: usize = 16 << 20;

/// The running helper.
pub(super) struct Uno {
    to: pipe::Sender,
    from: BufReader<pipe::Receiver>,
    next: u64,
}

impl Uno {
    /// What the desktop writes before starting the helper: its code, as `HELPER_FILE`.
    pub(super) fn code() -> (&'static str, &'static str) {
        (HELPER_FILE, HELPER)
    }

    /// The helper's command line, the task's document (`document`, absolute) named.
    pub(super) fn argv(document: Option<&std::path::Path>) -> Vec<String> {
        let mut argv = vec![
            PYTHON.to_string(),
            format!("/tmp/{HELPER_FILE}"),
            PIPE.to_string(),
        ];
        argv.extend(document.map(|d| d.display().to_string()));
        argv
    }

    /// The helper whose standard input is written through `to` and whose standard
    /// output is read from `from`.
    pub(super) fn over(
        to: std::os::fd::OwnedFd,
        from: std::os::fd::OwnedFd,
    ) -> Result<Self, String> {
        let to = pipe::Sender::from_owned_fd(to)
            .map_err(|e| format!("cannot talk to the Office API helper: {e}"))?;
        let from = pipe::Receiver::from_owned_fd(from)
            .map_err(|e| format!("cannot hear the Office API helper: {e}"))?;
        Ok(Self {
            to,
            from: BufReader::new(from),
            next: 0,
        })
    }

    /// Calls `tool` of `app` (`word`, `excel`, `powerpoint`) with `args`: its answer, or
    /// why it failed.
    pub(super) async fn call(
        &mut self,
        app: &str,
        tool: &str,
        args: &Map<String, Value>,
    ) -> Result<Value, String> {
        self.next += 1;
        let id = self.next;
        let request = json!({"id": id, "app": app, "tool": tool, "args": args});
        let exchange = async {
            let mut line = request.to_string();
            line.push('\n');
            self.to
                .write_all(line.as_bytes())
                .await
                .map_err(|e| format!("the Office API helper is gone ({e})"))?;
            loop {
                let mut answer = String::new();
                let read = (&mut self.from)
                    .take(MAX_ANSWER as u64)
                    .read_line(&mut answer)
                    .await
                    .map_err(|e| format!("the Office API helper is gone ({e})"))?;
                if read == 0 {
                    return Err("the Office API helper ended".to_string());
                }
                let answer: Value = serde_json::from_str(answer.trim())
                    .map_err(|e| format!("the Office API helper answered garbage ({e})"))?;
                if answer.get("id").and_then(Value::as_u64) != Some(id) {
                    continue;
                }
                return match (answer.get("ok"), answer.get("error")) {
                    (Some(ok), _) => Ok(ok.clone()),
                    (_, Some(Value::String(why))) => Err(why.clone()),
                    _ => Err("the Office API helper gave no answer".to_string()),
                };
            }
        };
        tokio::time::timeout(CALL_LIMIT, exchange)
            .await
            .unwrap_or_else(|_| {
                Err(format!(
                    "`{tool}` took longer than {}s",
                    CALL_LIMIT.as_secs()
                ))
            })
    }
}
