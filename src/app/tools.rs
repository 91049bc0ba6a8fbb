//! `ufo-batch tools`: every tool an agent would see, where it comes from and its
//! parameters: the built-in shell and desktop tools, then each MCP server's (started or
//! connected to as a run would, so this is how a user checks the configuration).

use std::fmt::Write;

use serde_json::{Value, json};

use super::stdout::{Form, print};
use crate::batch::BatchError;
use crate::cli::ToolsArgs;
use crate::config::{ConfigError, read_config};
use crate::error::Error;
use crate::mcp::{McpHub, servers};
use crate::tool::ToolSpec;

/// Prints the tools.
pub(super) fn tools(args: &ToolsArgs) -> Result<u8, Error> {
    let mcp = start_mcp(args.config.clone())?;
    let mut listed: Vec<(String, &ToolSpec, Value)> = Vec::new();
    for tool in crate::executor::shell_tools() {
        listed.push(("built in: shell".into(), tool, schema(tool)));
    }
    for tool in crate::desktop::tools::desktop_tools() {
        listed.push(("built in: desktop tasks".into(), tool, schema(tool)));
    }
    for tool in crate::desktop::office::office_tools() {
        let source = "built in: the Office API (Word, Excel, PowerPoint documents)";
        listed.push((source.into(), tool, schema(tool)));
    }
    if let Some((hub, _)) = &mcp {
        for (server, tool) in hub.tools() {
            let source = format!("MCP server `{}` ({})", server.name, server.kind());
            listed.push((source, &tool.spec, tool.schema.clone()));
        }
    }
    if args.json {
        let all: Vec<Value> = listed
            .iter()
            .map(|(source, t, schema)| {
                json!({"name": t.name, "source": source, "description": t.description, "schema": schema})
            })
            .collect();
        let json = serde_json::to_string_pretty(&all).unwrap_or_default();
        print(&format!("{json}\n"), Form::Json)?;
    } else {
        print(&text(&listed), Form::Text)?;
    }
    Ok(0)
}

/// The tools grouped by source, one line each with its parameters, then its description.
fn text(listed: &[(String, &ToolSpec, Value)]) -> String {
    let mut out = String::new();
    let mut last = "";
    for (source, t, _) in listed {
        if source != last {
            let count = listed.iter().filter(|(s, _, _)| s == source).count();
            let _ = writeln!(
                out,
                "{}{source}: {}",
                if last.is_empty() { "" } else { "\n" },
                crate::text::plural(count, "tool")
            );
            last = source;
        }
        let params: Vec<String> = t
            .params
            .iter()
            .map(|p| {
                let kind = p.kind.schema();
                let kind = match kind.get("type").and_then(Value::as_str) {
                    Some(t) if kind.as_object().is_some_and(|o| o.len() == 1) => t.to_string(),
                    _ => kind.to_string(),
                };
                format!("{}{}: {kind}", p.name, if p.required { "" } else { "?" })
            })
            .collect();
        let _ = writeln!(out, "  {}({})", t.name, params.join(", "));
        if !t.description.is_empty() {
            let _ = writeln!(
                out,
                "      {}",
                crate::text::first_line(&t.description, 200)
            );
        }
    }
    out
}

/// A tool's parameters as one JSON schema.
fn schema(t: &ToolSpec) -> Value {
    let properties: serde_json::Map<String, Value> = t
        .params
        .iter()
        .map(|p| {
            let mut s = p.kind.schema();
            if !p.description.is_empty() && s.get("description").is_none() {
                s["description"] = p.description.as_ref().into();
            }
            (p.name.to_string(), s)
        })
        .collect();
    let required: Vec<&str> = t
        .params
        .iter()
        .filter(|p| p.required)
        .map(|p| p.name.as_ref())
        .collect();
    json!({"type": "object", "properties": properties, "required": required})
}

/// The MCP servers of the config file (`path`, or `ufo-batch.toml`), started or
/// connected to, with the runtime they live on; none when it names no server.
pub(super) fn start_mcp(
    path: Option<std::path::PathBuf>,
) -> Result<Option<(McpHub, tokio::runtime::Runtime)>, Error> {
    let (file, _) = read_config(path)?;
    let configured = servers(file.mcp, |v| std::env::var(v).ok())
        .map_err(|e| ConfigError::Invalid(e.to_string()))?;
    if configured.is_empty() {
        return Ok(None);
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| Error::internal(format!("cannot start the async runtime: {e}")))?;
    // A stdio server is started confined as a run's tasks would start it: in the
    // config's sandbox (`[sandbox] mode`, else the best there is), with its limits.
    let mode = match file.sandbox.mode.as_deref() {
        Some(text) => text
            .parse()
            .map_err(|e| ConfigError::Invalid(format!("[sandbox] mode: {e}")))?,
        None => crate::executor::sandbox::SandboxMode::Auto,
    };
    let shim = std::env::current_exe().ok();
    let (sandbox, _) = crate::executor::sandbox::resolve(mode, shim.as_deref())
        .map_err(|e| BatchError::Refused(e.to_string()))?;
    let listing = crate::executor::ShellSettings {
        sandbox,
        limits: crate::config::resource_limits_of(&file.sandbox)?,
        ..Default::default()
    };
    let hub = runtime
        .block_on(McpHub::start(&configured, 1, &listing))
        .map_err(|e| BatchError::Refused(e.to_string()))?;
    Ok(Some((hub, runtime)))
}
