//! The Office API tools on Windows: one helper per task (`com_helper.ps1`, run by
//! Windows PowerShell 5.1, which every Windows has), started at the first call in the
//! task's workspace. It drives the running Word, Excel or PowerPoint over COM, as UFO's
//! COM servers do, on the task's document, and answers each call with one JSON line
//! (`desktop::office_helper`). It ends with the task's desktop.

use std::path::Path;
use std::process::Stdio;

use crate::desktop::error::DesktopError;
use crate::desktop::office_helper::{HelperError, OfficeHelper};
use crate::tool::{Blame, Blamed};

/// Why the Windows helper cannot be started or called.
#[derive(Debug, thiserror::Error)]
pub(super) enum ComError {
    /// Its script cannot be written, or PowerShell cannot be started.
    #[error("cannot start the Office API helper: {0}")]
    Start(#[source] std::io::Error),
    /// PowerShell started without the pipes asked for.
    #[error("cannot talk to the Office API helper")]
    NoPipes,
    /// PowerShell ended, how.
    #[error("the Office API helper (Windows PowerShell) ended ({0})")]
    Ended(std::process::ExitStatus),
    /// A call failed.
    #[error(transparent)]
    Call(#[from] HelperError),
}

/// The helper is the machine's, but for what a call's own answer says.
impl Blamed for ComError {
    fn blame(&self) -> Blame {
        match self {
            Self::Call(e) => e.blame(),
            Self::Start(_) | Self::NoPipes | Self::Ended(_) => Blame::Environment,
        }
    }
}

impl From<ComError> for DesktopError {
    fn from(e: ComError) -> Self {
        DesktopError::classified(e)
    }
}

/// The helper's code, written to a temporary file at its start.
const HELPER: &str = include_str!("com_helper.ps1");

/// The running helper.
pub(super) struct Com {
    child: tokio::process::Child,
    helper: OfficeHelper,
    /// Its script, removed when it is dropped.
    _script: tempfile::TempPath,
}

impl Com {
    /// Starts the helper in `workspace`, on `document` (absolute) when the task has one.
    pub(super) fn start(workspace: &Path, document: Option<&Path>) -> Result<Self, ComError> {
        let failed = ComError::Start;
        let mut script = tempfile::Builder::new()
            .prefix("ufo-batch-com-")
            .suffix(".ps1")
            .tempfile()
            .map_err(failed)?;
        std::io::Write::write_all(&mut script, HELPER.as_bytes()).map_err(failed)?;
        let script = script.into_temp_path();
        let mut command = tokio::process::Command::new("powershell.exe");
        command
            .args(["-NoLogo", "-NoProfile", "-NonInteractive"])
            .args(["-ExecutionPolicy", "Bypass", "-File"])
            .arg(&script)
            .args(document)
            .current_dir(workspace)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true);
        let mut child = command.spawn().map_err(failed)?;
        let (Some(to), Some(from)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(ComError::NoPipes);
        };
        Ok(Self {
            child,
            helper: OfficeHelper::new(Box::new(to), Box::new(from)),
            _script: script,
        })
    }

    /// Calls `tool` of `app` with `args`; a helper that ended says so.
    pub(super) async fn call(
        &mut self,
        app: &str,
        tool: &str,
        args: &serde_json::Map<String, serde_json::Value>,
    ) -> Result<serde_json::Value, ComError> {
        let answer = self.helper.call(app, tool, args).await;
        if let Ok(Some(status)) = self.child.try_wait() {
            return Err(ComError::Ended(status));
        }
        Ok(answer?)
    }

    /// Whether the helper has ended (it is started again at the next call).
    pub(super) fn ended(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(Some(_)))
    }

    /// Ends the helper.
    pub(super) async fn end(mut self) {
        let _ = self.child.kill().await;
    }
}
