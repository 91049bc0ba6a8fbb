//! What can go wrong with a task on a device, and whose failure each is: no device free,
//! a command with no answer, a device gone, an argument the runner fills in refused, the
//! task's folder or files on the device, the files the checks read, the screen.

use std::time::Duration;

use super::SHELL;
use crate::regular_file::FileAccessError;
use crate::relpath::PathError;
use crate::tool::{Blame, Blamed};

/// A device that cannot do what a task needs of it.
#[derive(Debug, thiserror::Error)]
pub(crate) enum DeviceError {
    /// No device of the platform was free in time.
    #[error(
        "no {platform} device was free within {}s ({same} {platform} of {connected} connected)",
        within.as_secs()
    )]
    NoFreeDevice {
        /// The platform the task needs (`linux`, `windows`).
        platform: String,
        /// How long it waited.
        within: Duration,
        /// Devices of the platform connected.
        same: usize,
        /// Devices connected.
        connected: usize,
    },
    /// A command the device sent no result for in time.
    #[error(
        "device {device} sent no result within {}s: it is stuck, or the command outlasts [devices] command_timeout",
        waited.as_secs()
    )]
    Unanswered {
        /// The device.
        device: String,
        /// How long the runner waited.
        waited: Duration,
    },
    /// The device's connection ended.
    #[error("device {device} disconnected: {why}")]
    Disconnected {
        /// The device.
        device: String,
        /// Why the connection ended, as the connection says.
        why: String,
    },
    /// The device answered a command without its result.
    #[error("the device's answer holds no result for this command")]
    NoResult,
    /// The device refused the argument the runner fills in.
    #[error(
        "device {device} refused the `{argument}` the runner fills in ([devices] inject): {error}"
    )]
    InjectionRefused {
        /// The device.
        device: String,
        /// The argument.
        argument: String,
        /// The failed result's error.
        error: String,
    },
    /// A plan calls a tool the device does not offer.
    #[error(
        "device {device} offers no tool `{tool}` (it has: {}), so it cannot run this task",
        has.join(", ")
    )]
    NoSuchTool {
        /// The device.
        device: String,
        /// The tool called.
        tool: String,
        /// The tools it has.
        has: Vec<String>,
    },
    /// A call gives an argument the runner fills in.
    #[error("`{0}` is filled in by the runner ([devices] inject); leave it out")]
    InjectedGiven(String),
    /// The device has no shell tool.
    #[error("device {0} has no `{SHELL}` tool")]
    NoShell(String),
    /// The device lacks a data collection tool the screen is read with.
    #[error("device {device} has no `{tool}` to observe its screen with")]
    NoObserver {
        /// The device.
        device: String,
        /// The tool.
        tool: &'static str,
    },
    /// A data collection call failed.
    #[error("{tool} failed: {error}")]
    Collect {
        /// The tool.
        tool: String,
        /// The failed result's error.
        error: String,
    },
    /// No screenshot among the calls that observe the screen (the runner's mistake).
    #[error("no screenshot was asked for")]
    NoScreenshotAsked,
    /// The screenshot's answer is not text.
    #[error("the screenshot is not text")]
    ScreenshotNotText,
    /// The device said it could not take the screenshot (its words, shortened).
    #[error("the device could not take the screenshot: {0}")]
    NoScreenshot(String),
    /// The screenshot is not base64.
    #[error("the screenshot is not base64: {0}")]
    NotBase64(#[source] base64::DecodeError),
    /// The screenshot is not a PNG the runner reads: the image's own words.
    #[error("{0}")]
    NotPng(String),
    /// The screenshot cannot be saved in the task's folder: the image's own words.
    #[error("{0}")]
    NotSaved(String),
    /// The task has files and the device no shell to write them with.
    #[error("the task has files to write, and device {0} has no `{SHELL}` to write them with")]
    NoShellForFiles(String),
    /// The device does not answer while its folder is made.
    #[error("device {device} does not answer: {error}")]
    NotAnswering {
        /// The device.
        device: String,
        /// The failed result's error.
        error: String,
    },
    /// The device refused to make the task's folder, and the task has files.
    #[error(
        "device {device} refused to make the task's folder ({why}), so the task's files cannot be written there"
    )]
    FolderRefused {
        /// The device.
        device: String,
        /// The failed result's error.
        why: String,
    },
    /// A file of the task cannot be written on the device.
    #[error("cannot write {path} on device {device}: {error}")]
    NotWritten {
        /// The file.
        path: String,
        /// The device.
        device: String,
        /// The failed result's error.
        error: String,
    },
    /// The checks cannot be made on the device (its files cannot come home).
    #[error("the checks cannot be made on device {device}: {source}")]
    ChecksCannotBeMade {
        /// The device.
        device: String,
        /// Why.
        #[source]
        source: Box<DeviceError>,
    },
    /// The device has no shell to read files with.
    #[error("it has no `{SHELL}` to read files with")]
    NoShellToRead,
    /// The local workspace cannot be opened.
    #[error("cannot open the local workspace: {0}")]
    LocalWorkspace(#[source] FileAccessError),
    /// A checked path that is not one in the workspace.
    #[error(transparent)]
    Path(#[from] PathError),
    /// A checked path is a link on the device.
    #[error("{0} is a symbolic link there, and checks do not follow links")]
    Link(String),
    /// A file fetched cannot be kept in the local workspace.
    #[error("cannot keep {path} locally: {source}")]
    NotKept {
        /// The file.
        path: String,
        /// Why.
        #[source]
        source: FileAccessError,
    },
    /// A file whose content a check reads cannot be read on the device.
    #[error("{0} is there but cannot be read there")]
    Unreadable(String),
    /// A command the device refused or failed to run.
    #[error("`{command}`: {error}")]
    Command {
        /// The command.
        command: String,
        /// The failed result's error.
        error: String,
    },
    /// A text that does not come back as it is on the device.
    #[error("{0} is not UTF-8 text, so it does not come back as it is there")]
    NotUtf8(String),
    /// A file's bytes came back garbled.
    #[error("cannot read {path}: {source}")]
    Garbled {
        /// The file.
        path: String,
        /// Why.
        #[source]
        source: base64::DecodeError,
    },
    /// The device cannot send a document's bytes.
    #[error(
        "it cannot send a document's bytes (`{command}`: {error}), so a document check of {path} cannot be made there"
    )]
    NoBytes {
        /// The command refused.
        command: String,
        /// The failed result's error.
        error: String,
        /// The document.
        path: String,
    },
}

