//! One experience record in UFO's shape, as UFO's `ExperienceSummarizer` writes it to
//! `experience.yaml` (`ufo/experience/summarizer.py`, `get_summary` and
//! `get_summary_list`): `example` (the condensed step: `Observation`, `Thought`,
//! `ControlLabel`, `ControlText`, `Function`, `Args`, `Status`, `Plan`, `Comment`),
//! `Tips`, `request` and `Sub-task` (both the subtask's text) and `app_list`. What UFO's
//! AppAgent reads of one (`rag_experience_retrieve` in `ufo/agents/agent/app_agent.py`)
//! is `request`, `example`, `Tips`, `Sub-task`, and `app_list` to filter by app.
//!
//! ufo-batch adds where a record came from (`task_id`, `run`, `model`), keys UFO does
//! not read. A record is read leniently: a file may hold UFO's records, ours, and
//! hand-edited ones; a record that cannot be used is left out with a reason.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The keys of UFO's `example`, in UFO's order (`summarizer.py`).
pub(crate) const EXAMPLE_KEYS: [&str; 9] = [
    "Observation",
    "Thought",
    "ControlLabel",
    "ControlText",
    "Function",
    "Args",
    "Status",
    "Plan",
    "Comment",
];

/// Where a record saved by ufo-batch came from.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct Origin {
    /// The task's id in its run (with `/rep-N` under `--repeat`).
    pub(crate) task_id: String,
    /// The run's name.
    pub(crate) run: String,
    /// The model that summarized it, or `recorded plan` for a record built from a
    /// replayed plan's actions.
    pub(crate) model: String,
}

/// One record, in UFO's key order.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct ExperienceRecord {
    /// The condensed step, UFO's `example`.
    pub(crate) example: Map<String, Value>,
    /// Advice for the task, UFO's `Tips` (`- ` before each, one per line).
    #[serde(rename = "Tips")]
    pub(crate) tips: String,
    /// What the record is retrieved by: the subtask's text (UFO sets `request` to the
    /// subtask).
    pub(crate) request: String,
    /// The subtask.
    #[serde(rename = "Sub-task")]
    pub(crate) subtask: String,
    /// The applications it was done in (`shell` for a shell task).
    pub(crate) app_list: Vec<String>,
    /// Where ufo-batch made it; `None` for UFO's own records.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub(crate) origin: Option<Origin>,
    /// How the task it came from ended (`passed`, `failed`, `timeout`); only a record
    /// of a task that passed, or one without a verdict (UFO's), is given to agents.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) verdict: Option<String>,
}

/// Longest `request` kept of a record read (a hostile file cannot make retrieval slow).
const MAX_REQUEST: usize = 4000;
/// Longest `Tips` kept.
pub(crate) const MAX_TIPS: usize = 8000;
/// Longest value of an `example` saved (its JSON, for a structure).
const MAX_FIELD: usize = 4000;

/// Why a stored record cannot be used (it is left out, with a warning naming it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum Unusable {
    /// A scalar or a list where a record's keys should be.
    #[error("it is not a mapping of keys")]
    NotAMapping,
    /// No `request`: nothing to rank it by.
    #[error("it has no `request` text")]
    NoRequest,
    /// `example` is a list or a scalar.
    #[error("its `example` is not a mapping")]
    ExampleNotAMapping,
    /// `app_list` is empty or absent.
    #[error("its `app_list` names no application")]
    NoApp,
}

impl ExperienceRecord {
    /// An example with UFO's keys from `fields` (UFO's `response_json.get(key, "")`):
    /// a key the model left out is `""`.
    /// Each value is bounded: a long text is shortened, and a structure whose JSON is
    /// long becomes that JSON, shortened.
    pub(crate) fn example_from(fields: &Map<String, Value>) -> Map<String, Value> {
        EXAMPLE_KEYS
            .iter()
            .map(|k| {
                let v = match fields.get(*k) {
                    None | Some(Value::Null) => Value::from(""),
                    Some(Value::String(s)) => Value::from(crate::text::shorten(s, MAX_FIELD)),
                    Some(other) => {
                        let json = other.to_string();
                        if json.chars().count() > MAX_FIELD {
                            Value::from(crate::text::shorten(&json, MAX_FIELD))
                        } else {
                            other.clone()
                        }
                    }
                };
                (k.to_string(), v)
            })
            .collect()
    }

