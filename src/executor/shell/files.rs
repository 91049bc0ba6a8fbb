//! The file tools: `write_file`, `read_file` and `list_dir`, refusing any path that
//! leads out of the workspace.

use std::path::Path;

use serde_json::{Value, json};

use super::{NAMESPACE, ShellExecutor, str_arg};
use crate::regular_file::{FileAccessError, read_bounded, write_regular};
use crate::relpath::resolve_in;
use crate::tool::{ToolCall, ToolResult};

impl ShellExecutor {
    pub(super) async fn write_file(&mut self, command: &ToolCall) -> ToolResult {
        let args = &command.parameters;
        let rel = str_arg(args, "path").unwrap_or_default();
        let content = str_arg(args, "content").unwrap_or_default();
        let append = args.get("append").and_then(Value::as_bool).unwrap_or(false);
        let path = match resolve_in(&self.workspace, rel, false) {
            Ok(p) => p,
            Err(e) => return self.fail(command, e.to_string()),
        };
        let bytes = content.as_bytes().to_vec();
        let target = path.clone();
        let written = tokio::task::spawn_blocking(move || {
            if let Some(parent) = target.parent() {
                std::fs::create_dir_all(parent).map_err(FileAccessError::from)?;
            }
            write_regular(&target, &bytes, append)
        })
        .await;
        match written {
            Ok(Ok(())) => ToolResult::success(
                command,
                NAMESPACE,
                json!({"path": rel, "bytes": content.len(), "append": append}),
            ),
            Ok(Err(e)) => self.fail(command, format!("cannot write `{rel}`: {e}")),
            Err(e) => self.fail(command, format!("cannot write `{rel}`: {e}")),
        }
    }

    pub(super) async fn read_file(&mut self, command: &ToolCall) -> ToolResult {
        let rel = str_arg(&command.parameters, "path").unwrap_or_default();
        let path = match resolve_in(&self.workspace, rel, false) {
            Ok(p) => p,
            Err(e) => return self.fail(command, e.to_string()),
        };
        let limit = self.settings.output_limit as u64;
        let read = tokio::task::spawn_blocking(move || read_bounded(&path, limit, None)).await;
        match read {
            Ok(Ok(file)) => {
                let truncated = file.truncated();
                let content = String::from_utf8_lossy(&file.bytes).into_owned();
                ToolResult::success(
                    command,
                    NAMESPACE,
                    json!({"path": rel, "content": content, "bytes": file.size, "truncated": truncated}),
                )
            }
            Ok(Err(e)) => self.fail(command, format!("cannot read `{rel}`: {e}")),
            Err(e) => self.fail(command, format!("cannot read `{rel}`: {e}")),
        }
    }

    pub(super) async fn list_dir(&mut self, command: &ToolCall) -> ToolResult {
        let rel = str_arg(&command.parameters, "path").unwrap_or(".");
        let path = match resolve_in(&self.workspace, rel, true) {
            Ok(p) => p,
            Err(e) => return self.fail(command, e.to_string()),
        };
        match list(&path).await {
            Ok(entries) => {
                ToolResult::success(command, NAMESPACE, json!({"path": rel, "entries": entries}))
            }
            Err(e) => self.fail(command, format!("cannot list `{rel}`: {e}")),
        }
    }
}

async fn list(path: &Path) -> std::io::Result<Vec<Value>> {
    let mut dir = tokio::fs::read_dir(path).await?;
    let mut entries = Vec::new();
    while let Some(entry) = dir.next_entry().await? {
        let meta = entry.metadata().await?;
        let kind = if meta.is_dir() {
            "dir"
        } else if meta.is_symlink() {
            "symlink"
        } else {
            "file"
        };
        let name = entry.file_name().to_string_lossy().into_owned();
        entries.push((name, kind, meta.len()));
    }
    entries.sort();
    Ok(entries
        .into_iter()
        .map(|(name, kind, size)| json!({"name": name, "type": kind, "size": size}))
        .collect())
}
