//! Finding the control an action names, in a snapshot's control list: by its label
//! (`id`), and/or by `name` and `control_type`. A label is only good for the snapshot it
//! came from, so when the control under it has another name or type than the action
//! says, the name decides; a name that matches no control, or several, is a failed
//! action that lists the controls that came close.

use std::fmt;

use serde_json::{Map, Value};

use super::control::{Control, ControlType};
use super::error::DesktopError;
use crate::tool::{Blame, Blamed};

/// What an action says about its control.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Selector {
    /// The label in the control list.
    pub(crate) id: Option<String>,
    /// The control's name.
    pub(crate) name: Option<String>,
    /// The control's type.
    pub(crate) control_type: Option<ControlType>,
}

/// Why no single control fits.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum SelectError {
    /// Neither an id nor a name.
    Unnamed,
    /// `control_type` is not one of UI Automation's.
    UnknownType(String),
    /// Only a label was given, and no control has it.
    NoSuchId {
        /// The label.
        id: String,
        /// How many controls the list has.
        count: usize,
    },
    /// No control fits; the closest ones.
    Missing {
        /// What was asked for.
        wanted: String,
        /// The controls that came closest, best first.
        closest: Vec<String>,
    },
    /// Several fit.
    Ambiguous {
        /// What was asked for.
        wanted: String,
        /// Every control that fits.
        matches: Vec<String>,
    },
}

impl fmt::Display for SelectError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Unnamed => write!(
                f,
                "the action names no control: give `id`, `name` or `control_type`"
            ),
            Self::UnknownType(t) => write!(
                f,
                "`control_type` {t:?} is not a UI Automation control type (Button, Edit, Document, MenuItem, TabItem, ListItem, DataItem, ...)"
            ),
            Self::NoSuchId { id, count } => write!(
                f,
                "no control has the label [{id}]: the control list has {count} (give `name` and `control_type` to find a control whatever its label)"
            ),
            Self::Missing { wanted, closest } if closest.is_empty() => {
                write!(f, "no control is {wanted}, and none has a name close to it")
            }
            Self::Missing { wanted, closest } => {
                write!(f, "no control is {wanted}; closest: {}", closest.join(", "))
            }
            Self::Ambiguous { wanted, matches } => write!(
                f,
                "{} controls are {wanted}: {}; give its `id` or `control_type`",
                matches.len(),
                matches.join(", ")
            ),
        }
    }
}

impl std::error::Error for SelectError {}

/// The agent named a control this screen does not have (or named none).
impl Blamed for SelectError {
    fn blame(&self) -> Blame {
        Blame::Agent
    }
}

impl From<SelectError> for DesktopError {
    fn from(e: SelectError) -> Self {
        DesktopError::classified(e)
    }
}

/// How many close controls a message lists.
const CLOSEST: usize = 5;

impl Selector {
    /// The selector in an action's arguments (`id` as a string or a number).
    pub(crate) fn from_arguments(args: &Map<String, Value>) -> Result<Self, SelectError> {
        let text = |key: &str| match args.get(key) {
            Some(Value::String(s)) if !s.is_empty() => Some(s.clone()),
            Some(Value::Number(n)) => Some(n.to_string()),
            _ => None,
        };
        let control_type = match text("control_type") {
            None => None,
            Some(t) => Some(ControlType::parse(&t).ok_or(SelectError::UnknownType(t))?),
        };
        let selector = Self {
            id: text("id"),
            name: text("name"),
            control_type,
        };
        if selector.id.is_none() && selector.name.is_none() && selector.control_type.is_none() {
            return Err(SelectError::Unnamed);
        }
        Ok(selector)
    }

    /// The one control this selector names.
    pub(crate) fn resolve<'a>(&self, controls: &'a [Control]) -> Result<&'a Control, SelectError> {
        if let Some(id) = &self.id
            && let Some(c) = controls.iter().find(|c| &c.id == id)
            && self.fits(c)
        {
            return Ok(c);
        }
        if self.name.is_none() && self.control_type.is_none() {
            return Err(SelectError::NoSuchId {
                id: self.id.clone().unwrap_or_default(),
                count: controls.len(),
            });
        }
        let name = self.name.as_deref().unwrap_or("");
        let matches: Vec<&Control> = controls.iter().filter(|c| self.fits(c)).collect();
        match matches.as_slice() {
            [one] => Ok(one),
            [] => Err(SelectError::Missing {
                wanted: self.to_string(),
                closest: closest(name, self.control_type, controls),
            }),
            many => Err(SelectError::Ambiguous {
                wanted: self.to_string(),
                matches: many.iter().map(|c| c.to_string()).collect(),
            }),
        }
    }

    /// Whether `control` has the name and type asked for (those given).
    fn fits(&self, control: &Control) -> bool {
        self.name
            .as_ref()
            .is_none_or(|n| same_name(n, &control.name))
            && self.control_type.is_none_or(|t| t == control.control_type)
    }
}

