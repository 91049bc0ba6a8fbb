//! The tools an executor offers: names, parameters and their JSON types. Used to check
//! recorded actions when a task file loads and to describe the tools to an LLM agent.
//! The built-in tools are described here by hand; an MCP server's tools arrive with a
//! JSON schema per parameter (see `mcp::catalog`).

use std::borrow::Cow;

use serde::Serialize;
use serde_json::{Map, Value};

/// The JSON type a tool parameter must have.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum ParamKind {
    /// A JSON string.
    String,
    /// A JSON integer.
    Integer,
    /// A JSON boolean.
    Boolean,
    /// A JSON number (integer or fraction).
    Number,
    /// Whatever this JSON schema describes (an MCP tool's array or object parameter);
    /// only its top-level `type` is checked here, the server checks the rest.
    Schema(Value),
}

impl ParamKind {
    fn accepts(&self, value: &Value) -> bool {
        match self {
            Self::String => value.is_string(),
            Self::Integer => value.is_i64() || value.is_u64(),
            Self::Boolean => value.is_boolean(),
            Self::Number => value.is_number(),
            Self::Schema(schema) => match schema.get("type") {
                Some(Value::String(t)) => type_matches(t, value),
                Some(Value::Array(types)) => types
                    .iter()
                    .filter_map(Value::as_str)
                    .any(|t| type_matches(t, value)),
                _ => true,
            },
        }
    }

    /// The parameter's JSON schema.
    pub(crate) fn schema(&self) -> Value {
        match self {
            Self::String => serde_json::json!({"type": "string"}),
            Self::Integer => serde_json::json!({"type": "integer"}),
            Self::Boolean => serde_json::json!({"type": "boolean"}),
            Self::Number => serde_json::json!({"type": "number"}),
            Self::Schema(schema) => schema.clone(),
        }
    }
}

/// Whether `value` has the JSON schema type `name`.
fn type_matches(name: &str, value: &Value) -> bool {
    match name {
        "string" => value.is_string(),
        "integer" => value.is_i64() || value.is_u64(),
        "number" => value.is_number(),
        "boolean" => value.is_boolean(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        "null" => value.is_null(),
        _ => true,
    }
}

/// One parameter of a tool.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct ParamSpec {
    /// Parameter name.
    pub(crate) name: Cow<'static, str>,
    /// Expected JSON type.
    #[serde(rename = "type")]
    pub(crate) kind: ParamKind,
    /// Whether the call is invalid without it.
    pub(crate) required: bool,
    /// What it means, for the LLM's tool list.
    pub(crate) description: Cow<'static, str>,
}

/// A tool an executor offers: used to validate recorded actions at load time and to
/// describe the tools to an LLM agent.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct ToolSpec {
    /// Tool name as called (an MCP server's tools are `SERVER.TOOL`).
    pub(crate) name: Cow<'static, str>,
    /// What it does.
    pub(crate) description: Cow<'static, str>,
    /// Its parameters.
    pub(crate) params: Vec<ParamSpec>,
}

impl ParamSpec {
    /// A parameter of a built-in tool.
    pub(crate) fn new(
        name: &'static str,
        kind: ParamKind,
        required: bool,
        description: &'static str,
    ) -> Self {
        Self {
            name: name.into(),
            kind,
            required,
            description: description.into(),
        }
    }
}

impl ToolSpec {
    /// A built-in tool.
    pub(crate) fn new(
        name: &'static str,
        description: &'static str,
        params: Vec<ParamSpec>,
    ) -> Self {
        Self {
            name: name.into(),
            description: description.into(),
            params,
        }
    }

    /// Stands for tools not known before the run (a remote device's): in a tool list,
    /// it lets a plan call a tool the list does not name.
    pub(crate) fn any() -> Self {
        Self {
            name: "*".into(),
            description: "any tool a device offers".into(),
            params: Vec::new(),
        }
    }

    /// Whether this is [`ToolSpec::any`].
    pub(crate) fn is_any(&self) -> bool {
        self.name == "*"
    }

