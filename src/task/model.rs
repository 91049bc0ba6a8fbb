//! The validated task: what a task file means once its shape is known. Everything the
//! runner needs is here, typed; nothing refers back to the raw JSON.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use super::{Action, Check, TaskId};

/// A task ready to run.
#[derive(Clone, Debug)]
pub(crate) struct Task {
    /// Unique id within the run; names the task's results folder.
    pub(crate) id: TaskId,
    /// The task file it came from (empty for `--request`).
    pub(crate) source: PathBuf,
    /// A hash of the file's bytes, so a resumed run notices an edited task.
    pub(crate) source_hash: String,
    /// The shape and what it carries.
    pub(crate) shape: TaskShape,
    /// The request text given to the agent and the evaluator.
    pub(crate) request: String,
    /// UFO's `object`: the file or application the task is about.
    pub(crate) object: Option<String>,
    /// The file `object` names, found when the task file loaded.
    pub(crate) object_file: Option<super::ObjectFile>,
    /// For a recorded plan: the verdict it was recorded with.
    pub(crate) recorded: Option<RecordedVerdict>,
    /// The desktop application the task is about, if it names one.
    pub(crate) app: Option<App>,
    /// UFO's `close`: close the application afterwards.
    pub(crate) close: bool,
    /// The session kind the task asks for (`mode`: UFO's `normal`, `operator`,
    /// `normal_operator`), over the run's `--mode`.
    pub(crate) mode: Option<SessionMode>,
    /// The OSWorld task it is (an OSWorld task file, or a plan recorded from one): its
    /// setup, the desktop it needs and OSWorld's evaluator.
    pub(crate) osworld: Option<std::sync::Arc<super::osworld::OsWorldTask>>,
    /// A recorded plan whose agent said, after its actions, that the task cannot be
    /// done (`last_action: FAIL`): its replay ends saying the same.
    pub(crate) says_fail: bool,
    /// Free-form labels, carried into results.
    pub(crate) tags: Vec<String>,
    /// Wall-clock limit for this task, overriding the run's `--timeout`.
    pub(crate) timeout: Option<Duration>,
    /// Step limit for this task, overriding `--max-steps`.
    pub(crate) max_steps: Option<u32>,
    /// Files written into the workspace before anything runs (relative path → content).
    pub(crate) files: BTreeMap<String, String>,
    /// Actions run before the session; not part of the trajectory.
    pub(crate) setup: Vec<Action>,
    /// Deterministic checks deciding the outcome.
    pub(crate) checks: Vec<Check>,
    /// Non-fatal remarks found while loading (unknown keys, lenient conversions).
    pub(crate) warnings: Vec<String>,
    /// With `--repeat`: which repetition this is (its id ends in `/rep-N`).
    pub(crate) repeat: Option<u32>,
}

impl Task {
    /// A task of `shape` on `request`, with no optional keys set.
    pub(crate) fn new(
        id: TaskId,
        source: impl Into<PathBuf>,
        shape: TaskShape,
        request: String,
    ) -> Self {
        Self {
            id,
            source: source.into(),
            source_hash: crate::hash::hex(request.as_bytes()),
            shape,
            request,
            object: None,
            object_file: None,
            recorded: None,
            app: None,
            close: false,
            mode: None,
            osworld: None,
            says_fail: false,
            tags: Vec::new(),
            timeout: None,
            max_steps: None,
            files: BTreeMap::new(),
            setup: Vec::new(),
            checks: Vec::new(),
            warnings: Vec::new(),
            repeat: None,
        }
    }

    /// Whether the task needs a desktop (design.md §2): one for an operator; one that
    /// names an `app`; an OSWorld task (its setup and evaluator work on one); a
    /// recorded plan that uses UFO's app tools; an LLM task whose `object` is an office
    /// document or names an application (UFO's FromFileSession and FollowerSession).
    /// Text files and tables as objects stay with the shell's tools.
    pub(crate) fn is_desktop(&self) -> bool {
        if self.app.is_some()
            || self.osworld.is_some()
            || self.mode.is_some_and(SessionMode::operates)
        {
            return true;
        }
        match &self.shape {
            TaskShape::RecordedPlan { actions } => actions
                .iter()
                .any(|a| crate::tool::is_desktop_tool(&a.action)),
            _ => self.desktop_object().is_some(),
        }
    }

    /// The app the task's `object` means, when it is an office document or an app's
    /// name (`draft.docx`, `notepad`).
    pub(crate) fn desktop_object(&self) -> Option<super::Known> {
        use super::Known;
        let object = self.object.as_deref()?.trim();
        match Known::for_document(object) {
            Some(Known::Notepad) => None,
            Some(office) if !object.to_ascii_lowercase().ends_with(".csv") => Some(office),
            Some(_) => None,
            None if self.object_file.is_none() => Known::from_name(object),
            None => None,
        }
    }

