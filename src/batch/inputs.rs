//! What a task's result depends on, for the record and for resuming: the task file, its
//! object file, and those settings of this run that change the task's outcome. The
//! LLM's settings count only for a task that talks to the LLM (an agent or the judge),
//! the MCP servers only for one that can call their tools.

use std::collections::{BTreeMap, HashSet};
use std::sync::{Arc, Mutex};

use humantime::format_duration;

use super::RunSettings;
use crate::eval::EvalMode;
use crate::record::{HeldInputs, Inputs};
use crate::task::{SessionMode, Task, TaskShape};

/// The largest object file hashed whole (larger ones are hashed by size and time).
const HASHED_OBJECT: u64 = 256 << 20;

/// The session mode `task` runs in under `config`: its own, else the run's.
fn mode_of(task: &Task, config: &RunSettings) -> SessionMode {
    task.mode.or(config.mode).unwrap_or(SessionMode::Normal)
}

/// True when an operator works on `task` under `config` (a recorded plan replays,
/// whatever its mode).
pub(super) fn operates(task: &Task, config: &RunSettings) -> bool {
    !matches!(task.shape, TaskShape::RecordedPlan { .. }) && mode_of(task, config).operates()
}

/// True when `task` needs the LLM's agent under `config`: not a recorded plan, and not
/// an operator alone (a `normal_operator`'s HostAgent is the LLM's).
pub(super) fn needs_agent(task: &Task, config: &RunSettings) -> bool {
    !matches!(task.shape, TaskShape::RecordedPlan { .. })
        && mode_of(task, config) != SessionMode::Operator
}

/// True when `task` will talk to the LLM under `config`: an agent, or the judge.
fn uses_llm(task: &Task, config: &RunSettings) -> bool {
    let agent = needs_agent(task, config);
    // OSWorld's evaluator scores an OSWorld task: the judge only gives a second opinion.
    let scored = task.osworld.is_some();
    let judged = match config.eval {
        EvalMode::Llm => !scored,
        EvalMode::Auto => {
            !scored && task.checks.is_empty() && task.recorded.is_none() && config.llm.is_some()
        }
        // The judge also judges the tasks the checks decide.
        EvalMode::Both => {
            config.llm.is_some() && (scored || !task.checks.is_empty() || task.recorded.is_none())
        }
        EvalMode::Checks | EvalMode::None => false,
    };
    agent || judged
}

/// The settings maps of a batch's inputs, and the inputs held for its tasks, one of
/// each: a batch's tasks share a few.
pub(super) struct SharedSettings {
    shared: Mutex<Shared>,
    run: RunWide,
}

