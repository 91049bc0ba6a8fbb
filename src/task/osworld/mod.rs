//! OSWorld's task format (`evaluation_examples/examples/<domain>/<id>.json`): the
//! instruction, the setup steps (`config`), the evaluator (`func`, `result`,
//! `expected`, `options`, `conj`, `postconfig`) and the apps the task is about, read
//! and checked as far as the format goes (`read`): every path a step or getter names
//! stays inside the task's desktop (`paths`). A suite file (`test_all.json`) stands for
//! its tasks (`suite`). Which steps, getters and metrics exist is
//! OSWorld's own code's to say, not this module's. What a task needs of the machine
//! (programs, cached files, accounts) is `needs`. The JSON is kept as written: it is
//! what OSWorld's code is given.

mod needs;
mod paths;
mod read;
pub(crate) mod suite;

use std::sync::Arc;

use serde_json::{Map, Value};

pub(crate) use needs::{CacheFile, Needs, Phase};
pub(crate) use read::Flaw;

/// An OSWorld task.
#[derive(Clone, Debug)]
pub(crate) struct OsWorldTask {
    /// OSWorld's id (a UUID): the name of its folder in OSWorld's cache.
    pub(crate) id: String,
    /// The apps it is about (`related_apps`).
    pub(crate) related_apps: Vec<String>,
    /// Its setup steps (`config`).
    pub(crate) config: Vec<Step>,
    /// How it is scored.
    pub(crate) evaluator: Evaluator,
    /// The task's JSON object as written.
    pub(crate) json: Arc<Value>,
}

/// One setup step (`{"type", "parameters"}`), of `config` or of the evaluator's
/// `postconfig`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Step {
    /// Its type (`download`, `open`, `execute`, ...): OSWorld's `_<type>_setup`.
    pub(crate) kind: String,
    /// Its parameters.
    pub(crate) parameters: Map<String, Value>,
}

/// The evaluator: the metric functions, what their getters fetch, the steps before.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Evaluator {
    /// The metric functions (`func`: one, or a list).
    pub(crate) funcs: Vec<String>,
    /// `conj`: the metrics of a list all hold (`and`, the default) or one does (`or`).
    pub(crate) any: bool,
    /// What each metric is given (`result`), by getter; none for `infeasible`.
    pub(crate) result: Vec<Getter>,
    /// What each metric compares with (`expected`), by getter, where it has one.
    pub(crate) expected: Vec<Option<Getter>>,
    /// Steps run before the getters (`postconfig`: saving the document, ...).
    pub(crate) postconfig: Vec<Step>,
}

/// A getter's configuration (`{"type": "vm_file", ...}`): OSWorld's `get_<type>`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Getter {
    /// Its type.
    pub(crate) kind: String,
    /// The rest of its configuration.
    pub(crate) config: Map<String, Value>,
}

impl OsWorldTask {
    /// Reads an OSWorld task's JSON object; `Err` holds every flaw found.
    pub(crate) fn read(value: &Value) -> Result<Self, Vec<Flaw>> {
        read::read(value)
    }

    /// Whether OSWorld scores it as infeasible: the agent's `FAIL` is the pass.
    pub(crate) fn infeasible(&self) -> bool {
        self.evaluator.funcs.iter().any(|f| f == "infeasible")
    }

    /// Its domain as OSWorld names its folders, from its apps where its file's folder
    /// does not say (a recorded plan of it): the one app (`libreoffice calc` is
    /// `libreoffice_calc`), else `multi_apps`.
    pub(crate) fn domain(&self) -> String {
        match self.related_apps.as_slice() {
            [one] => match one
                .trim()
                .to_ascii_lowercase()
                .replace([' ', '-'], "_")
                .as_str()
            {
                "vscode" => "vs_code".to_string(),
                other => other.to_string(),
            },
            _ => "multi_apps".to_string(),
        }
    }

    /// Whether it is about the operating system alone (`related_apps` only `os`): the
    /// LinuxAgent's, with shell tools, as in UFO's Linux session.
    pub(crate) fn os_only(&self) -> bool {
        !self.related_apps.is_empty()
            && self
                .related_apps
                .iter()
                .all(|a| a.trim().eq_ignore_ascii_case("os"))
    }

    /// What it needs of the machine that runs it.
    pub(crate) fn needs(&self) -> Needs {
        needs::of(self)
    }

    /// The step types, getter types and metric names it uses, for OSWorld's code to
    /// say whether it has them.
    pub(crate) fn names(&self) -> Names<'_> {
        let steps = self.config.iter().chain(&self.evaluator.postconfig);
        let getters = self
            .evaluator
            .result
            .iter()
            .chain(self.evaluator.expected.iter().flatten());
        Names {
            steps: steps.map(|s| s.kind.as_str()).collect(),
            getters: getters.map(|g| g.kind.as_str()).collect(),
            metrics: self.evaluator.funcs.iter().map(String::as_str).collect(),
        }
    }
}

/// The names of OSWorld's code a task uses.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Names<'a> {
    /// Setup step types (`config` and `postconfig`).
    pub(crate) steps: std::collections::BTreeSet<&'a str>,
    /// Getter types (`result`, `expected`).
    pub(crate) getters: std::collections::BTreeSet<&'a str>,
    /// Metric functions.
    pub(crate) metrics: std::collections::BTreeSet<&'a str>,
}

#[cfg(test)]
mod tests;