    /// The record stored under `key`, read from a YAML value, or why it cannot be used.
    pub(crate) fn from_yaml(value: serde_norway::Value) -> Result<Self, Unusable> {
        let serde_norway::Value::Mapping(map) = value else {
            return Err(Unusable::NotAMapping);
        };
        let mut fields = Map::new();
        for (k, v) in map {
            let serde_norway::Value::String(k) = k else {
                continue;
            };
            // A nested mapping with keys that are not text has no JSON form: that key
            // is left out, the rest kept.
            if let Ok(v) = serde_json::to_value(&v) {
                fields.insert(k, v);
            }
        }
        let text = |key: &str| match fields.get(key) {
            Some(Value::String(s)) => Some(s.clone()),
            Some(Value::Null) | None => None,
            Some(other) => Some(other.to_string()),
        };
        let request = text("request")
            .filter(|r| !r.trim().is_empty())
            .ok_or(Unusable::NoRequest)?;
        let example = match fields.get("example") {
            Some(Value::Object(m)) => m.clone(),
            Some(Value::Null) | None => Map::new(),
            Some(_) => return Err(Unusable::ExampleNotAMapping),
        };
        let app_list: Vec<String> = match fields.get("app_list") {
            Some(Value::Array(items)) => items
                .iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect(),
            Some(Value::String(one)) => vec![one.clone()],
            _ => Vec::new(),
        };
        if app_list.is_empty() {
            return Err(Unusable::NoApp);
        }
        let origin = match (text("task_id"), text("run")) {
            (Some(task_id), Some(run)) => Some(Origin {
                task_id,
                run,
                model: text("model").unwrap_or_default(),
            }),
            _ => None,
        };
        Ok(Self {
            verdict: text("verdict"),
            example,
            tips: crate::text::shorten(&text("Tips").unwrap_or_default(), MAX_TIPS),
            subtask: text("Sub-task").unwrap_or_else(|| request.clone()),
            request: crate::text::shorten(&request, MAX_REQUEST),
            app_list,
            origin,
        })
    }

    /// True when it may be given to an agent as an example: its task passed, or it
    /// says nothing of it (UFO's records).
    pub(crate) fn is_example(&self) -> bool {
        self.verdict.as_deref().is_none_or(|v| v == "passed")
    }

    /// True when this record was saved from `task` (its base id; any repetition of it)
    /// in the run `run`.
    pub(crate) fn is_from(&self, run: &str, task: &str) -> bool {
        self.origin.as_ref().is_some_and(|o| {
            o.run == run
                && (o.task_id == task
                    || o.task_id
                        .strip_prefix(task)
                        .is_some_and(|rest| rest.starts_with("/rep-")))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn yaml(text: &str) -> serde_norway::Value {
        serde_norway::from_str(text).unwrap()
    }

    #[test]
    fn reads_a_record_as_ufo_writes_it() {
        let r = ExperienceRecord::from_yaml(yaml(
            "example:\n  Observation: a window\n  Function: click_input\n  Args: {button: left}\nTips: '- be quick'\nrequest: Bold the title\nSub-task: Bold the title\napp_list: [WINWORD.EXE]\n",
        ))
        .unwrap();
        assert_eq!(r.request, "Bold the title");
        assert_eq!(r.app_list, ["WINWORD.EXE"]);
        assert_eq!(r.example["Args"]["button"], "left");
        assert_eq!(r.origin, None);
    }

    #[test]
    fn a_record_without_request_or_with_a_list_as_example_is_refused() {
        let no_request = ExperienceRecord::from_yaml(yaml("example: {}\nTips: x\n"));
        assert_eq!(
            no_request.unwrap_err().to_string(),
            "it has no `request` text"
        );
        let bad = ExperienceRecord::from_yaml(yaml("request: r\nexample: [1, 2]\n"));
        assert_eq!(bad.unwrap_err(), Unusable::ExampleNotAMapping);
        let scalar = ExperienceRecord::from_yaml(yaml("just text"));
        assert_eq!(scalar.unwrap_err(), Unusable::NotAMapping);
    }

    #[test]
    fn a_repetition_is_the_same_task() {
        let mut r = ExperienceRecord::from_yaml(yaml("request: r\napp_list: [shell]\n")).unwrap();
        r.origin = Some(Origin {
            task_id: "csv/sum/rep-2".into(),
            run: "plans".into(),
            model: "m".into(),
        });
        assert!(r.is_from("plans", "csv/sum"));
        assert!(!r.is_from("plans", "csv/su"));
        assert!(!r.is_from("other", "csv/sum"));
    }
}
