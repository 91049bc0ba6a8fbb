//! The tools an executor offers: names, parameters and their JSON types. Used to check
//! recorded actions when a task file loads and to describe the tools to an LLM agent.
//! The built-in tools are described here by hand; an MCP server's tools arrive with a
//! JSON schema per parameter (see `mcp::catalog`).

use std::borrow::Cow;

use serde::Serialize;
use serde_json::{Map, Value};

mod bound;
mod error;

pub(crate) use bound::{Bound, Limit};
pub(crate) use error::ArgumentError;
use error::type_name;

/// The JSON type a tool parameter must have.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum ParamKind {
    /// A JSON string.
    String,
    /// A JSON integer.
    Integer,
    /// A JSON integer, 0 or more (a count, a number of seconds).
    Count,
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
            Self::Count => value.is_u64(),
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
            Self::Count => serde_json::json!({"type": "integer", "minimum": 0}),
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
    /// The values it takes beyond its type, checked before any call.
    #[serde(skip)]
    pub(crate) bound: Option<Bound>,
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
    /// A bound over several of its parameters, checked with theirs.
    #[serde(skip)]
    pub(crate) limit: Option<Limit>,
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
            bound: None,
        }
    }

    /// The same, taking only the values `bound` allows (said in its description).
    pub(crate) fn within(mut self, bound: Bound) -> Self {
        if let Some(said) = bound.said() {
            self.description = format!("{} ({said})", self.description).into();
        }
        self.bound = Some(bound);
        self
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
            limit: None,
        }
    }

    /// The same, with a bound over several of its parameters.
    pub(crate) fn limited(mut self, limit: Limit) -> Self {
        self.limit = Some(limit);
        self
    }

    /// Stands for tools not known before the run (a remote device's): in a tool list,
    /// it lets a plan call a tool the list does not name.
    pub(crate) fn any() -> Self {
        Self {
            name: "*".into(),
            description: "any tool a device offers".into(),
            params: Vec::new(),
            limit: None,
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
        // Its shape first: a malformed call is told so, whatever else it asks.
        self.check_shape(arguments)?;
        self.check_bounds(arguments)
    }

    /// Every required parameter given, each of its type, none unknown.
    fn check_shape(&self, arguments: &Map<String, Value>) -> Result<(), ArgumentError> {
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
                parameter: crate::text::shorten(unknown, 80),
                known: known.join(", "),
            });
        }
        Ok(())
    }

    /// What a call may ask: its size, each parameter's [`Bound`] and the tool's
    /// [`Limit`] (only [`ArgumentError::is_bound`] errors). A call another machine
    /// carries out (a device's tool of the same name) is held to these alone.
    pub(crate) fn check_bounds(&self, arguments: &Map<String, Value>) -> Result<(), ArgumentError> {
        check_size(&self.name, arguments)?;
        for p in &self.params {
            if let (Some(bound), Some(v)) = (p.bound, arguments.get(p.name.as_ref()))
                && let Some(why) = bound.refuses(v)
            {
                return Err(ArgumentError::OutOfBounds {
                    tool: self.name.to_string(),
                    parameter: p.name.to_string(),
                    why,
                });
            }
        }
        if let Some(why) = self.limit.and_then(|l| l.refuses(arguments)) {
            return Err(ArgumentError::TooMuch {
                tool: self.name.to_string(),
                why,
            });
        }
        Ok(())
    }
}

/// Refuses the arguments of `tool` when they are larger, as JSON, than any call's may be.
pub(crate) fn check_size(tool: &str, arguments: &Map<String, Value>) -> Result<(), ArgumentError> {
    let size = super::call::arguments_size(arguments);
    if size > super::call::ARGUMENTS_LIMIT {
        return Err(ArgumentError::TooLarge {
            tool: tool.to_string(),
            size,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn spec() -> ToolSpec {
        ToolSpec {
            limit: None,
            name: "execute_command".into(),
            description: "run".into(),
            params: vec![
                ParamSpec {
                    name: "command".into(),
                    kind: ParamKind::String,
                    required: true,
                    description: "".into(),
                    bound: None,
                },
                ParamSpec {
                    name: "timeout".into(),
                    kind: ParamKind::Count,
                    required: false,
                    description: "".into(),
                    bound: None,
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
            wrong.contains("must be a whole number, 0 or more, not a string"),
            "{wrong}"
        );
        // A count below 0 (a negative timeout) is refused like a wrong type, for
        // `validate` and the runner alike.
        for bad in [json!(-5), json!(1.5)] {
            let e = s
                .check_arguments(&args(json!({"command": "ls", "timeout": bad})))
                .unwrap_err()
                .to_string();
            assert!(e.contains("must be a whole number, 0 or more"), "{e}");
        }
        let unknown = s
            .check_arguments(&args(json!({"command": "ls", "cwdir": "x"})))
            .unwrap_err()
            .to_string();
        assert!(unknown.contains("no parameter `cwdir`"), "{unknown}");
    }
}
