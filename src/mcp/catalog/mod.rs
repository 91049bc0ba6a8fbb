//! What agents see of a server's tools: each tool as `SERVER.TOOL`, its parameters from
//! its JSON schema without the arguments the runner injects, only the tools the config
//! allows, and no more of them than a prompt holds: every agent's system prompt (and
//! reply schema) lists them on every call, so a server's tools add at most
//! [`SERVER_TEXT`] to it, each description shortened, and the tools past that are left
//! out, said before the run (`Catalog::left_out`).

use serde_json::Value;

use super::config::McpServer;
use super::error::{McpError, UnfilledCredential};
use crate::tool::ToolSpec;

mod shown;

pub(crate) use shown::shown_tool;

/// The most a server's tools add to a prompt, in bytes of names, descriptions and
/// parameters.
pub(crate) const SERVER_TEXT: usize = 32 * 1024;
/// The most tools of one server an agent is offered.
pub(crate) const SERVER_TOOLS: usize = 128;
/// Characters kept of a tool's description, and of a parameter's.
const TOOL_DESCRIPTION: usize = 1000;
const PARAM_DESCRIPTION: usize = 300;

/// The tools of a server that agents see, and those it listed that were left out.
#[derive(Debug, Default)]
pub(crate) struct Catalog {
    /// The tools offered.
    pub(crate) tools: Vec<McpTool>,
    /// The names of the tools left out past the bounds, in the server's order.
    pub(crate) left_out: Vec<String>,
}

impl Catalog {
    /// What to say of the tools left out of `server`'s, if any were.
    pub(crate) fn note(&self, server: &str) -> Option<String> {
        if self.left_out.is_empty() {
            return None;
        }
        let shown: Vec<&str> = self.left_out.iter().take(10).map(String::as_str).collect();
        let more = self.left_out.len().saturating_sub(shown.len());
        Some(format!(
            "MCP server `{server}`: {} of its tools offered to agents and {} left out (a server's tools may add at most {} KiB and {SERVER_TOOLS} tools to a prompt; name the ones wanted with `tools = [...]` in its [[mcp.servers]] entry): {}{}",
            self.tools.len(),
            self.left_out.len(),
            SERVER_TEXT / 1024,
            shown.join(", "),
            if more > 0 {
                format!(", and {more} more")
            } else {
                String::new()
            }
        ))
    }
}

/// What `spec` adds to a prompt, in bytes.
fn prompt_size(spec: &ToolSpec) -> usize {
    spec.name.len()
        + spec.description.len()
        + spec
            .params
            .iter()
            .map(|p| {
                // A schema goes whole into the reply schema the model is sent.
                let schema = match &p.kind {
                    crate::tool::ParamKind::Schema(s) => s.to_string().len(),
                    _ => 0,
                };
                p.name.len() + p.description.len() + schema + 40
            })
            .sum::<usize>()
}

/// One tool of one server.
#[derive(Clone, Debug)]
pub(crate) struct McpTool {
    /// The tool's own name on its server.
    pub(crate) tool: String,
    /// As agents and recorded plans see it (`SERVER.TOOL`, injected arguments left out).
    pub(crate) spec: ToolSpec,
    /// Its input schema as agents see it.
    pub(crate) schema: Value,
    /// The injected arguments this tool takes (the server's others are not sent to it).
    pub(crate) injected: Vec<String>,
}

/// The tools of `server` that agents see, from what it listed; an allow-list that names
/// a tool the server does not offer is an error, and so is a tool that requires a
/// credential nothing injects (every call of it would be refused).
pub(crate) fn catalog(
    server: &McpServer,
    listed: &[rmcp::model::Tool],
) -> Result<Catalog, McpError> {
    if let Some(allowed) = &server.tools {
        let missing: Vec<String> = allowed
            .iter()
            .filter(|a| !listed.iter().any(|t| t.name == a.as_str()))
            .cloned()
            .collect();
        if !missing.is_empty() {
            let offered = listed.iter().map(|t| t.name.to_string()).collect();
            return Err(McpError::NotOffered { missing, offered });
        }
    }
    let tools: Vec<(McpTool, Vec<String>)> = listed
        .iter()
        .filter(|t| {
            server
                .tools
                .as_ref()
                .is_none_or(|allowed| allowed.iter().any(|a| t.name == a.as_str()))
        })
        .map(|t| tool(server, t))
        .collect();
    if let Some((t, unfilled)) = tools.iter().find(|(_, u)| !u.is_empty()) {
        return Err(unfilled_credential(
            &format!("its tool `{}`", t.tool),
            &unfilled[0],
            &format!(
                "[[mcp.servers]] inject = {{ {} = \"ENV_VAR\" }} for `{}`",
                unfilled[0], server.name
            ),
        )
        .into());
    }
    let mut catalog = Catalog::default();
    let mut text = 0;
    for (tool, _) in tools {
        let size = prompt_size(&tool.spec);
        if catalog.tools.len() < SERVER_TOOLS && text + size <= SERVER_TEXT {
            text += size;
            catalog.tools.push(tool);
        } else {
            catalog.left_out.push(tool.tool);
        }
    }
    Ok(catalog)
}

/// Why a tool that requires the credential `argument` cannot be called: nothing fills it
/// in. `key` is the config that would.
pub(crate) fn unfilled_credential(tool: &str, argument: &str, key: &str) -> UnfilledCredential {
    UnfilledCredential {
        tool: tool.to_string(),
        argument: argument.to_string(),
        key: key.to_string(),
    }
}

fn tool(server: &McpServer, t: &rmcp::model::Tool) -> (McpTool, Vec<String>) {
    let injected = |name: &str| server.inject.iter().any(|i| i.argument == name);
    let description = t.description.as_deref().or(t.title.as_deref());
    let shown = shown_tool(
        format!("{}.{}", server.name, t.name),
        description.unwrap_or_default(),
        &Value::Object(t.input_schema.as_ref().clone()),
        injected,
    );
    let mut spec = shown.spec;
    // A description is for the model to choose by: its start says what the tool is.
    spec.description = crate::text::shorten(&spec.description, TOOL_DESCRIPTION).into();
    for p in &mut spec.params {
        p.description = crate::text::shorten(&p.description, PARAM_DESCRIPTION).into();
    }
    let tool = McpTool {
        tool: t.name.to_string(),
        spec,
        schema: shown.schema,
        injected: shown.injected,
    };
    (tool, shown.unfilled)
}

#[cfg(test)]
mod tests;
