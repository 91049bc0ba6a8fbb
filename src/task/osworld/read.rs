//! Reading an OSWorld task's JSON object into an [`OsWorldTask`], every flaw located by
//! its place in the document. OSWorld's own reader (`DesktopEnv._set_task_info`) is the
//! reference: `config` is a list of `{"type", "parameters"}`; `evaluator.func` one
//! name or a list, and with a list `result`, `expected` and `options` lists of the same
//! length (`expected` items may be null); `conj` `and` or `or`.

use std::sync::Arc;

use serde_json::{Map, Value};

use super::{Evaluator, Getter, OsWorldTask, Step, paths};
use crate::text::json_type;

/// A flaw of an OSWorld task: where in the document, what, and the fix.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Flaw {
    /// The place (`config[2].parameters.files[0].path`); empty for the whole task.
    pub(crate) at: String,
    /// What is wrong.
    pub(crate) message: String,
    /// What to do about it.
    pub(crate) fix: String,
}

/// Collects the flaws of one task.
#[derive(Default)]
struct Reader {
    flaws: Vec<Flaw>,
}

impl Reader {
    fn flaw(&mut self, at: &str, message: impl Into<String>, fix: impl Into<String>) {
        self.flaws.push(Flaw {
            at: at.to_string(),
            message: message.into(),
            fix: fix.into(),
        });
    }

    /// `value` as an object, or a flaw.
    fn object<'v>(&mut self, at: &str, value: &'v Value) -> Option<&'v Map<String, Value>> {
        let object = value.as_object();
        if object.is_none() {
            self.flaw(
                at,
                format!("must be an object, not {}", json_type(value)),
                "write it as OSWorld's task files do: { ... }",
            );
        }
        object
    }

    /// A non-empty text at `at`, or a flaw.
    fn text(&mut self, at: &str, value: Option<&Value>, what: &str) -> Option<String> {
        match value {
            Some(Value::String(s)) if !s.trim().is_empty() => Some(s.clone()),
            Some(Value::String(_)) => {
                self.flaw(at, format!("{what} is empty"), format!("write {what}"));
                None
            }
            Some(other) => {
                self.flaw(
                    at,
                    format!("{what} must be a string, not {}", json_type(other)),
                    format!("write {what} as a string"),
                );
                None
            }
            None => {
                self.flaw(at, format!("{what} is missing"), format!("add {what}"));
                None
            }
        }
    }

    /// A list of steps (`config`, `postconfig`).
    fn steps(&mut self, at: &str, value: Option<&Value>) -> Vec<Step> {
        let Some(value) = value else {
            return Vec::new();
        };
        let Some(list) = value.as_array() else {
            self.flaw(
                at,
                format!("must be a list of steps, not {}", json_type(value)),
                "write [{\"type\": ..., \"parameters\": {...}}, ...]",
            );
            return Vec::new();
        };
        let mut steps = Vec::with_capacity(list.len());
        for (i, item) in list.iter().enumerate() {
            let at = format!("{at}[{i}]");
            let Some(object) = self.object(&at, item) else {
                continue;
            };
            let Some(kind) =
                self.text(&format!("{at}.type"), object.get("type"), "the step's type")
            else {
                continue;
            };
            let parameters = match object.get("parameters") {
                None => Map::new(),
                Some(Value::Object(p)) => p.clone(),
                Some(other) => {
                    self.flaw(
                        &format!("{at}.parameters"),
                        format!("must be an object, not {}", json_type(other)),
                        "give the step's parameters as { ... }",
                    );
                    continue;
                }
            };
            let step = Step { kind, parameters };
            for (place, why) in paths::of_step(&step) {
                self.flaw(&format!("{at}.parameters{place}"), why, paths::FIX);
            }
            steps.push(step);
        }
        steps
    }

    /// A getter's configuration, or a flaw.
    fn getter(&mut self, at: &str, value: &Value) -> Option<Getter> {
        let object = self.object(at, value)?;
        let kind = self.text(
            &format!("{at}.type"),
            object.get("type"),
            "the getter's type",
        )?;
        let mut config = object.clone();
        config.remove("type");
        let getter = Getter { kind, config };
        for (place, why) in paths::of_getter(&getter) {
            self.flaw(&format!("{at}{place}"), why, paths::FIX);
        }
        Some(getter)
    }

    /// The evaluator.
    fn evaluator(&mut self, value: Option<&Value>) -> Option<Evaluator> {
        let Some(value) = value else {
            self.flaw(
                "evaluator",
                "the task has no evaluator",
                "add OSWorld's \"evaluator\": {\"func\": ..., \"result\": ..., ...}",
            );
            return None;
        };
        let object = self.object("evaluator", value)?;
        let (funcs, listed) = match object.get("func") {
            Some(Value::Array(list)) => {
                let names: Vec<String> = list
                    .iter()
                    .enumerate()
                    .filter_map(|(i, f)| {
                        self.text(
                            &format!("evaluator.func[{i}]"),
                            Some(f),
                            "the metric's name",
                        )
                    })
                    .collect();
                if list.is_empty() {
                    self.flaw(
                        "evaluator.func",
                        "the list of metrics is empty",
                        "name at least one metric",
                    );
                }
                (names, Some(list.len()))
            }
            other => (
                self.text("evaluator.func", other, "the metric's name")
                    .into_iter()
                    .collect(),
                None,
            ),
        };
        let any = match object.get("conj") {
            None => false,
            Some(Value::String(c)) if c == "and" => false,
            Some(Value::String(c)) if c == "or" => true,
            Some(other) => {
                self.flaw(
                    "evaluator.conj",
                    format!("must be \"and\" or \"or\", not {other}"),
                    "write \"and\" (every metric holds) or \"or\" (one does)",
                );
                false
            }
        };
        let result = self.getters("evaluator.result", object.get("result"), listed, false);
        let expected = self.getters("evaluator.expected", object.get("expected"), listed, true);
        if let (Some(n), Some(options)) = (listed, object.get("options")) {
            self.same_length("evaluator.options", options, n);
        }
        let postconfig = self.steps("evaluator.postconfig", object.get("postconfig"));
        Some(Evaluator {
            funcs,
            any,
            result: result.into_iter().flatten().collect(),
            expected,
            postconfig,
        })
    }

    /// `result` or `expected`: one getter, or (with a list of metrics) a list of the
    /// same length; `nullable` items may be null.
    fn getters(
        &mut self,
        at: &str,
        value: Option<&Value>,
        listed: Option<usize>,
        nullable: bool,
    ) -> Vec<Option<Getter>> {
        let Some(value) = value else {
            return Vec::new();
        };
        match (value, listed) {
            (Value::Array(items), Some(n)) => {
                self.same_length(at, value, n);
                items
                    .iter()
                    .enumerate()
                    .map(|(i, item)| match item {
                        Value::Null if nullable => None,
                        Value::Object(o) if o.is_empty() && nullable => None,
                        item => self.getter(&format!("{at}[{i}]"), item),
                    })
                    .collect()
            }
            (Value::Array(_), None) => {
                self.flaw(
                    at,
                    "is a list, but `func` names one metric",
                    "give one getter, or list as many metrics in `func` as getters here",
                );
                Vec::new()
            }
            // OSWorld reads an empty object as no getter.
            (Value::Object(o), None) if o.is_empty() => Vec::new(),
            (item, None) => vec![self.getter(at, item)],
            (item, Some(n)) => {
                self.flaw(
                    at,
                    format!(
                        "must be a list of {n} getters, as `func` lists {n} metrics, not {}",
                        json_type(item)
                    ),
                    "give one getter per metric, in the order of `func`",
                );
                Vec::new()
            }
        }
    }

    /// A list that must be as long as `func`'s.
    fn same_length(&mut self, at: &str, value: &Value, n: usize) {
        match value.as_array() {
            Some(items) if items.len() == n => {}
            Some(items) => self.flaw(
                at,
                format!("lists {} items, but `func` lists {n} metrics", items.len()),
                "give one item per metric, in the order of `func` (null where a metric has none)",
            ),
            None => self.flaw(
                at,
                format!("must be a list of {n} items, as `func` lists {n} metrics"),
                "give one item per metric, in the order of `func`",
            ),
        }
    }
}

