//! A device's tools, from what its `list_tools` meta tool answered: a list of UFO's
//! `MCPToolInfo` (`../ufo/aip/messages.py`: `tool_key, tool_name, title, namespace,
//! tool_type, description, input_schema, output_schema, meta, annotations`), each as
//! agents see it (the arguments the runner injects left out), and the route a call of it
//! takes on the device (which agent's tool set has it).

use serde_json::Value;

use super::protocol::Route;
use crate::mcp::shown_tool;
use crate::tool::{ToolSpec, ToolType};

/// One tool of a device.
#[derive(Clone, Debug)]
pub(crate) struct DeviceTool {
    /// As agents and plans see it.
    pub(crate) spec: ToolSpec,
    /// Action or data collection (a command must say which).
    pub(crate) tool_type: ToolType,
    /// The agent whose tool set has it on the device.
    pub(crate) route: Route,
    /// The injected arguments it takes.
    pub(crate) injected: Vec<String>,
    /// The credentials it requires that nothing injects (see `mcp::unfilled_credential`).
    pub(crate) unfilled: Vec<String>,
}

/// The tools `listed` (a `list_tools` result) offers through the agent of `route`;
/// `injected` names the arguments the runner fills in. Meta tools (`list_tools`,
/// `nop`) are left out.
pub(crate) fn from_listing(
    listed: &Value,
    route: &Route,
    injected: &dyn Fn(&str) -> bool,
) -> Vec<DeviceTool> {
    let items = match listed {
        Value::Array(items) => items.clone(),
        // A client that sends the tool list as JSON text.
        Value::String(text) => serde_json::from_str::<Vec<Value>>(text).unwrap_or_default(),
        _ => Vec::new(),
    };
    items
        .iter()
        .filter_map(|t| {
            let name = t.get("tool_name").and_then(Value::as_str)?;
            if matches!(name, "list_tools" | "nop") {
                return None;
            }
            let tool_type = match t.get("tool_type").and_then(Value::as_str) {
                Some("data_collection") => ToolType::DataCollection,
                _ => ToolType::Action,
            };
            let description = t
                .get("description")
                .or_else(|| t.get("title"))
                .and_then(Value::as_str)
                .unwrap_or_default();
            // `input_schema: Optional[Dict[str, Any]] = None` (aip/messages.py, MCPToolInfo).
            let schema = t.get("input_schema").cloned().unwrap_or(Value::Null);
            let shown = shown_tool(name.to_string(), description, &schema, injected);
            Some(DeviceTool {
                spec: shown.spec,
                tool_type,
                route: route.clone(),
                injected: shown.injected,
                unfilled: shown.unfilled,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn ufos_linux_tools_are_read_with_the_key_left_out() {
        let listed = json!([
            {"tool_key": "action::execute_command", "tool_name": "execute_command", "namespace": "BashExecutor",
             "tool_type": "action", "description": "Run a command.",
             "input_schema": {"type": "object", "properties": {"command": {"type": "string"}, "api_key": {"type": "string"},
                             "timeout": {"type": "integer", "default": 30}}, "required": ["command", "api_key"]}},
            {"tool_name": "get_system_info", "tool_type": "data_collection", "input_schema": {"properties": {"api_key": {"type": "string"}}, "required": ["api_key"]}},
            {"tool_name": "list_tools", "tool_type": "action"}
        ]);
        let route = Route {
            agent_name: "LinuxAgent".into(),
            ..Route::default()
        };
        let tools = from_listing(&listed, &route, &|a| a == "api_key");
        assert_eq!(tools.len(), 2);
        let exec = &tools[0];
        assert_eq!(exec.spec.name, "execute_command");
        assert_eq!(exec.injected, ["api_key"]);
        assert!(exec.spec.params.iter().all(|p| p.name != "api_key"));
        assert!(
            exec.spec
                .params
                .iter()
                .any(|p| p.name == "command" && p.required)
        );
        assert_eq!(tools[1].tool_type, ToolType::DataCollection);
        assert_eq!(tools[1].route.agent_name, "LinuxAgent");
        // With nothing injected, the key is a credential nobody fills in.
        let bare = from_listing(&listed, &route, &|_| false);
        assert_eq!(bare[0].unfilled, ["api_key"]);
        assert_eq!(bare[1].unfilled, ["api_key"]);
    }
}
