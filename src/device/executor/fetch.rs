//! Bringing the files a task's checks read home from the device, with the commands UFO's
//! Linux tool allows: `test` for what a path is, `cat` for a file's text, and `base64`
//! for a document's bytes where the device has it.

use super::{DeviceExecutor, SHELL, quoted};
use crate::device::error::DeviceError;
use crate::executor::{Fetch, FetchKind};
use crate::tool::ResultStatus;

/// What a path is on a device, when its content is not what a check reads.
enum OnDevice {
    /// Nothing there.
    Absent,
    /// A folder.
    Folder,
    /// A file (for a check that it exists).
    File,
}

impl DeviceExecutor {
    /// Brings each file the checks read from the device (from the task's folder there,
    /// or the device's own working folder) into the local workspace. A file the device
    /// says is not there is not there locally either; a folder is a folder; a link, a
    /// file that cannot be read there, a text that is not UTF-8, or a document where the
    /// device cannot send bytes (UFO's own tool cannot) is `Err`: the checks cannot be
    /// made, which is no verdict.
    pub(super) async fn fetch_all(&mut self, wanted: &[Fetch]) -> Result<(), DeviceError> {
        if self.tool(SHELL).is_none() {
            return Err(DeviceError::NoShellToRead);
        }
        let local = crate::confined::Confined::open(&self.run.local_workspace)
            .map_err(DeviceError::LocalWorkspace)?;
        let mut fetched: Vec<&str> = Vec::new();
        // Contents first, then what only needs to exist.
        let mut order: Vec<&Fetch> = wanted.iter().collect();
        order.sort_by_key(|f| f.kind == FetchKind::Exists);
        for want in order {
            if fetched.contains(&want.path.as_str()) {
                continue;
            }
            let rel = crate::relpath::RelPath::parse(&want.path, false)?;
            // `./` first: a name that begins with `-` is never read as an option.
            let at = quoted(&format!("./{}", rel.as_path().display()));
            if self.ran(&format!("test -L {at}")).await? {
                return Err(DeviceError::Link(want.path.clone()));
            }
            let content = match want.kind {
                FetchKind::Exists => None,
                FetchKind::Text => self.text_on_device(&at, &want.path).await?,
                FetchKind::Bytes => self.bytes_on_device(&at, &want.path).await?,
            };
            let kept = match content {
                Some(bytes) => local.write(&rel, &bytes, false),
                None => match self.what_is(&at, &want.path, want.kind).await? {
                    OnDevice::Absent => local.remove(&rel),
                    OnDevice::Folder => local.make_dirs(&rel),
                    OnDevice::File => local.write(&rel, b"", false),
                },
            };
            kept.map_err(|source| DeviceError::NotKept {
                path: want.path.clone(),
                source,
            })?;
            fetched.push(&want.path);
        }
        Ok(())
    }

    /// What is at `at` (quoted) when its content could not be read (or was not asked
    /// for): not there, a folder, or (for a mere existence check) a file. A file whose
    /// content was asked for and could not be read is `Err`.
    async fn what_is(
        &mut self,
        at: &str,
        path: &str,
        kind: FetchKind,
    ) -> Result<OnDevice, DeviceError> {
        if !self.ran(&format!("test -e {at}")).await? {
            return Ok(OnDevice::Absent);
        }
        if self.ran(&format!("test -d {at}")).await? {
            return Ok(OnDevice::Folder);
        }
        if kind == FetchKind::Exists {
            return Ok(OnDevice::File);
        }
        Err(DeviceError::Unreadable(path.to_string()))
    }

    /// Whether `command` ran and succeeded (`false`: it ran and did not); `Err` when the
    /// device refused or failed to run it.
    async fn ran(&mut self, command: &str) -> Result<bool, DeviceError> {
        let got = self.shell(command).await?;
        match (got.status, got.exit_code()) {
            (ResultStatus::Success, _) => Ok(true),
            (_, Some(_)) => Ok(false),
            _ => Err(DeviceError::Command {
                command: command.to_string(),
                error: got.error.unwrap_or_else(|| "it failed".into()),
            }),
        }
    }

    /// The text of the file at `at` (quoted) on the device; `None` when `cat` ran and
    /// could not read it (see [`Self::what_is`]).
    async fn text_on_device(
        &mut self,
        at: &str,
        path: &str,
    ) -> Result<Option<Vec<u8>>, DeviceError> {
        let command = format!("cat {at}");
        let got = self.shell(&command).await?;
        match (got.status, got.exit_code()) {
            (ResultStatus::Success, _) => {
                let text = got.stdout().unwrap_or_default();
                // UFO's server decodes output with `errors="replace"`: a file that is not
                // UTF-8 comes back with U+FFFD, and is not what the device holds.
                if text.contains('\u{fffd}') {
                    return Err(DeviceError::NotUtf8(path.to_string()));
                }
                Ok(Some(text.as_bytes().to_vec()))
            }
            (_, Some(_)) => Ok(None),
            _ => Err(DeviceError::Command {
                command,
                error: got.error.unwrap_or_else(|| "it failed".into()),
            }),
        }
    }

    /// The bytes of the file at `at` (quoted) on the device, through `base64`; a text
    /// document (`.txt`, `.csv`, `.md`, `.tsv`) through `cat` where `base64` is refused.
    /// `None` when it is not there (or not a file).
    async fn bytes_on_device(
        &mut self,
        at: &str,
        path: &str,
    ) -> Result<Option<Vec<u8>>, DeviceError> {
        use base64::Engine;
        let command = format!("base64 -w0 {at}");
        let got = self.shell(&command).await?;
        match (got.status, got.exit_code()) {
            (ResultStatus::Success, _) => {
                let text = got.stdout().unwrap_or_default().trim();
                base64::engine::general_purpose::STANDARD
                    .decode(text)
                    .map(Some)
                    .map_err(|source| DeviceError::Garbled {
                        path: path.to_string(),
                        source,
                    })
            }
            (_, Some(_)) => Ok(None),
            _ => {
                let texty = [".txt", ".csv", ".md", ".tsv", ".text"]
                    .iter()
                    .any(|end| path.to_ascii_lowercase().ends_with(end));
                if texty {
                    return self.text_on_device(at, path).await;
                }
                // A document the task did not make is the task's failure, not a check
                // that cannot be made.
                if !self.ran(&format!("test -e {at}")).await? {
                    return Ok(None);
                }
                Err(DeviceError::NoBytes {
                    command,
                    error: got.error.unwrap_or_else(|| "it failed".into()),
                    path: path.to_string(),
                })
            }
        }
    }
}