    /// Whether its LLM agent is the LinuxAgent with shell tools although it runs on a
    /// desktop: an OSWorld task about the operating system alone (UFO's Linux session;
    /// its commands act on the same desktop's files).
    pub(crate) fn shell_agent(&self) -> bool {
        self.osworld.as_ref().is_some_and(|o| o.os_only())
    }

    /// An OSWorld task's domain: the folder of its file (`examples/<domain>/<id>.json`),
    /// or for a recorded plan of one, its first related app.
    pub(crate) fn domain(&self) -> Option<String> {
        let osworld = self.osworld.as_ref()?;
        let folder = self
            .source
            .parent()
            .and_then(std::path::Path::file_name)
            .map(|n| n.to_string_lossy().into_owned());
        match (self.shape_is_plan(), folder) {
            (false, Some(folder)) => Some(folder),
            _ => Some(osworld.domain()),
        }
    }

    fn shape_is_plan(&self) -> bool {
        matches!(self.shape, TaskShape::RecordedPlan { .. })
    }

    /// Repetition `n` of this task: id `ID/rep-n`.
    pub(crate) fn repetition(&self, n: u32) -> Task {
        Task {
            id: self.id.repetition(n),
            repeat: Some(n),
            ..self.clone()
        }
    }
}

/// The kind of session an LLM task runs as (UFO's `--mode`, ufo.md §0): the HostAgent
/// and its AppAgents (or the LinuxAgent off a desktop), an operator on the whole desktop,
/// or the HostAgent handing its subtasks to an operator. A recorded plan replays
/// whatever its mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(
    rename_all = "snake_case",
    expecting = "a session mode: \"normal\", \"operator\" or \"normal_operator\""
)]
pub(crate) enum SessionMode {
    /// UFO's `normal`: the HostAgent → AppAgent pair on a desktop, the LinuxAgent off one.
    Normal,
    /// UFO's `operator` (`OpenAIOperatorSession`): one operator on the whole desktop.
    Operator,
    /// UFO's `normal_operator`: the HostAgent, its subtasks done by an operator in the
    /// window it selects.
    NormalOperator,
}

impl SessionMode {
    /// Whether an operator does the work.
    pub(crate) fn operates(self) -> bool {
        matches!(self, Self::Operator | Self::NormalOperator)
    }

    /// The mode's name, as a task file and `--mode` write it.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::Normal => "normal",
            Self::Operator => "operator",
            Self::NormalOperator => "normal_operator",
        }
    }
}

impl std::str::FromStr for SessionMode {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim() {
            "normal" => Ok(Self::Normal),
            "operator" => Ok(Self::Operator),
            "normal_operator" => Ok(Self::NormalOperator),
            other => Err(format!(
                "unknown mode {other:?} (use normal, operator or normal_operator)"
            )),
        }
    }
}

/// The desktop application a task is about (`app`): one UFO knows by name, or a command
/// line that starts it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(
    untagged,
    expecting = "an application name such as \"word\", or {\"command\": [..]}"
)]
pub(crate) enum App {
    /// `word`, `excel`, `powerpoint`, `notepad`, ...
    Named(String),
    /// A command line.
    Command {
        /// The program and its arguments.
        command: Vec<String>,
    },
}

/// The verdict a recorded plan was recorded with (`plan.json`'s `recorded`): a replay
/// with no checks of its own rests on it, so that replaying a failure cannot pass.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub(crate) struct RecordedVerdict {
    /// The recorded task's status (`passed`, `failed`, ...).
    pub(crate) status: String,
    /// Who judged it (`checks`, `llm`), if anyone did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) evaluator: Option<String>,
    /// Why, in words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) reason: Option<String>,
}

/// The task shapes of design.md §2, with what each carries.
#[derive(Clone, Debug)]
pub(crate) enum TaskShape {
    /// `{"task", "object", "close"}`: an LLM agent works on the request.
    UfoRequest,
    /// `{"task", "steps": [..]}`: one LLM round per step.
    UfoStepPlan {
        /// The steps, one round each.
        steps: Vec<String>,
    },
    /// `{"request"}`: an LLM agent works on the request.
    SeedRequest,
    /// UFO dataflow's `{"app", "unique_id", "task", "refined_steps": [..]}`: one LLM
    /// round per refined step.
    UfoDataflow {
        /// The refined steps, one round each.
        steps: Vec<String>,
    },
    /// `{"request", "actions": [..]}`: replayed with no LLM.
    RecordedPlan {
        /// The actions, one step each.
        actions: Vec<Action>,
    },
}
