//! Arguments a tool does not take, in the words the caller is told.

use super::ParamKind;

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
        crate::tool::call::ARGUMENTS_LIMIT
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

pub(super) fn type_name(kind: &ParamKind) -> String {
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
