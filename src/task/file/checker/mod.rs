//! Giving a task file's keys their meaning: which shape the keys make, its id, and the
//! checks of every key (timeouts, recorded actions against the tools, file paths,
//! check patterns), with every problem collected and located.

use std::path::Path;
use std::time::Duration;

use super::raw::{BoolLike, RawTask, Seconds, UniqueId};
use crate::task::{IdError, Problem, Task, TaskId, TaskShape};
use crate::tool::ToolSpec;

/// Collects problems and warnings while giving the raw keys their meaning.
pub(super) struct Checker<'a> {
    pub(super) file: &'a Path,
    pub(super) problems: Vec<Problem>,
    pub(super) warnings: Vec<String>,
}

impl Checker<'_> {
    fn problem(&mut self, at: &str, message: impl Into<String>, fix: impl Into<String>) {
        self.problems
            .push(Problem::new(self.file, message).at(at).fix(fix));
    }

    pub(super) fn build(
        &mut self,
        raw: RawTask,
        default_id: Result<TaskId, IdError>,
        tools: &[ToolSpec],
        text: &str,
    ) -> Option<Task> {
        let fallback = raw.unique_id.as_ref().map(UniqueId::text);
        // An OSWorld task file's `id` is OSWorld's (its cache folder's name): the task's
        // own is its path's (`libreoffice_calc/<id>`).
        let declared = raw.id.as_deref().filter(|_| raw.instruction.is_none());
        let id = self.id(declared, default_id, fallback.as_deref());
        let osworld = self.osworld(&raw, text);
        let says_fail = self.last_action(raw.last_action.as_deref());
        // Without a request the file has no shape, but every other key is still
        // checked, so that one reading says every problem.
        let shaped = self.shape(&raw);
        let close = self.close(raw.close);
        let timeout = self.timeout(raw.timeout);
        if raw.max_steps == Some(0) {
            self.problem(
                "max_steps",
                "max_steps is 0, so no step could run",
                "remove it or give a positive number",
            );
        }
        if let Some(actions) = &raw.actions {
            self.actions("actions", actions, tools);
        }
        let setup = raw.setup.unwrap_or_default();
        self.actions("setup", &setup, tools);
        let files = raw.files.unwrap_or_default();
        self.files(&files);
        let checks = raw.evaluate.unwrap_or_default();
        self.checks(&checks);
        let object_file = self.object(raw.object.as_deref(), &files);
        let (shape, request) = shaped?;
        Some(Task {
            id: id?,
            source: self.file.to_path_buf(),
            source_hash: crate::hash::hex(text.as_bytes()),
            shape,
            request,
            object_file,
            recorded: raw.recorded,
            app: raw.app,
            object: raw.object,
            close,
            mode: raw.mode,
            osworld,
            says_fail,
            tags: raw.tags.unwrap_or_default(),
            timeout,
            max_steps: raw.max_steps,
            files,
            setup,
            checks,
            warnings: Vec::new(),
            repeat: None,
        })
    }

    /// The task's id: the one it declares, else its path's, else (a dataflow file whose
    /// name makes no safe id) its `unique_id`.
    fn id(
        &mut self,
        declared: Option<&str>,
        default_id: Result<TaskId, IdError>,
        unique_id: Option<&str>,
    ) -> Option<TaskId> {
        let default_id = match (default_id, unique_id.map(TaskId::parse)) {
            (Err(_), Some(Ok(unique))) => Ok(unique),
            (path, _) => path,
        };
        match declared {
            Some(text) => match TaskId::parse(text) {
                Ok(id) => Some(id),
                Err(e) => {
                    self.problem(
                        "id",
                        e.to_string(),
                        "use letters, digits, '.', '_', '-' and '/' between folders",
                    );
                    None
                }
            },
            None => match default_id {
                Ok(id) => Some(id),
                Err(e) => {
                    self.problem(
                        "",
                        format!("{e} (the id comes from the file's path)"),
                        "rename the file, or set a safe \"id\" in it (letters, digits, '.', '_', '-')",
                    );
                    None
                }
            },
        }
    }

    /// Which shape the keys make, and its request text.
    fn shape(&mut self, raw: &RawTask) -> Option<(TaskShape, String)> {
        let task = raw.task.as_deref().map(str::trim).filter(|s| !s.is_empty());
        let request = raw
            .request
            .as_deref()
            .map(str::trim)
            .filter(|s| !s.is_empty());
        if let (Some(t), Some(r)) = (task, request)
            && t != r
        {
            self.warnings.push("both `task` and `request` are set; `request` is used for recorded plans, `task` otherwise".into());
        }
        let instruction = raw
            .instruction
            .as_deref()
            .map(str::trim)
            .filter(|s| !s.is_empty());
        let text = if raw.actions.is_some() {
            request.or(task)
        } else {
            task.or(request).or(instruction)
        };
        let Some(text) = text else {
            if raw.instruction.is_some() {
                // OSWorld's reader says so, where it is.
                return None;
            }
            let empty = raw.task.is_some() || raw.request.is_some();
            let (message, fix) = if empty {
                (
                    "the request is empty",
                    "write what the agent should do in \"request\" (or \"task\")",
                )
            } else {
                (
                    "no request: the file has neither \"request\" nor \"task\"",
                    "add \"request\": \"what to do\" (recorded plans and seed-doc files) or \"task\": \"what to do\" (UFO request files)",
                )
            };
            self.problem("", message, fix);
            return None;
        };
        let steps = raw.steps.as_ref().or(raw.refined_steps.as_ref());
        let shape = match (&raw.actions, steps) {
            (Some(actions), steps) => {
                if steps.is_some() {
                    self.warnings.push(
                        "`steps` ignored: the file has recorded `actions`, which are replayed"
                            .into(),
                    );
                }
                TaskShape::RecordedPlan {
                    actions: actions.clone(),
                }
            }
            (None, Some(steps)) => self.step_plan(raw, steps),
            (None, None) if task.is_some() => TaskShape::UfoRequest,
            (None, None) => TaskShape::SeedRequest,
        };
        Some((shape, text.to_string()))
    }

    /// A recorded plan's `last_action`: `FAIL`, the recorded agent's word that the task
    /// cannot be done (OSWorld's answer to an infeasible task), or nothing.
    fn last_action(&mut self, word: Option<&str>) -> bool {
        match word {
            None => false,
            Some("FAIL") => true,
            Some(other) => {
                self.problem(
                    "last_action",
                    format!("`last_action` is {other:?}; the only last action a plan records is \"FAIL\""),
                    "write \"last_action\": \"FAIL\" for a recording whose agent said the task cannot be done, or leave it out",
                );
                false
            }
        }
    }

    /// The OSWorld task: the file itself when it is one of OSWorld's (it has an
    /// `instruction`), or the one a recorded plan carries (`osworld`); each flaw is a
    /// problem where it is.
    fn osworld(
        &mut self,
        raw: &RawTask,
        text: &str,
    ) -> Option<std::sync::Arc<crate::task::osworld::OsWorldTask>> {
        let (value, prefix) = if raw.instruction.is_some() {
            (serde_json::from_str(text).ok()?, "")
        } else {
            (raw.osworld.clone()?, "osworld")
        };
        match crate::task::osworld::OsWorldTask::read(&value) {
            Ok(task) => Some(std::sync::Arc::new(task)),
            Err(flaws) => {
                for flaw in flaws {
                    let at = match (prefix, flaw.at.as_str()) {
                        ("", at) => at.to_string(),
                        (p, "") => p.to_string(),
                        (p, at) => format!("{p}.{at}"),
                    };
                    self.problem(&at, flaw.message, flaw.fix);
                }
                None
            }
        }
    }

    /// A UFO step plan (`steps`) or dataflow task (`refined_steps`); an empty list or
    /// step is a problem.
    fn step_plan(&mut self, raw: &RawTask, steps: &[String]) -> TaskShape {
        let key = if raw.steps.is_some() {
            "steps"
        } else {
            "refined_steps"
        };
        if steps.is_empty() {
            self.problem(
                key,
                format!("`{key}` is empty"),
                format!("list at least one step, or remove `{key}` to run the task as one request"),
            );
        }
        for (i, step) in steps.iter().enumerate() {
            if step.trim().is_empty() {
                self.problem(
                    &format!("{key}[{i}]"),
                    "the step is empty",
                    "write what this step should do, or remove it",
                );
            }
        }
        let steps = steps.to_vec();
        if raw.steps.is_some() {
            TaskShape::UfoStepPlan { steps }
        } else {
            TaskShape::UfoDataflow { steps }
        }
    }

    /// The file the task's `object` names. One the task's own `files` write into the
    /// workspace needs none; a missing office document is a problem (its app opens it);
    /// any other missing file is one the task may be about to make, and is told.
    fn object(
        &mut self,
        object: Option<&str>,
        files: &std::collections::BTreeMap<String, String>,
    ) -> Option<crate::task::ObjectFile> {
        let object = object?;
        let name = std::path::Path::new(object.trim()).file_name()?;
        let in_files = files
            .keys()
            .any(|f| std::path::Path::new(f).file_name() == Some(name));
        let office = crate::task::Known::for_document(object).is_some_and(|k| {
            k != crate::task::Known::Notepad && !object.to_ascii_lowercase().ends_with(".csv")
        });
        use crate::task::object::ObjectError;
        match crate::task::object::locate_object(self.file, object) {
            Ok(found) => found,
            Err(ObjectError::NotFound(_)) if in_files => None,
            Err(ObjectError::NotFound(e)) if !office => {
                self.warnings.push(format!(
                    "{e}; the task starts without it (an office document must exist: its app opens it)"
                ));
                None
            }
            Err(e) => {
                self.problem(
                    "object",
                    e.to_string(),
                    "put the file in PROJECT/files/ beside PROJECT/tasks/ (UFO's layout) or beside the task file",
                );
                None
            }
        }
    }

    fn close(&mut self, close: Option<BoolLike>) -> bool {
        match close {
            None => false,
            Some(BoolLike::Bool(b)) => b,
            Some(BoolLike::Text(t)) => match t.to_ascii_lowercase().as_str() {
                "true" => true,
                "false" => false,
                _ => {
                    self.problem("close", format!("`close` is {t:?}"), "use true or false");
                    false
                }
            },
        }
    }

    fn timeout(&mut self, timeout: Option<Seconds>) -> Option<Duration> {
        let fix = "give a positive number of seconds, or a duration such as \"90s\" or \"10m\"";
        match timeout? {
            Seconds::Number(n) => match crate::units::duration_from_seconds(n) {
                Ok(d) => Some(d),
                Err(e) => {
                    self.problem("timeout", format!("timeout {n} {e}"), fix);
                    None
                }
            },
            Seconds::Text(t) => match crate::units::parse_duration(&t) {
                Ok(d) => Some(d),
                Err(e) => {
                    self.problem("timeout", e.to_string(), fix);
                    None
                }
            },
        }
    }
}

mod lists;
