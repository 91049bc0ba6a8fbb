//! Reading a desktop tool call's arguments as its tool means them (texts, flags,
//! fractions of the window, seconds, field lists, the control named, the button), and
//! why they cannot be read (`ArgumentError`): always the agent's.

use std::time::Duration;

use serde_json::{Map, Value};

use super::Button;
use crate::desktop::keys::KeyError;
use crate::desktop::select::{SelectError, Selector};
use crate::tool::{Blame, Blamed};

/// The longest `wait`.
const MAX_WAIT: Duration = Duration::from_secs(300);

/// Why a desktop tool call's arguments cannot be read: the agent's.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ArgumentError {
    /// A button that is none of the three.
    #[error("unknown mouse button `{0}` (use left, right or middle)")]
    Button(String),
    /// A field list that is not a list of strings.
    #[error("`{0}` must be a list of field names")]
    NotFieldList(String),
    /// A coordinate (the argument, its value) outside the window.
    #[error("`{0}` is {1}: coordinates are fractions of the window, from 0 to 1")]
    NotFraction(String, f64),
    /// A coordinate not given: the tool, the argument.
    #[error("`{0}` needs `{1}` (a fraction from 0 to 1)")]
    NoFraction(String, String),
    /// The control named wrongly.
    #[error(transparent)]
    Select(#[from] SelectError),
    /// Keys that are not pywinauto's syntax.
    #[error(transparent)]
    Keys(#[from] KeyError),
    /// A held key that is not a modifier.
    #[error("`key_hold` `{0}` is not ctrl, shift or alt")]
    KeyHold(String),
    /// A window selection that names no window.
    #[error(
        "`select_application_window` needs the window's `id` (its label in the window list) or `name`"
    )]
    NoWindow,
    /// A tool that is not one of the desktop's.
    #[error("`{0}` is not a desktop tool")]
    NotDesktopTool(String),
    /// A duration (the argument, its value) that is no number of seconds.
    #[error("`{0}` must be a number of seconds from 0 to 300, not {1}")]
    NotSeconds(String, f64),
    /// A duration (the argument, its value) over the longest.
    #[error("`{0}` must be at most 300 seconds, not {1}")]
    TooLong(String, f64),
}

impl Blamed for ArgumentError {
    fn blame(&self) -> Blame {
        Blame::Agent
    }
}

/// A call's arguments, read as its tool means them.
pub(super) struct Args<'a> {
    pub(super) tool: &'a str,
    pub(super) args: &'a Map<String, Value>,
}

impl Args<'_> {
    pub(super) fn text(&self, key: &str) -> String {
        self.args
            .get(key)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    }

    pub(super) fn flag(&self, key: &str) -> bool {
        self.args.get(key).and_then(Value::as_bool).unwrap_or(false)
    }

    pub(super) fn number(&self, key: &str) -> Option<f64> {
        self.args.get(key).and_then(Value::as_f64)
    }

    pub(super) fn strings(&self, key: &str) -> Result<Vec<String>, ArgumentError> {
        let not_list = || ArgumentError::NotFieldList(key.to_string());
        match self.args.get(key) {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(Value::Array(items)) => items
                .iter()
                .map(|i| i.as_str().map(str::to_string).ok_or_else(not_list))
                .collect(),
            Some(_) => Err(not_list()),
        }
    }

    pub(super) fn fraction(&self, key: &str) -> Result<f64, ArgumentError> {
        match self.number(key) {
            Some(v) if (0.0..=1.0).contains(&v) => Ok(v),
            Some(value) => Err(ArgumentError::NotFraction(key.to_string(), value)),
            None => Err(ArgumentError::NoFraction(
                self.tool.to_string(),
                key.to_string(),
            )),
        }
    }

    pub(super) fn target(&self) -> Result<Selector, ArgumentError> {
        Ok(Selector::from_arguments(self.args)?)
    }

    pub(super) fn button(&self) -> Result<Button, ArgumentError> {
        Button::parse(&self.text("button"))
    }

    pub(super) fn seconds(&self, key: &str) -> Result<Duration, ArgumentError> {
        seconds(self.number(key).unwrap_or(1.0), key)
    }
}

fn seconds(value: f64, key: &str) -> Result<Duration, ArgumentError> {
    let d = Duration::try_from_secs_f64(value)
        .map_err(|_| ArgumentError::NotSeconds(key.to_string(), value))?;
    if d > MAX_WAIT {
        return Err(ArgumentError::TooLong(key.to_string(), value));
    }
    Ok(d)
}
