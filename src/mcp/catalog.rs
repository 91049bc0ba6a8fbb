//! What agents see of a server's tools: each tool as `SERVER.TOOL`, its parameters from
//! its JSON schema without the arguments the runner injects, only the tools the config
//! allows, and no more of them than a prompt holds: every agent's system prompt (and
//! reply schema) lists them on every call, so a server's tools add at most
//! [`SERVER_TEXT`] to it, each description shortened, and the tools past that are left
//! out, said before the run (`Catalog::left_out`).

use serde_json::{Map, Value};

use super::config::McpServer;
use super::error::{McpError, UnfilledCredential};
use crate::tool::{ParamKind, ParamSpec, ToolSpec};

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

/// A tool as agents see it, from its input schema: the arguments `injected` names are
/// left out of it (and listed apart, as the tool takes them).
pub(crate) struct ShownTool {
    /// Name, description and parameters.
    pub(crate) spec: ToolSpec,
    /// The input schema without the injected arguments.
    pub(crate) schema: Value,
    /// The injected arguments this tool takes.
    pub(crate) injected: Vec<String>,
    /// The arguments it requires that are the runner's to fill in (a credential, as
    /// UFO's `api_key`) and that nothing injects: every call would be refused.
    pub(crate) unfilled: Vec<String>,
}

/// `name` with `description` and the parameters of `input_schema`, less those
/// `injected` names.
pub(crate) fn shown_tool(
    name: String,
    description: &str,
    input_schema: &Value,
    injected: impl Fn(&str) -> bool,
) -> ShownTool {
    let mut schema = match input_schema {
        Value::Object(o) => Value::Object(o.clone()),
        _ => serde_json::json!({"type": "object", "properties": {}}),
    };
    let takes: Vec<String> = schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|p| p.keys().filter(|k| injected(k)).cloned().collect())
        .unwrap_or_default();
    if let Some(props) = schema.get_mut("properties").and_then(Value::as_object_mut) {
        props.retain(|k, _| !injected(k));
    }
    if let Some(required) = schema.get_mut("required").and_then(Value::as_array_mut) {
        required.retain(|r| r.as_str().is_none_or(|r| !injected(r)));
    }
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let unfilled = required
        .iter()
        .filter(|r| crate::tool::is_credential(r))
        .map(|r| r.to_string())
        .collect();
    let empty = Map::new();
    let props = schema
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let defs = schema
        .get("$defs")
        .or_else(|| schema.get("definitions"))
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let params = props
        .iter()
        .map(|(name, p)| ParamSpec {
            name: name.clone().into(),
            // A parameter's schema is shown on its own (in the prompt, in the reply
            // schema), where `#/$defs/...` would point nowhere: references are inlined.
            kind: kind_of(&inline_refs(p, defs, 0)),
            required: required.contains(&name.as_str()),
            description: p
                .get("description")
                .or_else(|| p.get("title"))
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
                .into(),
            // The server checks its own schema's bounds.
            bound: None,
        })
        .collect();
    ShownTool {
        spec: ToolSpec {
            limit: None,
            name: name.into(),
            description: description.trim().to_string().into(),
            params,
        },
        schema,
        injected: takes,
        unfilled,
    }
}

/// How deep references are followed (a recursive type stops there, as any value).
const MAX_REF_DEPTH: usize = 8;

/// `schema` with each `{"$ref": "#/$defs/NAME"}` (or `#/definitions/NAME`) replaced by
/// that definition.
fn inline_refs(schema: &Value, defs: &Map<String, Value>, depth: usize) -> Value {
    match schema {
        Value::Object(o) => {
            if let Some(target) = o.get("$ref").and_then(Value::as_str) {
                let name = target
                    .strip_prefix("#/$defs/")
                    .or_else(|| target.strip_prefix("#/definitions/"));
                return match name.and_then(|n| defs.get(n)) {
                    Some(def) if depth < MAX_REF_DEPTH => inline_refs(def, defs, depth + 1),
                    _ => Value::Object(Map::new()),
                };
            }
            Value::Object(
                o.iter()
                    .map(|(k, v)| (k.clone(), inline_refs(v, defs, depth)))
                    .collect(),
            )
        }
        Value::Array(items) => {
            Value::Array(items.iter().map(|v| inline_refs(v, defs, depth)).collect())
        }
        other => other.clone(),
    }
}