impl fmt::Display for Selector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = Vec::new();
        if let Some(id) = &self.id {
            parts.push(format!("[{id}]"));
        }
        if let Some(t) = self.control_type {
            parts.push(t.to_string());
        }
        if let Some(n) = &self.name {
            parts.push(format!("{n:?}"));
        }
        f.write_str(&parts.join(" "))
    }
}

/// Names are compared as people read them: surrounding spaces (LibreOffice's menu items
/// carry trailing ones) do not count.
fn same_name(a: &str, b: &str) -> bool {
    a.trim() == b.trim()
}

/// The controls whose names come closest to `name` (same type first), best first.
fn closest(name: &str, control_type: Option<ControlType>, controls: &[Control]) -> Vec<String> {
    let wanted = name.trim().to_lowercase();
    let mut scored: Vec<(f64, &Control)> = controls
        .iter()
        .filter(|c| !c.name.trim().is_empty())
        .map(|c| {
            let have = c.name.trim().to_lowercase();
            let mut score = strsim::normalized_levenshtein(&wanted, &have);
            if have.contains(&wanted) || wanted.contains(&have) {
                score += 0.5;
            }
            if control_type == Some(c.control_type) {
                score += 0.25;
            }
            (score, c)
        })
        .filter(|(score, _)| *score >= 0.4)
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0));
    scored
        .into_iter()
        .take(CLOSEST)
        .map(|(_, c)| c.to_string())
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::desktop::control::Rect;

    fn control(id: &str, name: &str, control_type: ControlType) -> Control {
        Control {
            id: id.into(),
            name: name.into(),
            control_type,
            rect: Rect::default(),
            editable: false,
            enabled: true,
            handle: 0,
        }
    }

    fn window() -> Vec<Control> {
        use ControlType::*;
        vec![
            control("1", "File", MenuItem),
            control("2", "Save ", MenuItem),
            control("3", "Save As...", MenuItem),
            control("4", "Save", Button),
            control("5", "OK", Button),
            control("6", "OK", Button),
            control("7", "Body", Edit),
        ]
    }

    fn select(args: serde_json::Value) -> Result<String, SelectError> {
        let args = args.as_object().unwrap().clone();
        let w = window();
        Selector::from_arguments(&args).and_then(|s| s.resolve(&w).map(|c| c.id.clone()))
    }

    /// Why `args` select no control, in words.
    fn refused(args: serde_json::Value) -> String {
        select(args).unwrap_err().to_string()
    }

    #[test]
    fn an_id_whose_control_fits_wins() {
        assert_eq!(select(json!({"id": "7"})), Ok("7".into()));
        assert_eq!(select(json!({"id": 5, "name": "OK"})), Ok("5".into()));
    }

    #[test]
    fn a_name_decides_when_the_id_is_stale_or_missing() {
        // Label 1 is "File" in this snapshot: the name wins.
        assert_eq!(
            select(json!({"id": "1", "name": "Body", "control_type": "Edit"})),
            Ok("7".into())
        );
        assert_eq!(select(json!({"id": "99", "name": "Body"})), Ok("7".into()));
        // Trailing spaces do not count; the type tells two "Save"s apart.
        assert_eq!(
            select(json!({"name": "Save", "control_type": "MenuItem"})),
            Ok("2".into())
        );
        assert_eq!(
            select(json!({"name": "Save", "control_type": "ButtonControl"})),
            Ok("4".into())
        );
    }

    #[test]
    fn ambiguous_and_missing_controls_say_which_came_close() {
        assert_eq!(
            refused(json!({"name": "OK"})),
            r#"2 controls are "OK": [5] Button "OK", [6] Button "OK"; give its `id` or `control_type`"#
        );
        let e = refused(json!({"name": "Save all", "control_type": "MenuItem"}));
        assert!(
            e.starts_with(r#"no control is MenuItem "Save all"; closest: [2] MenuItem "Save ""#),
            "{e}"
        );
        assert!(e.contains(r#"[4] Button "Save""#), "{e}");
        assert!(!e.contains("Body"), "{e}");
        assert!(
            refused(json!({"id": "99"}))
                .starts_with("no control has the label [99]: the control list has 7"),
        );
        assert_eq!(
            refused(json!({"name": "Quit"})),
            r#"no control is "Quit", and none has a name close to it"#
        );
        assert!(refused(json!({})).contains("give `id`, `name` or `control_type`"));
        assert!(
            refused(json!({"name": "x", "control_type": "Widget"}))
                .contains("not a UI Automation control type")
        );
    }

    #[test]
    fn a_control_not_there_is_the_agents_in_the_same_words() {
        let e = select(json!({"name": "Quit"})).unwrap_err();
        let failure = DesktopError::from(e.clone()).failure();
        assert_eq!(failure.blame, Blame::Agent);
        assert_eq!(failure.message, e.to_string());
    }
}