/// What every task's inputs take from the run alike, worked out once: the MCP servers,
/// the fingerprints of the values the runner fills in, the LLM's settings (its key read
/// from the environment once).
struct RunWide {
    /// The MCP servers, as JSON (none without servers).
    mcp: Option<String>,
    /// `server.argument#fingerprint` of each value injected into an MCP server's calls.
    mcp_injected: Vec<String>,
    /// `devices.argument#fingerprint` of each value injected into a device's calls.
    device_injected: Vec<String>,
    /// The LLM's settings, for a task that talks to it.
    llm: Vec<(&'static str, String)>,
    /// The operator's settings, for a task an operator works on.
    operator: Vec<(&'static str, String)>,
}

impl RunWide {
    fn of(config: &RunSettings) -> Self {
        let servers: Vec<serde_json::Value> = config
            .mcp
            .iter()
            .map(super::settings::server_json)
            .collect();
        let mcp_injected = config
            .mcp
            .iter()
            .flat_map(|server| {
                server
                    .inject
                    .iter()
                    .map(|i| format!("{}.{}#{}", server.name, i.argument, fingerprint(&i.value)))
            })
            .collect();
        let device_injected = config
            .devices
            .iter()
            .flat_map(|devices| &devices.inject)
            .map(|i| format!("devices.{}#{}", i.argument, fingerprint(&i.value)))
            .collect();
        Self {
            mcp: (!servers.is_empty()).then(|| serde_json::to_string(&servers).unwrap_or_default()),
            mcp_injected,
            device_injected,
            llm: llm_settings(config),
            operator: operator_settings(config),
        }
    }
}

#[derive(Default)]
struct Shared {
    maps: HashSet<Arc<BTreeMap<String, String>>>,
    held: HashSet<Arc<Held>>,
}

/// What a task not started shares with the tasks like it: the inputs its result will
/// depend on, and what it needs of the LLM.
#[derive(Debug, PartialEq, Eq, Hash)]
pub(super) struct Held {
    pub(super) inputs: HeldInputs,
    /// It talks to the LLM (an agent or the judge).
    pub(super) uses_llm: bool,
    /// It needs the LLM's agent (it is not a recorded plan, nor an operator's alone).
    pub(super) agent: bool,
    /// An operator works on it.
    pub(super) operator: bool,
    /// It is OSWorld's: whether it runs here at all is decided when it starts.
    pub(super) osworld: bool,
}

impl SharedSettings {
    /// The settings a batch run under `config` shares.
    pub(super) fn new(config: &RunSettings) -> Self {
        Self {
            shared: Mutex::default(),
            run: RunWide::of(config),
        }
    }

    /// `map`, or the equal one already shared.
    fn share(&self, map: BTreeMap<String, String>) -> Arc<BTreeMap<String, String>> {
        one_of(
            &mut self.shared.lock().unwrap_or_else(|p| p.into_inner()).maps,
            map,
        )
    }

    /// What `task` holds until it starts under `config`: the same as another task's,
    /// when it is (a task given an object file has its own).
    pub(super) fn held(&self, task: &Task, config: &RunSettings) -> Arc<Held> {
        let held = Held {
            inputs: inputs_of(task, config, self).into(),
            uses_llm: uses_llm(task, config),
            agent: needs_agent(task, config),
            operator: operates(task, config),
            osworld: task.osworld.is_some(),
        };
        if held.inputs.has_object() {
            return Arc::new(held);
        }
        one_of(
            &mut self.shared.lock().unwrap_or_else(|p| p.into_inner()).held,
            held,
        )
    }
}

/// `value` from `set`: the equal one already there, or `value`, added.
fn one_of<T: Eq + std::hash::Hash>(set: &mut HashSet<Arc<T>>, value: T) -> Arc<T> {
    if let Some(same) = set.get(&value) {
        return Arc::clone(same);
    }
    let value = Arc::new(value);
    set.insert(Arc::clone(&value));
    value
}

/// Four hex digits that change when a secret `value` does: enough to see that it
/// changed (one change in 65,536 goes unseen), too few to tell anything of the value.
fn fingerprint(value: &str) -> String {
    let hash = crate::hash::fnv1a64(format!("ufo-batch injected\0{value}").as_bytes());
    format!("{:04x}", hash >> 48)
}

/// The inputs of `task`'s result under `config`, with its settings map shared through
/// `shared`.
fn inputs_of(task: &Task, config: &RunSettings, shared: &SharedSettings) -> Inputs {
    let mut settings = BTreeMap::new();
    limits(task, config, &mut settings);
    tools(task, config, &shared.run, &mut settings);
    if uses_llm(task, config) {
        settings.extend(
            shared
                .run
                .llm
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone())),
        );
    }
    if operates(task, config) {
        settings.insert("mode".into(), mode_of(task, config).as_str().to_string());
        settings.extend(
            shared
                .run
                .operator
                .iter()
                .map(|(k, v)| (format!("operator.{k}"), v.clone())),
        );
    }
    experience(task, config, &mut settings);
    Inputs {
        task_file: task.source_hash.clone(),
        object: task
            .object_file
            .as_ref()
            .map(|object| match object.read(HASHED_OBJECT) {
                Ok(bytes) => crate::hash::hex(&bytes),
                Err(_) => object
                    .open()
                    .and_then(|(file, size)| Ok((size, file.metadata()?.modified().ok())))
                    .map(|(size, modified)| format!("{size}:{modified:?}"))
                    .unwrap_or_else(|e| e.to_string()),
            }),
        settings: shared.share(settings),
    }
}

/// The task's limits and how it is judged.
fn limits(task: &Task, config: &RunSettings, settings: &mut BTreeMap<String, String>) {
    let mut set = |name: &str, value: String| {
        settings.insert(name.to_string(), value);
    };
    set("eval", format!("{:?}", config.eval).to_lowercase());
    set(
        "timeout",
        format_duration(task.timeout.unwrap_or(config.timeout)).to_string(),
    );
    let limit = |v: Option<u32>| v.map_or_else(|| "default".to_string(), |n| n.to_string());
    set("max_steps", limit(task.max_steps.or(config.max_steps)));
    set("max_rounds", limit(config.max_rounds));
    set(
        "command_timeout",
        format_duration(config.shell.command_timeout).to_string(),
    );
    let shown = |v: Option<u64>| v.map_or_else(|| "none".to_string(), |n| n.to_string());
    set("memory_limit", shown(config.shell.limits.memory_bytes));
    set("cpu_limit", shown(config.shell.limits.cpu_seconds));
}

