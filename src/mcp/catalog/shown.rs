//! A tool as agents see it, from its input schema: its parameters, references to
//! definitions inlined, without the arguments the runner injects.

use serde_json::{Map, Value};

use crate::tool::{ParamKind, ParamSpec, ToolSpec};

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
