//! The file tools: `write_file`, `read_file` and `list_dir`, refusing any path that
//! leads out of the workspace.

use std::path::Path;

use serde_json::{Value, json};

use super::{NAMESPACE, ShellExecutor, str_arg};
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
        let written = async {
            if let Some(parent) = path.parent() {
                tokio::fs::create_dir_all(parent).await?;
            }
            if append {
                use tokio::io::AsyncWriteExt;
                let mut f = tokio::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(&path)
                    .await?;
                f.write_all(content.as_bytes()).await?;
                f.flush().await
            } else {
                tokio::fs::write(&path, content).await
            }
        };
        match written.await {
            Ok(()) => ToolResult::success(
                command,
                NAMESPACE,
                json!({"path": rel, "bytes": content.len(), "append": append}),
            ),
            Err(e) => self.fail(command, format!("cannot write `{rel}`: {e}")),
        }
    }

    pub(super) async fn read_file(&mut self, command: &ToolCall) -> ToolResult {
        let rel = str_arg(&command.parameters, "path").unwrap_or_default();
        let path = match resolve_in(&self.workspace, rel, false) {
            Ok(p) => p,
            Err(e) => return self.fail(command, e.to_string()),
        };
        match tokio::fs::read(&path).await {
            Ok(bytes) => {
                let limit = self.settings.output_limit;
                let truncated = bytes.len() > limit;
                let kept = &bytes[..bytes.len().min(limit)];
                let content = String::from_utf8_lossy(kept).into_owned();
                ToolResult::success(
                    command,
                    NAMESPACE,
                    json!({"path": rel, "content": content, "bytes": bytes.len(), "truncated": truncated}),
                )
            }
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
