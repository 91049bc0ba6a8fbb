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
use crate::task::{Task, TaskShape};

/// The largest object file hashed whole (larger ones are hashed by size and time).
const HASHED_OBJECT: u64 = 256 << 20;

/// True when `task` will talk to the LLM under `config`: an agent, or the judge.
fn uses_llm(task: &Task, config: &RunSettings) -> bool {
    let agent = !matches!(task.shape, TaskShape::RecordedPlan { .. });
    let judged = match config.eval {
        EvalMode::Llm => true,
        EvalMode::Auto => task.checks.is_empty() && task.recorded.is_none() && config.llm.is_some(),
        // The judge also judges the tasks the checks decide.
        EvalMode::Both => {
            config.llm.is_some() && (!task.checks.is_empty() || task.recorded.is_none())
        }
        EvalMode::Checks | EvalMode::None => false,
    };
    agent || judged
}

/// The settings maps of a batch's inputs, and the inputs held for its tasks, one of
/// each: a batch's tasks share a few.
#[derive(Default)]
pub(super) struct SharedSettings(Mutex<Shared>);

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
    /// It needs an LLM agent (it is not a recorded plan).
    pub(super) agent: bool,
}

impl SharedSettings {
    /// `map`, or the equal one already shared.
    fn share(&self, map: BTreeMap<String, String>) -> Arc<BTreeMap<String, String>> {
        one_of(
            &mut self.0.lock().unwrap_or_else(|p| p.into_inner()).maps,
            map,
        )
    }

    /// What `task` holds until it starts under `config`: the same as another task's,
    /// when it is (a task given an object file has its own).
    pub(super) fn held(&self, task: &Task, config: &RunSettings) -> Arc<Held> {
        let held = Held {
            inputs: inputs_of(task, config, self).into(),
            uses_llm: uses_llm(task, config),
            agent: !matches!(task.shape, TaskShape::RecordedPlan { .. }),
        };
        if held.inputs.has_object() {
            return Arc::new(held);
        }
        one_of(
            &mut self.0.lock().unwrap_or_else(|p| p.into_inner()).held,
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
    tools(task, config, &mut settings);
    llm(task, config, &mut settings);
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
fn tools(task: &Task, config: &RunSettings, settings: &mut BTreeMap<String, String>) {
    let mut set = |name: &str, value: String| {
        settings.insert(name.to_string(), value);
    };
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
    if !config.mcp.is_empty() && (agent || calls_mcp) {
        let servers: Vec<serde_json::Value> = config
            .mcp
            .iter()
            .map(super::settings::server_json)
            .collect();
        set("mcp", serde_json::to_string(&servers).unwrap_or_default());
    }
    // The values the runner fills in (an MCP server's or a device's key): a refused one
    // is kept on resume as the configuration's error until it changes.
    let mut injected: Vec<String> = Vec::new();
    if !config.mcp.is_empty() && (agent || calls_mcp) {
        for server in &config.mcp {
            injected.extend(
                server
                    .inject
                    .iter()
                    .map(|i| format!("{}.{}#{}", server.name, i.argument, fingerprint(&i.value))),
            );
        }
    }
    if let Some(devices) = &config.devices {
        injected.extend(
            devices
                .inject
                .iter()
                .map(|i| format!("devices.{}#{}", i.argument, fingerprint(&i.value))),
        );
    }
    if !injected.is_empty() {
        set("injected", injected.join(", "));
    }
}

/// The LLM's settings, for a task that talks to it.
fn llm(task: &Task, config: &RunSettings, settings: &mut BTreeMap<String, String>) {
    let mut set = |name: &str, value: String| {
        settings.insert(name.to_string(), value);
    };
    if let Some(llm) = config.llm.as_ref().filter(|_| uses_llm(task, config)) {
        set("model", llm.model.clone());
        // A key the server refused is kept on resume as the configuration's error
        // until it changes.
        if let Some(key) = std::env::var(&llm.api_key_env)
            .ok()
            .filter(|k| !k.is_empty())
        {
            set(
                "api_key",
                format!("${}#{}", llm.api_key_env, fingerprint(&key)),
            );
        }
        set("base_url", crate::text::without_userinfo(&llm.base_url));
        set("api_type", format!("{:?}", llm.api_type).to_lowercase());
        set("temperature", llm.temperature.to_string());
        set("max_tokens", llm.max_tokens.to_string());
        set("response_format", format!("{:?}", llm.response_format));
        set(
            "agent",
            serde_json::to_string(&config.agent).unwrap_or_default(),
        );
        set("prompts", crate::agent::prompt_version());
    }
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
