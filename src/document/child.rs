//! Reading a document in a child process (`ufo-batch read-document`) with an address-space
//! limit and a time limit: office files come from tasks, and a few bytes of zip can
//! describe a sheet a parser would allocate hundreds of GB for. A child that runs out of
//! memory or time is a clear error for the check; the runner never sees the allocation.
//! The child reads the document from a file the runner opened (beneath the workspace,
//! with the task's rights), and the runner reads no more of its answer than a bounded
//! text can take.

use std::fs::File;
use std::time::Duration;

use tokio::io::AsyncReadExt;
use tokio::process::Command;

/// The memory a document read may use.
const MEMORY: u64 = 1 << 30;
/// The time a document read may take.
const TIME: Duration = Duration::from_secs(60);
/// The longest text a check reads of a document, in bytes.
pub(crate) const TEXT_LIMIT: usize = 4 << 20;
/// The most the runner reads of the child's answer: the text as JSON, where a control
/// character takes six bytes (`\u001b`).
const ANSWER_LIMIT: u64 = 6 * TEXT_LIMIT as u64 + 4096;

/// What to read.
pub(crate) enum Read<'a> {
    /// The document's text.
    Text,
    /// One cell of a sheet (the first when `None`).
    Cell {
        /// The sheet.
        sheet: Option<&'a str>,
        /// The cell, as `B4`.
        cell: &'a str,
    },
}

/// Why the document reader gave no text.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ReaderError {
    /// The runner's own program cannot be found.
    #[error("cannot find ufo-batch itself: {0}")]
    NoProgram(#[source] std::io::Error),
    /// The reader could not be started.
    #[error("cannot start the document reader: {0}")]
    Start(#[source] std::io::Error),
    /// The reader's output is not there.
    #[error("the document reader has no output")]
    NoOutput,
    /// Its answer is longer than a check reads.
    #[error("its text is more than the {} MiB a check reads", TEXT_LIMIT >> 20)]
    TooLong,
    /// Its answer could not be read.
    #[error("cannot read the document reader's answer: {0}")]
    Answer(#[source] std::io::Error),
    /// It could not be waited for.
    #[error("cannot wait for the document reader: {0}")]
    Wait(#[source] std::io::Error),
    /// It took longer than its time limit.
    #[error("reading it took longer than {}s", TIME.as_secs())]
    Slow,
    /// It ended without an answer: out of memory, or killed.
    #[error(
        "it could not be read within {} MiB of memory ({})",
        MEMORY >> 20,
        describe(.0)
    )]
    Ended(std::process::ExitStatus),
    /// Why the reader could not read the document, in its words: a `DocumentError`'s,
    /// come back as text from the child process.
    #[error("{0}")]
    Unreadable(String),
    /// Its answer says neither what it read nor why it could not.
    #[error("the document reader gave no answer")]
    NoAnswer,
}

/// Reads the document open as `file`, named `name` (its extension says what it is), in a
/// bounded child process; `Err` says why it could not.
pub(crate) async fn read_in_child(
    file: File,
    name: &str,
    what: Read<'_>,
) -> Result<String, ReaderError> {
    let exe = std::env::current_exe().map_err(ReaderError::NoProgram)?;
    let mut command = Command::new(exe);
    command.arg("read-document");
    // Values joined to their options and the name after `--`: a path or sheet that
    // begins with `-` is never read as an option.
    if let Read::Cell { sheet, cell } = what {
        command.arg(format!("--cell={cell}"));
        if let Some(sheet) = sheet {
            command.arg(format!("--sheet={sheet}"));
        }
    }
    command.arg("--").arg(name);
    command
        .env_clear()
        .stdin(std::process::Stdio::from(file))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true);
    limit_memory(&mut command);
    let mut child = command.spawn().map_err(ReaderError::Start)?;
    let mut stdout = child.stdout.take().ok_or(ReaderError::NoOutput)?;
    let read = async {
        let mut answer = Vec::new();
        (&mut stdout)
            .take(ANSWER_LIMIT + 1)
            .read_to_end(&mut answer)
            .await
            .map(|_| answer)
    };
    let answer = match tokio::time::timeout(TIME, read).await {
        Ok(Ok(answer)) if answer.len() as u64 > ANSWER_LIMIT => {
            let _ = child.start_kill();
            return Err(ReaderError::TooLong);
        }
        Ok(Ok(answer)) => answer,
        Ok(Err(e)) => return Err(ReaderError::Answer(e)),
        Err(_) => return Err(ReaderError::Slow),
    };
    let status = match tokio::time::timeout(TIME, child.wait()).await {
        Ok(Ok(status)) => status,
        Ok(Err(e)) => return Err(ReaderError::Wait(e)),
        Err(_) => return Err(ReaderError::Slow),
    };
    let answer: serde_json::Value =
        serde_json::from_slice(&answer).map_err(|_| ReaderError::Ended(status))?;
    match (answer.get("ok"), answer.get("error")) {
        (Some(serde_json::Value::String(text)), _) => Ok(text.clone()),
        (_, Some(serde_json::Value::String(why))) => Err(ReaderError::Unreadable(why.clone())),
        _ => Err(ReaderError::NoAnswer),
    }
}

fn describe(status: &std::process::ExitStatus) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            return format!("the reader was killed by signal {signal}");
        }
    }
    format!("the reader ended with {status}")
}

/// The address-space limit, set between fork and exec.
#[cfg(unix)]
fn limit_memory(command: &mut Command) {
    let limit = libc::rlimit {
        rlim_cur: MEMORY as libc::rlim_t,
        rlim_max: MEMORY as libc::rlim_t,
    };
    // SAFETY: setrlimit is async-signal-safe and touches only the child.
    unsafe {
        command.pre_exec(move || {
            if libc::setrlimit(libc::RLIMIT_AS, &limit) == 0 {
                Ok(())
            } else {
                Err(std::io::Error::last_os_error())
            }
        });
    }
}

#[cfg(not(unix))]
fn limit_memory(_command: &mut Command) {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reader_errors_say_what_they_said() {
        assert_eq!(
            ReaderError::TooLong.to_string(),
            "its text is more than the 4 MiB a check reads"
        );
        assert_eq!(
            ReaderError::Slow.to_string(),
            "reading it took longer than 60s"
        );
        let gone = std::io::Error::from(std::io::ErrorKind::NotFound);
        assert!(
            ReaderError::Start(gone)
                .to_string()
                .starts_with("cannot start the document reader: ")
        );
    }
}