/// The MCP servers the task can call, and the values the runner fills in for them and
/// for the devices.
fn tools(
    task: &Task,
    config: &RunSettings,
    run: &RunWide,
    settings: &mut BTreeMap<String, String>,
) {
    // The MCP servers, for a task that can call their tools: an agent sees them all, a
    // plan calls those it names.
    let agent = !matches!(task.shape, TaskShape::RecordedPlan { .. });
    let calls_mcp = task
        .setup
        .iter()
        .chain(match &task.shape {
            TaskShape::RecordedPlan { actions } => actions.as_slice(),
            _ => &[],
        })
        .any(|a| {
            config
                .mcp
                .iter()
                .any(|s| a.action.starts_with(&format!("{}.", s.name)))
        });
    let mut injected: Vec<&str> = Vec::new();
    if let Some(servers) = run.mcp.as_ref().filter(|_| agent || calls_mcp) {
        settings.insert("mcp".into(), servers.clone());
        injected.extend(run.mcp_injected.iter().map(String::as_str));
    }
    // The values the runner fills in (an MCP server's or a device's key): a refused one
    // is kept on resume as the configuration's error until it changes.
    injected.extend(run.device_injected.iter().map(String::as_str));
    if !injected.is_empty() {
        settings.insert("injected".into(), injected.join(", "));
    }
}

/// The LLM's settings a task that talks to it depends on (none without an LLM).
fn llm_settings(config: &RunSettings) -> Vec<(&'static str, String)> {
    let Some(llm) = config.llm.as_ref() else {
        return Vec::new();
    };
    let mut settings = vec![("model", llm.model.clone())];
    // A key the server refused is kept on resume as the configuration's error until it
    // changes.
    settings.extend(key_fingerprint(&llm.api_key_env));
    settings.extend([
        ("base_url", crate::text::without_userinfo(&llm.base_url)),
        ("api_type", format!("{:?}", llm.api_type).to_lowercase()),
        ("temperature", llm.temperature.to_string()),
        ("max_tokens", llm.max_tokens.to_string()),
        ("response_format", format!("{:?}", llm.response_format)),
        (
            "agent",
            serde_json::to_string(&config.agent).unwrap_or_default(),
        ),
        ("prompts", crate::agent::prompt_version()),
    ]);
    settings
}

/// The operator's settings a task it works on depends on (none without an operator).
fn operator_settings(config: &RunSettings) -> Vec<(&'static str, String)> {
    let Some((operator, llm)) = config.operator.as_ref() else {
        return Vec::new();
    };
    let mut settings = vec![
        ("provider", operator.provider.name().to_string()),
        ("tool", operator.provider.version()),
        ("model", llm.model.clone()),
        ("base_url", crate::text::without_userinfo(&llm.base_url)),
        ("keep_screenshots", operator.keep_screenshots.to_string()),
        (
            "safety_checks",
            format!("{:?}", operator.safety_checks).to_lowercase(),
        ),
        ("scaler", format!("{:?}", operator.scaler)),
        ("max_tokens", operator.max_tokens.to_string()),
    ];
    settings.extend(key_fingerprint(&llm.api_key_env));
    settings
}

/// The key in `$var`, as a run's inputs hold it: the variable and the key's fingerprint.
fn key_fingerprint(var: &str) -> Option<(&'static str, String)> {
    let key = std::env::var(var).ok().filter(|k| !k.is_empty())?;
    Some(("api_key", format!("${var}#{}", fingerprint(&key))))
}

/// Where the agents' examples come from.
fn experience(task: &Task, config: &RunSettings, settings: &mut BTreeMap<String, String>) {
    let mut set = |name: &str, value: String| {
        settings.insert(name.to_string(), value);
    };
    let agent = !matches!(task.shape, TaskShape::RecordedPlan { .. });
    // What the agents are given as examples (its content grows; where it comes from is
    // what a resumed run compares).
    let e = &config.experience;
    if agent && let Some(dir) = &e.retrieve {
        set("experience", format!("{} (top {})", dir.display(), e.top_k));
    }
    if agent && let Some(dir) = &e.demonstrations {
        set(
            "demonstrations",
            format!("{} (top {})", dir.display(), e.top_k),
        );
    }
}