impl Blamed for DeviceError {
    fn blame(&self) -> Blame {
        use DeviceError as E;
        match self {
            // The agent asked what cannot be done: the step fails.
            E::InjectedGiven(_) => Blame::Agent,
            // What the task file asks for that the device cannot take.
            E::NoShellForFiles(_) | E::FolderRefused { .. } | E::NotWritten { .. } | E::Path(_) => {
                Blame::TaskFile
            }
            // The runner's own argument refused: every call would be refused so.
            E::InjectionRefused { .. } => Blame::Config,
            // The runner's own mistake or its own files.
            E::NoScreenshotAsked | E::NotSaved(_) | E::LocalWorkspace(_) | E::NotKept { .. } => {
                Blame::Runner
            }
            // The device: gone, stuck, lacking a tool (another device may have it),
            // unable to show its screen or to send back what the checks read.
            E::NoFreeDevice { .. }
            | E::Unanswered { .. }
            | E::Disconnected { .. }
            | E::NoResult
            | E::NoSuchTool { .. }
            | E::NoShell(_)
            | E::NoObserver { .. }
            | E::Collect { .. }
            | E::ScreenshotNotText
            | E::NoScreenshot(_)
            | E::NotBase64(_)
            | E::NotPng(_)
            | E::NotAnswering { .. }
            | E::ChecksCannotBeMade { .. }
            | E::NoShellToRead
            | E::Link(_)
            | E::Unreadable(_)
            | E::Command { .. }
            | E::NotUtf8(_)
            | E::Garbled { .. }
            | E::NoBytes { .. } => Blame::Environment,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_device_that_does_not_answer_is_the_environments() {
        let stuck = DeviceError::Unanswered {
            device: "linux-01".into(),
            waited: Duration::from_secs(60),
        };
        assert_eq!(stuck.blame(), Blame::Environment);
        assert_eq!(
            stuck.to_string(),
            "device linux-01 sent no result within 60s: it is stuck, or the command outlasts [devices] command_timeout"
        );
        assert_eq!(DeviceError::NoResult.blame(), Blame::Environment);
        let checks = DeviceError::ChecksCannotBeMade {
            device: "linux-01".into(),
            source: Box::new(DeviceError::Link("a.txt".into())),
        };
        let failure = checks.failure();
        assert_eq!(
            (failure.blame, failure.message.as_str()),
            (
                Blame::Environment,
                "the checks cannot be made on device linux-01: a.txt is a symbolic link there, and checks do not follow links"
            )
        );
    }

    #[test]
    fn the_runners_argument_refused_is_the_configs_and_one_the_agent_gives_the_agents() {
        let refused = DeviceError::InjectionRefused {
            device: "linux-01".into(),
            argument: "api_key".into(),
            error: "Authentication failed.".into(),
        };
        assert_eq!(refused.blame(), Blame::Config);
        assert_eq!(
            refused.to_string(),
            "device linux-01 refused the `api_key` the runner fills in ([devices] inject): Authentication failed."
        );
        let given = DeviceError::InjectedGiven("api_key".into());
        assert_eq!(given.blame(), Blame::Agent);
        assert_eq!(
            given.to_string(),
            "`api_key` is filled in by the runner ([devices] inject); leave it out"
        );
        let folder = DeviceError::FolderRefused {
            device: "d".into(),
            why: "blocked".into(),
        };
        assert_eq!(folder.blame(), Blame::TaskFile);
        let free = DeviceError::NoFreeDevice {
            platform: "linux".into(),
            within: Duration::from_secs(600),
            same: 1,
            connected: 2,
        };
        assert_eq!(
            (free.to_string().as_str(), free.blame()),
            (
                "no linux device was free within 600s (1 linux of 2 connected)",
                Blame::Environment
            )
        );
    }
}