    /// Checks `arguments` against the parameter list: required ones present, types
    /// right, no unknown names. Returns the first problem.
    pub(crate) fn check_arguments(
        &self,
        arguments: &Map<String, Value>,
    ) -> Result<(), ArgumentError> {
        for p in &self.params {
            match arguments.get(p.name.as_ref()) {
                None | Some(Value::Null) if p.required => {
                    return Err(ArgumentError::Missing {
                        tool: self.name.to_string(),
                        parameter: p.name.to_string(),
                        kind: type_name(&p.kind),
                    });
                }
                Some(v) if !v.is_null() && !p.kind.accepts(v) => {
                    return Err(ArgumentError::WrongType {
                        tool: self.name.to_string(),
                        parameter: p.name.to_string(),
                        kind: type_name(&p.kind),
                        given: crate::text::json_type(v),
                    });
                }
                _ => {}
            }
        }
        if let Some(unknown) = arguments
            .keys()
            .find(|k| !self.params.iter().any(|p| p.name == k.as_str()))
        {
            let known: Vec<&str> = self.params.iter().map(|p| p.name.as_ref()).collect();
            return Err(ArgumentError::Unknown {
                tool: self.name.to_string(),
                parameter: unknown.clone(),
                known: known.join(", "),
            });
        }
        Ok(())
    }
}

/// Arguments a tool does not take: the agent's (or a plan's) failure, told to it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum ArgumentError {
    /// A required parameter left out.
    #[error("`{tool}` needs the parameter `{parameter}` ({kind})")]
    Missing {
        /// The tool.
        tool: String,
        /// The parameter.
        parameter: String,
        /// What it takes, in words.
        kind: String,
    },
    /// A value of the wrong type.
    #[error("parameter `{parameter}` of `{tool}` must be {kind}, not {given}")]
    WrongType {
        /// The tool.
        tool: String,
        /// The parameter.
        parameter: String,
        /// What it takes, in words.
        kind: String,
        /// The JSON type given.
        given: &'static str,
    },
    /// A parameter the tool does not have.
    #[error("`{tool}` has no parameter `{parameter}` (it takes: {known})")]
    Unknown {
        /// The tool.
        tool: String,
        /// The parameter given.
        parameter: String,
        /// The parameters it takes.
        known: String,
    },
}

fn type_name(kind: &ParamKind) -> String {
    match kind {
        ParamKind::String => "a string".into(),
        ParamKind::Integer => "an integer".into(),
        ParamKind::Boolean => "true or false".into(),
        ParamKind::Number => "a number".into(),
        ParamKind::Schema(schema) => match schema.get("type") {
            Some(t) => format!("of type {t}"),
            None => "as its schema says".into(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn spec() -> ToolSpec {
        ToolSpec {
            name: "execute_command".into(),
            description: "run".into(),
            params: vec![
                ParamSpec {
                    name: "command".into(),
                    kind: ParamKind::String,
                    required: true,
                    description: "".into(),
                },
                ParamSpec {
                    name: "timeout".into(),
                    kind: ParamKind::Integer,
                    required: false,
                    description: "".into(),
                },
            ],
        }
    }

    fn args(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn checks_arguments() {
        let s = spec();
        assert!(s.check_arguments(&args(json!({"command": "ls"}))).is_ok());
        let missing = s.check_arguments(&args(json!({}))).unwrap_err();
        assert!(matches!(missing, ArgumentError::Missing { .. }));
        let missing = missing.to_string();
        assert!(
            missing.contains("needs the parameter `command`"),
            "{missing}"
        );
        let wrong = s
            .check_arguments(&args(json!({"command": "ls", "timeout": "5"})))
            .unwrap_err()
            .to_string();
        assert!(
            wrong.contains("must be an integer, not a string"),
            "{wrong}"
        );
        let unknown = s
            .check_arguments(&args(json!({"command": "ls", "cwdir": "x"})))
            .unwrap_err()
            .to_string();
        assert!(unknown.contains("no parameter `cwdir`"), "{unknown}");
    }
}
