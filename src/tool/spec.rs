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

/// The values a parameter takes beyond its JSON type, checked before a call (in a task
/// file by `validate` and `run` alike, in a model's call before it is carried out) and
/// said in the parameter's description: a call outside it is the caller's failure, told
/// to it, and never reaches the app, so that no argument sizes work past it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Bound {
    /// An integer from the first to the second, both included.
    Range(i64, i64),
    /// A string of at most this many characters, or an array of at most this many items.
    Length(usize),
    /// One file name of at most this many characters: no `/` or `\\`, no NUL, not `.`
    /// or `..` (a folder is another parameter's).
    Name(usize),
    /// A path relative to the workspace that stays in it (`relpath`'s rule: not absolute,
    /// no `..` above it, not too long); the workspace itself (`.`) only when `true`.
    Path(bool),
}

impl Bound {
    /// Why `value` is outside it, if it is.
    fn refuses(self, value: &Value) -> Option<String> {
        match (self, value) {
            (Self::Range(low, high), Value::Number(n)) => {
                let inside = n.as_i64().is_some_and(|i| (low..=high).contains(&i));
                (!inside).then(|| format!("{} is not from {low} to {high}", shortened(value)))
            }
            (Self::Length(max), Value::String(s)) => {
                let len = s.chars().count();
                (len > max).then(|| format!("it is {len} characters long; it may be at most {max}"))
            }
            (Self::Length(max), Value::Array(items)) => (items.len() > max)
                .then(|| format!("it has {} items; it may have at most {max}", items.len())),
            (Self::Path(root), Value::String(s)) => crate::relpath::normalize_relative(s, root)
                .err()
                .map(|e| e.to_string()),
            (Self::Name(max), Value::String(s)) => {
                if s.contains(['/', '\\', '\0']) || s == "." || s == ".." {
                    Some(format!(
                        "{} is not a file name (no / or \\, not . or ..): give the folder on its own",
                        shortened(value)
                    ))
                } else {
                    Self::Length(max).refuses(value)
                }
            }
            _ => None,
        }
    }

    /// The bound in words, as a description ends with it (a path's description says
    /// its rule already).
    fn said(self) -> Option<String> {
        match self {
            Self::Range(low, high) => Some(format!("from {low} to {high}")),
            Self::Length(max) => Some(format!("at most {max} long")),
            Self::Name(max) => Some(format!("a name of at most {max} characters, no folder")),
            Self::Path(_) => None,
        }
    }
}

/// A value as an error quotes it: never more than 80 characters of it.
fn shortened(value: &Value) -> String {
    crate::text::shorten(&value.to_string(), 80)
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

/// A bound over several parameters of a call (Office's cells), checked before the call
/// like each parameter's [`Bound`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Limit {
    /// At most this many cells from (`start_row`, `start_col`) to (`end_row`,
    /// `end_col`) when both ends are given (an end of -1 is the app's to find, and the
    /// app checks the range it finds).
    Range(u64),
    /// At most this many cells of `rows` × `columns`.
    Grid(u64),
    /// At most this many values over the rows of `table`.
    Table(u64),
}

impl Limit {
    /// Why `arguments` go beyond it, if they do.
    fn refuses(self, arguments: &Map<String, Value>) -> Option<String> {
        let int = |key: &str| arguments.get(key).and_then(Value::as_i64);
        let over = |cells: u64, max: u64, what: &str| {
            (cells > max).then(|| format!("{what} {cells} cells; a call may take at most {max}"))
        };
        match self {
            Self::Range(max) => {
                if let Some(end) = ["end_row", "end_col"]
                    .into_iter()
                    .find(|k| int(k) == Some(0))
                {
                    return Some(format!(
                        "`{end}` is 0, no row or column: give -1 (to the end) or a number from 1"
                    ));
                }
                let span = |from: &str, to: &str| match (int(from), int(to)) {
                    (Some(a), Some(b)) if b >= a => Some((b - a + 1) as u64),
                    _ => None,
                };
                let (rows, cols) = (span("start_row", "end_row")?, span("start_col", "end_col")?);
                over(rows.saturating_mul(cols), max, "the range holds")
            }
            Self::Grid(max) => {
                let cells =
                    (int("rows")?.max(0) as u64).saturating_mul(int("columns")?.max(0) as u64);
                over(cells, max, "the table would have")
            }
            Self::Table(max) => {
                let rows = arguments.get("table")?.as_array()?;
                let cells = rows
                    .iter()
                    .map(|r| r.as_array().map_or(1, Vec::len) as u64)
                    .sum::<u64>();
                over(cells, max, "the table has")
            }
        }
    }
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

impl ArgumentError {
    /// True when the call is well formed and asks more than a call may (a bound, a
    /// size): a model's reply with it is used, and the call fails when carried out, as
    /// an action failure the agent sees, rather than being asked again.
    pub(crate) fn is_bound(&self) -> bool {
        matches!(
            self,
            Self::TooLarge { .. } | Self::OutOfBounds { .. } | Self::TooMuch { .. }
        )
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
    /// Arguments larger, as JSON, than any call may have.
    #[error(
        "the arguments of `{tool}` are {size} bytes as JSON; a call's may be at most {} (1 MiB)",
        super::call::ARGUMENTS_LIMIT
    )]
    TooLarge {
        /// The tool.
        tool: String,
        /// Their size.
        size: usize,
    },
    /// Arguments that together ask more than a call may ([`Limit`]).
    #[error("`{tool}`: {why}")]
    TooMuch {
        /// The tool.
        tool: String,
        /// What is too much, in words.
        why: String,
    },
    /// A value beyond its parameter's bound.
    #[error("parameter `{parameter}` of `{tool}`: {why}")]
    OutOfBounds {
        /// The tool.
        tool: String,
        /// The parameter.
        parameter: String,
        /// What is wrong with it, in words.
        why: String,
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
        ParamKind::Count => "a whole number, 0 or more".into(),
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
