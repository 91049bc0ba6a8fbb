//! The file tools: `write_file`, `read_file` and `list_dir`, opened beneath the workspace
//! with the task's rights (`confined`): no path leads out of it, through `..` or a link.

use std::sync::Arc;

use serde_json::{Value, json};

use super::{NAMESPACE, ShellExecutor, str_arg};
use crate::confined::Confined;
use crate::regular_file::FileAccessError;
use crate::relpath::RelPath;
use crate::tool::{ToolCall, ToolResult};

/// The most entries `list_dir` gives; it counts the rest.
pub(crate) const LIST_DIR_MAX: usize = 1000;

/// Why a file tool (or a command's `cwd`) could not use the workspace.
#[derive(Debug, thiserror::Error)]
pub(super) enum WorkspaceFileError {
    /// The workspace itself cannot be opened: the runner's.
    #[error("cannot open the workspace: {0}")]
    NoWorkspace(FileAccessError),
    /// A path that leads out of the workspace or is not a path: the agent's.
    #[error("{0}")]
    Path(#[from] crate::relpath::PathError),
    /// A `cwd` that is not a folder of the workspace: the agent's.
    #[error("cwd `{dir}` is not a folder of the workspace: {source}")]
    NotAFolder {
        /// The `cwd` given.
        dir: String,
        /// Why.
        source: FileAccessError,
    },
    /// The file is not there, not readable, a link...: the agent's.
    #[error("{0}")]
    Access(FileAccessError),
    /// The thread doing it went away: the runner's.
    #[error("{0}")]
    Stopped(tokio::task::JoinError),
}

impl crate::tool::Blamed for WorkspaceFileError {
    fn blame(&self) -> crate::tool::Blame {
        match self {
            Self::NoWorkspace(_) | Self::Stopped(_) => crate::tool::Blame::Runner,
            Self::Path(_) | Self::NotAFolder { .. } | Self::Access(_) => crate::tool::Blame::Agent,
        }
    }
}

impl ShellExecutor {
    /// The workspace's handle, opened at its first use.
    pub(super) fn confined(&mut self) -> Result<Arc<Confined>, WorkspaceFileError> {
        if let Some(handle) = &self.confined {
            return Ok(handle.clone());
        }
        let handle = Confined::open(&self.workspace)
            .map(Arc::new)
            .map_err(WorkspaceFileError::NoWorkspace)?;
        self.confined = Some(handle.clone());
        Ok(handle)
    }

    /// The folder `dir` of the workspace (for a command's `cwd`), reached through no link.
    pub(super) fn folder_in_workspace(
        &mut self,
        dir: &str,
    ) -> Result<std::path::PathBuf, WorkspaceFileError> {
        let rel = RelPath::parse(dir, true)?;
        self.confined()?
            .check_folder(&rel)
            .map_err(|source| WorkspaceFileError::NotAFolder {
                dir: dir.to_string(),
                source,
            })?;
        Ok(self.workspace.join(rel.as_path()))
    }

    /// Runs `op` on the workspace's handle on a blocking thread.
    async fn on_workspace<T: Send + 'static>(
        &mut self,
        op: impl FnOnce(&Confined) -> Result<T, FileAccessError> + Send + 'static,
    ) -> Result<T, WorkspaceFileError> {
        let handle = self.confined()?;
        match tokio::task::spawn_blocking(move || op(&handle)).await {
            Ok(done) => done.map_err(WorkspaceFileError::Access),
            Err(e) => Err(WorkspaceFileError::Stopped(e)),
        }
    }

    /// A file tool (or a `cwd`) that failed, saying `what` it did when given: the
    /// agent's failure, or (the workspace itself broken) the executor's.
    pub(super) fn file_failed(
        &mut self,
        command: &ToolCall,
        e: WorkspaceFileError,
        what: Option<String>,
    ) -> ToolResult {
        use crate::tool::Blamed;
        let mut failure = e.failure();
        if let Some(what) = what {
            failure = failure.context(|e| format!("{what}: {e}"));
        }
        if failure.blame == crate::tool::Blame::Agent {
            return self.fail(command, failure.message);
        }
        self.broke(command, failure)
    }

    pub(super) async fn write_file(&mut self, command: &ToolCall) -> ToolResult {
        let args = &command.parameters;
        let text = str_arg(args, "path").unwrap_or_default();
        let content = str_arg(args, "content").unwrap_or_default();
        let append = args.get("append").and_then(Value::as_bool).unwrap_or(false);
        let rel = match RelPath::parse(text, false) {
            Ok(rel) => rel,
            Err(e) => return self.fail(command, e.to_string()),
        };
        let bytes = content.as_bytes().to_vec();
        match self
            .on_workspace(move |ws| ws.write(&rel, &bytes, append))
            .await
        {
            Ok(()) => ToolResult::success(
                command,
                NAMESPACE,
                json!({"path": text, "bytes": content.len(), "append": append}),
            ),
            Err(e) => self.file_failed(command, e, Some(format!("cannot write `{text}`"))),
        }
    }

    pub(super) async fn read_file(&mut self, command: &ToolCall) -> ToolResult {
        let text = str_arg(&command.parameters, "path").unwrap_or_default();
        let rel = match RelPath::parse(text, false) {
            Ok(rel) => rel,
            Err(e) => return self.fail(command, e.to_string()),
        };
        let limit = self.settings.output_limit as u64;
        match self
            .on_workspace(move |ws| ws.read(&rel, limit, None))
            .await
        {
            Ok(file) => {
                let truncated = file.truncated();
                let content = String::from_utf8_lossy(&file.bytes).into_owned();
                ToolResult::success(
                    command,
                    NAMESPACE,
                    json!({"path": text, "content": content, "bytes": file.size, "truncated": truncated}),
                )
            }
            Err(e) => self.file_failed(command, e, Some(format!("cannot read `{text}`"))),
        }
    }

    pub(super) async fn list_dir(&mut self, command: &ToolCall) -> ToolResult {
        let text = str_arg(&command.parameters, "path").unwrap_or(".");
        let rel = match RelPath::parse(text, true) {
            Ok(rel) => rel,
            Err(e) => return self.fail(command, e.to_string()),
        };
        match self
            .on_workspace(move |ws| ws.list(&rel, LIST_DIR_MAX))
            .await
        {
            Ok(listing) => {
                let entries: Vec<Value> = listing
                    .entries
                    .iter()
                    .map(|e| json!({"name": e.path.to_string(), "type": e.kind.name(), "size": e.size}))
                    .collect();
                let mut result = json!({"path": text, "entries": entries});
                if listing.more > 0 {
                    result["more"] = json!(listing.more);
                    result["note"] = json!(format!(
                        "the first {LIST_DIR_MAX} entries by name; {} more not listed",
                        listing.more
                    ));
                }
                ToolResult::success(command, NAMESPACE, result)
            }
            Err(e) => self.file_failed(command, e, Some(format!("cannot list `{text}`"))),
        }
    }
}
