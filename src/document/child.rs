//! Reading a document in a child process (`ufo-batch read-document`) with an address-space
//! limit and a time limit: office files come from tasks, and a few bytes of zip can
//! describe a sheet a parser would allocate hundreds of GB for. A child that runs out of
//! memory or time is a clear error for the check; the runner never sees the allocation.

use std::path::Path;
use std::time::Duration;

use tokio::process::Command;

/// The memory a document read may use.
const MEMORY: u64 = 1 << 30;
/// The time a document read may take.
const TIME: Duration = Duration::from_secs(60);

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

/// Reads `path` in a bounded child process; `Err` says why it could not.
pub(crate) async fn read_in_child(path: &Path, what: Read<'_>) -> Result<String, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find ufo-batch itself: {e}"))?;
    let mut command = Command::new(exe);
    command.arg("read-document").arg(path);
    if let Read::Cell { sheet, cell } = what {
        command.args(["--cell", cell]);
        if let Some(sheet) = sheet {
            command.args(["--sheet", sheet]);
        }
    }
    command
        .env_clear()
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true);
    limit_memory(&mut command);
    let output = match tokio::time::timeout(TIME, command.output()).await {
        Ok(output) => output.map_err(|e| format!("cannot start the document reader: {e}"))?,
        Err(_) => return Err(format!("reading it took longer than {}s", TIME.as_secs())),
    };
    let answer: serde_json::Value = serde_json::from_slice(&output.stdout).map_err(|_| {
        format!(
            "it could not be read within {} MiB of memory ({})",
            MEMORY >> 20,
            describe(&output.status)
        )
    })?;
    match (answer.get("ok"), answer.get("error")) {
        (Some(serde_json::Value::String(text)), _) => Ok(text.clone()),
        (_, Some(serde_json::Value::String(why))) => Err(why.clone()),
        _ => Err("the document reader gave no answer".into()),
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
