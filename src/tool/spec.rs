//! The tools an executor offers: names, parameters and their JSON types. Used to check
//! recorded actions when a task file loads and to describe the tools to an LLM agent.

use serde::Serialize;
use serde_json::{Map, Value};

/// The JSON type a tool parameter must have.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
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
}

impl ParamKind {
    fn accepts(self, value: &Value) -> bool {
        match self {
            Self::String => value.is_string(),
            Self::Integer => value.is_i64() || value.is_u64(),
            Self::Boolean => value.is_boolean(),
            Self::Number => value.is_number(),
        }
    }
}

/// One parameter of a tool.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct ParamSpec {
    /// Parameter name.
    pub(crate) name: &'static str,
    /// Expected JSON type.
    #[serde(rename = "type")]
    pub(crate) kind: ParamKind,
    /// Whether the call is invalid without it.
    pub(crate) required: bool,
    /// What it means, for the LLM's tool list.
    pub(crate) description: &'static str,
}

/// A tool an executor offers: used to validate recorded actions at load time and to
/// describe the tools to an LLM agent.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct ToolSpec {
    /// Tool name as called.
    pub(crate) name: &'static str,
    /// What it does.
    pub(crate) description: &'static str,
    /// Its parameters.
    pub(crate) params: Vec<ParamSpec>,
}

impl ToolSpec {
    /// Checks `arguments` against the parameter list: required ones present, types
    /// right, no unknown names. Returns the first problem in words.
    pub(crate) fn check_arguments(&self, arguments: &Map<String, Value>) -> Result<(), String> {
        for p in &self.params {
            match arguments.get(p.name) {
                None | Some(Value::Null) if p.required => {
                    return Err(format!(
                        "`{}` needs the parameter `{}` ({})",
                        self.name,
                        p.name,
                        type_name(p.kind)
                    ));
                }
                Some(v) if !v.is_null() && !p.kind.accepts(v) => {
                    return Err(format!(
                        "parameter `{}` of `{}` must be {}, not {}",
                        p.name,
                        self.name,
                        type_name(p.kind),
                        crate::text::json_type(v)
                    ));
                }
                _ => {}
            }
        }
        if let Some(unknown) = arguments
            .keys()
            .find(|k| !self.params.iter().any(|p| p.name == k.as_str()))
        {
            let known: Vec<&str> = self.params.iter().map(|p| p.name).collect();
            return Err(format!(
                "`{}` has no parameter `{unknown}` (it takes: {})",
                self.name,
                known.join(", ")
            ));
        }
        Ok(())
    }
}

fn type_name(kind: ParamKind) -> &'static str {
    match kind {
        ParamKind::String => "a string",
        ParamKind::Integer => "an integer",
        ParamKind::Boolean => "true or false",
        ParamKind::Number => "a number",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn spec() -> ToolSpec {
        ToolSpec {
            name: "execute_command",
            description: "run",
            params: vec![
                ParamSpec {
                    name: "command",
                    kind: ParamKind::String,
                    required: true,
                    description: "",
                },
                ParamSpec {
                    name: "timeout",
                    kind: ParamKind::Integer,
                    required: false,
                    description: "",
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
        assert!(
            missing.contains("needs the parameter `command`"),
            "{missing}"
        );
        let wrong = s
            .check_arguments(&args(json!({"command": "ls", "timeout": "5"})))
            .unwrap_err();
        assert!(
            wrong.contains("must be an integer, not a string"),
            "{wrong}"
        );
        let unknown = s
            .check_arguments(&args(json!({"command": "ls", "cwdir": "x"})))
            .unwrap_err();
        assert!(unknown.contains("no parameter `cwdir`"), "{unknown}");
    }
}