/// Reads an OSWorld task's JSON object.
pub(super) fn read(value: &Value) -> Result<OsWorldTask, Vec<Flaw>> {
    let mut r = Reader::default();
    let Some(object) = r.object("", value) else {
        return Err(r.flaws);
    };
    let id = r.text("id", object.get("id"), "OSWorld's task id");
    if let Some(id) = &id
        && !safe_id(id)
    {
        r.flaw(
            "id",
            format!("OSWorld's task id {id:?} cannot name a cache folder"),
            "use OSWorld's id: letters, digits, '-', '_' and '.' (a UUID)",
        );
    }
    r.text("instruction", object.get("instruction"), "the instruction");
    let related_apps = match object.get("related_apps") {
        None => Vec::new(),
        Some(Value::Array(apps)) => apps
            .iter()
            .enumerate()
            .filter_map(|(i, a)| r.text(&format!("related_apps[{i}]"), Some(a), "an app's name"))
            .collect(),
        Some(other) => {
            r.flaw(
                "related_apps",
                format!("must be a list of app names, not {}", json_type(other)),
                "write [\"libreoffice_calc\", ...]",
            );
            Vec::new()
        }
    };
    let config = r.steps("config", object.get("config"));
    let evaluator = r.evaluator(object.get("evaluator"));
    match (id, evaluator) {
        (Some(id), Some(evaluator)) if r.flaws.is_empty() => Ok(OsWorldTask {
            id,
            related_apps,
            config,
            evaluator,
            json: Arc::new(value.clone()),
        }),
        _ => Err(r.flaws),
    }
}

/// An id that can name a folder: OSWorld joins it onto its cache folder.
fn safe_id(id: &str) -> bool {
    !id.starts_with('.')
        && id.len() <= 128
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}