/// A parameter's kind from its schema: a plain JSON type when it is one, else the schema.
fn kind_of(schema: &Value) -> ParamKind {
    let plain = schema.as_object().is_some_and(|o| {
        o.keys()
            .all(|k| ["type", "description", "title", "default"].contains(&k.as_str()))
    });
    match (schema.get("type").and_then(Value::as_str), plain) {
        (Some("string"), true) => ParamKind::String,
        (Some("integer"), true) => ParamKind::Integer,
        (Some("number"), true) => ParamKind::Number,
        (Some("boolean"), true) => ParamKind::Boolean,
        _ => ParamKind::Schema(schema.clone()),
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use serde_json::json;

    use super::*;
    use crate::mcp::config::{Injected, Transport};

    fn server(tools: Option<Vec<String>>) -> McpServer {
        McpServer {
            name: "linux".into(),
            transport: Transport::Http {
                url: "http://127.0.0.1:1/mcp".into(),
                headers: vec![],
            },
            timeout: Duration::from_secs(5),
            tools,
            inject: vec![Injected {
                argument: "api_key".into(),
                value: "secret-value".into(),
            }],
        }
    }

    fn listed() -> Vec<rmcp::model::Tool> {
        let schema = json!({
            "type": "object",
            "properties": {
                "command": {"type": "string", "description": "the command"},
                "api_key": {"type": "string"},
                "timeout": {"type": "integer", "default": 30},
                "env": {"type": "object", "additionalProperties": {"type": "string"}}
            },
            "required": ["command", "api_key"]
        });
        let info = json!({"type": "object", "properties": {"api_key": {"type": "string"}}, "required": ["api_key"]});
        vec![
            rmcp::model::Tool::new(
                "execute_command",
                "Run a command.",
                schema.as_object().unwrap().clone(),
            ),
            rmcp::model::Tool::new(
                "get_system_info",
                "What the machine is.",
                info.as_object().unwrap().clone(),
            ),
        ]
    }

    #[test]
    fn a_server_listing_thousands_of_tools_adds_a_bounded_text_and_names_what_it_left_out() {
        let schema = json!({"type": "object", "properties": {"q": {"type": "string", "description": "d".repeat(2000)}}});
        let many: Vec<rmcp::model::Tool> = (0..3000)
            .map(|i| {
                rmcp::model::Tool::new(
                    format!("tool{i}"),
                    "x".repeat(1024),
                    schema.as_object().unwrap().clone(),
                )
            })
            .collect();
        let mut bare = server(None);
        bare.inject.clear();
        let c = catalog(&bare, &many).unwrap();
        let text: usize = c.tools.iter().map(|t| prompt_size(&t.spec)).sum();
        assert!(text <= SERVER_TEXT, "{text}");
        assert!(!c.tools.is_empty() && c.tools.len() <= SERVER_TOOLS);
        assert_eq!(c.tools.len() + c.left_out.len(), 3000);
        assert!(c.tools[0].spec.params[0].description.chars().count() <= PARAM_DESCRIPTION);
        let note = c.note("big").unwrap();
        assert!(
            note.contains(&format!(
                "{} of its tools offered to agents and {} left out",
                c.tools.len(),
                c.left_out.len()
            )),
            "{note}"
        );
        assert!(note.contains(&format!("tool{}, ", c.tools.len())), "{note}");
        assert!(note.len() < 1000, "{note}");
    }

    #[test]
    fn injected_arguments_are_hidden_and_names_carry_the_server() {
        let tools = catalog(&server(None), &listed()).unwrap().tools;
        let exec = &tools[0];
        assert_eq!(exec.spec.name, "linux.execute_command");
        assert_eq!(exec.tool, "execute_command");
        let names: Vec<&str> = exec.spec.params.iter().map(|p| p.name.as_ref()).collect();
        assert_eq!(names, ["command", "timeout", "env"]);
        assert!(exec.spec.params[0].required && !exec.spec.params[1].required);
        assert_eq!(exec.spec.params[1].kind, ParamKind::Integer);
        assert!(matches!(exec.spec.params[2].kind, ParamKind::Schema(_)));
        assert_eq!(exec.schema["required"], json!(["command"]));
        assert!(!exec.schema.to_string().contains("api_key"));
        assert!(tools[1].spec.params.is_empty());
        // A call with the key is refused: the model cannot give it.
        let args = json!({"command": "ls", "api_key": "x"});
        assert!(
            exec.spec
                .check_arguments(args.as_object().unwrap())
                .is_err()
        );
    }

    #[test]
    fn the_allow_list_keeps_only_what_it_names_and_names_what_is_missing() {
        let tools = catalog(&server(Some(vec!["get_system_info".into()])), &listed())
            .unwrap()
            .tools;
        assert_eq!(tools.len(), 1);
        let e = catalog(&server(Some(vec!["nope".into()])), &listed())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("`tools` names `nope`, which it does not offer (it has: execute_command, get_system_info)"),
            "{e}"
        );
    }

    #[test]
    fn a_required_credential_nothing_injects_is_the_configs_failure() {
        use crate::tool::{Blame, Blamed};
        let mut bare = server(None);
        bare.inject.clear();
        let e = catalog(&bare, &listed()).unwrap_err();
        assert_eq!(e.blame(), Blame::Config);
        assert_eq!(
            e.to_string(),
            "its tool `execute_command` requires `api_key`, a credential the runner fills in, and nothing does: add [[mcp.servers]] inject = { api_key = \"ENV_VAR\" } for `linux` (the variable holding it) to the config"
        );
    }

    #[test]
    fn references_to_definitions_are_inlined_in_parameters() {
        let schema = json!({
            "type": "object",
            "$defs": {
                "Point": {"type": "object", "properties": {"x": {"type": "number"}, "next": {"$ref": "#/$defs/Point"}}}
            },
            "properties": {"at": {"$ref": "#/$defs/Point"}, "path": {"type": "array", "items": {"$ref": "#/$defs/Point"}}},
            "required": ["at"]
        });
        let go = [rmcp::model::Tool::new(
            "go",
            "Go.",
            schema.as_object().unwrap().clone(),
        )];
        let tools = catalog(&server(None), &go).unwrap().tools;
        let ParamKind::Schema(at) = &tools[0].spec.params[0].kind else {
            panic!("{:?}", tools[0].spec.params[0].kind);
        };
        assert_eq!(at["properties"]["x"], json!({"type": "number"}));
        assert_eq!(
            at["properties"]["next"]["properties"]["x"],
            json!({"type": "number"})
        );
        assert!(!at.to_string().contains("$ref"), "{at}");
        let ParamKind::Schema(path) = &tools[0].spec.params[1].kind else {
            panic!()
        };
        assert_eq!(path["items"]["type"], "object");
        assert!(
            tools[0].injected.is_empty(),
            "the tool takes no api_key: none is sent"
        );
        let exec = catalog(&server(None), &listed()).unwrap().tools;
        assert_eq!(exec[0].injected, ["api_key"]);
    }
}
