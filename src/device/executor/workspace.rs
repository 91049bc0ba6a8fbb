//! The task's folder on a Linux device: made afresh with the device's `execute_command`
//! before the task starts, its `files` written there, its commands run there; removed
//! when the task ends (`Executor::shutdown`). UFO's own Linux tool refuses to make
//! folders (it runs only allow-listed read-only commands): then the task runs in the
//! device's own working folder, and a task with files to write cannot run there.
//!
//! A call's paths follow the rule the local shell does (`relpath`): a `cwd` is relative
//! to the task's folder and stays in it (sent as the absolute path UFO's server takes),
//! and the bounds the runner's own tools of the same name have (an Office call's sizes,
//! `save_as`'s names) hold whatever machine carries the call out.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{Map, Value};

use super::{DeviceExecutor, SHELL, quoted};
use crate::device::error::DeviceError;
use crate::device::fleet::Platform;
use crate::device::tools::DeviceTool;
use crate::relpath::RelPath;
use crate::tool::{Blamed, Failure, ResultStatus};

impl DeviceExecutor {
    /// Makes the task's folder on a Linux device and writes `files` into it; says how
    /// it went.
    pub(crate) async fn make_workspace(
        &mut self,
        files: &BTreeMap<String, String>,
    ) -> Result<Option<String>, Failure> {
        if self.lease.device.platform != Platform::Linux || self.tool(SHELL).is_none() {
            if !files.is_empty() {
                // Files the task file asks for that the device cannot take: the task
                // file's.
                return Err(DeviceError::NoShellForFiles(self.device().to_string()).failure());
            }
            return Ok(None);
        }
        let dir = format!("/tmp/ufo-batch/{}", self.run.session_id);
        if let Some(refused) = self.make_folder(&dir, files.is_empty()).await? {
            return Ok(Some(refused));
        }
        self.workspace = Some(dir.clone());
        for (path, content) in files {
            self.write_file(path, content).await?;
        }
        Ok(Some(format!("the task's folder on the device: {dir}")))
    }

    /// Makes `dir` afresh on the device. `Ok(Some(note))` when the device refused to, and
    /// the task, which has no files (`no_files`), runs in the device's own working folder.
    async fn make_folder(&mut self, dir: &str, no_files: bool) -> Result<Option<String>, Failure> {
        // What an earlier invocation left (best effort: the folder is made fresh below).
        let _ = self
            .shell(&format!("rm -rf -- {}", quoted(dir)))
            .await
            .map_err(|e| e.failure())?;
        if let Some(fault) = self.fault.clone() {
            return Err(fault);
        }
        let made = self
            .shell(&format!("mkdir -p -- {}", quoted(dir)))
            .await
            .map_err(|e| e.failure())?;
        if let Some(fault) = self.fault.clone() {
            return Err(fault);
        }
        if self.unanswered {
            return Err(DeviceError::NotAnswering {
                device: self.device().to_string(),
                error: made.error.unwrap_or_default(),
            }
            .failure());
        }
        if made.status == ResultStatus::Success {
            return Ok(None);
        }
        let why = made.error.unwrap_or_default();
        if !no_files {
            return Err(DeviceError::FolderRefused {
                device: self.device().to_string(),
                why,
            }
            .failure());
        }
        Ok(Some(format!(
            "device {} refused to make the task's folder ({why}): the task runs in the device's own working folder",
            self.device()
        )))
    }

    /// `given` with its paths as the task's: why the call is refused, when it is (the
    /// agent's failure, as the same call is locally).
    pub(super) fn task_paths(
        &self,
        tool: &DeviceTool,
        mut given: Map<String, Value>,
    ) -> Result<Map<String, Value>, String> {
        // The device checks a call's shape against its own tools; the runner's bounds
        // (a call's size, an Office call's cells and names) hold here as they do locally.
        crate::tool::check_size(&tool.spec.name, &given).map_err(|e| e.to_string())?;
        if let Some(ours) = crate::desktop::office::office_tools()
            .iter()
            .find(|t| t.name == tool.spec.name)
        {
            ours.check_bounds(&given).map_err(|e| e.to_string())?;
        }
        if tool.spec.name != SHELL {
            return Ok(given);
        }
        let Some(cwd) = given.get("cwd") else {
            return Ok(given);
        };
        let Some(text) = cwd.as_str() else {
            return Err(format!(
                "cwd must be a string, not {}",
                crate::text::json_type(cwd)
            ));
        };
        let rel = RelPath::parse(text, true).map_err(|e| format!("cwd: {e}"))?;
        match &self.workspace {
            Some(folder) => {
                let mut path = folder.clone();
                for name in rel.names() {
                    path.push('/');
                    path.push_str(&name.to_string_lossy());
                }
                given.insert("cwd".into(), Value::String(path));
            }
            // The task runs in the device's own working folder, the one a call without a
            // cwd gets.
            None if rel.is_root() => {
                given.remove("cwd");
            }
            None => {
                return Err(format!(
                    "cwd `{}`: device {} runs this task in its own working folder (it made no folder for the task), so a command runs there, with no cwd",
                    crate::text::shorten(text, 120),
                    self.device()
                ));
            }
        }
        Ok(given)
    }

    /// Writes the task's file `path` (relative to its folder) with `content`.
    async fn write_file(&mut self, path: &str, content: &str) -> Result<(), Failure> {
        use base64::Engine;
        let encoded = base64::engine::general_purpose::STANDARD.encode(content);
        let parent = Path::new(path)
            .parent()
            .map(|p| p.display().to_string())
            .unwrap_or_default();
        let mkdir = if parent.is_empty() {
            String::new()
        } else {
            format!("mkdir -p -- {} && ", quoted(&parent))
        };
        let written = self
            .shell(&format!(
                "{mkdir}printf %s {} | base64 -d > {}",
                quoted(&encoded),
                quoted(path)
            ))
            .await
            .map_err(|e| e.failure())?;
        if written.status == ResultStatus::Success {
            return Ok(());
        }
        let why = DeviceError::NotWritten {
            path: path.to_string(),
            device: self.device().to_string(),
            error: written.error.unwrap_or_default(),
        };
        // The device broke (the fault says whose), or it refused the file.
        Err(match &self.fault {
            Some(fault) => Failure::new(fault.blame, why.to_string()),
            None => why.failure(),
        })
    }
}
