//! Preparing a batch before anything runs: load the tasks (and `--request`s), take this
//! machine's shard, repeat, find the sandbox this machine offers, open the run dir and
//! decide what a resumed run keeps, and build the LLM client when some task needs it.
//! Everything that can be refused is refused here, before a task starts.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use super::experience::open_experience;
use super::inputs::{Held, SharedSettings};
use super::sources::load_tasks_as;
use super::{BatchError, RunSettings};
use crate::device::DeviceHub;
use crate::executor::sandbox::{self, Sandbox};
use crate::executor::{ShellSettings, all_tools};
use crate::experience::Experience;
use crate::llm::{ApiKey, LlmClient, LlmConfig, Spend};
use crate::mcp::McpHub;
use crate::pool::Scheduled;
use crate::record::{EncodedRows, Inputs, TaskRecord};
use crate::rundir::{Discarding, Resumable, RunLayout, RunLock, plan_resume};
use crate::task::{
    FilePlace, Identified, InvalidTask, LoadedTasks, REQUEST_SOURCE, Task, TaskId, TaskShape,
    TaskSource,
};
use crate::text::without_userinfo;
use crate::tool::ToolSpec;
use crate::units::Timestamp;

/// A batch ready to run.
pub(crate) struct Prepared {
    /// The run dir.
    pub(crate) layout: RunLayout,
    /// Every task id of the batch before sharding, sorted.
    pub(crate) selection: Vec<TaskId>,
    /// Task files that cannot run (each becomes an `error` result).
    pub(crate) invalid: Vec<InvalidTask>,
    /// Final results kept from earlier invocations (what the run-level files read).
    pub(crate) kept: EncodedRows,
    /// Why results that would have been kept run again, with how many.
    pub(crate) rerun: BTreeMap<String, usize>,
    /// Tasks to run.
    pub(crate) work: Vec<Scheduled>,
    /// Invocations of this run dir before this one.
    pub(crate) previous_invocations: u32,
    /// An old run dir being deleted (`--fresh`).
    pub(crate) discarding: Discarding,
    /// How commands are confined here.
    pub(crate) sandbox: Sandbox,
    /// Said at the start when the sandbox is weaker than asked.
    pub(crate) sandbox_warning: Option<String>,
    /// This runner's hold on the run dir, released when the batch is done.
    pub(crate) lock: RunLock,
    /// The LLM client, when some task needs one.
    pub(crate) llm: Option<Arc<LlmClient>>,
    /// The operator's settings and client, when an operator works on some task.
    pub(crate) operator: Option<crate::agent::OperatorRun>,
    /// The run's LLM spend, shared by the client and the budget.
    pub(crate) spend: Arc<Spend>,
    /// The run's MCP servers, when it has any.
    pub(crate) mcp: Option<Arc<McpHub>>,
    /// The device server, when the run's tasks go to UFO's device clients.
    pub(crate) devices: Option<Arc<DeviceHub>>,
    /// The run's experience, when it saves or gives any.
    pub(crate) experience: Option<Arc<Experience>>,
    /// What opening it had to say (records left out, an empty file).
    pub(crate) experience_notes: Vec<String>,
    /// When preparing began: the run's time counts from then (finding, reading and
    /// deciding a million tasks takes seconds).
    pub(crate) began: Instant,
    /// The same, as a date.
    pub(crate) began_at: Timestamp,
}

/// A valid task as the batch holds it until it runs: by its file, with what its result
/// will depend on and what it needs of the LLM (64 bytes: a batch holds a million).
struct Queued {
    source: TaskSource,
    held: Arc<Held>,
    /// Its earlier record, when it runs again.
    previous: Option<Box<TaskRecord>>,
}

impl Queued {
    fn of(
        task: Task,
        file: Option<FilePlace>,
        config: &RunSettings,
        shared: &SharedSettings,
    ) -> Self {
        Self {
            held: shared.held(&task, config),
            source: TaskSource::of(task, file),
            previous: None,
        }
    }

    fn repetition(&self, n: u32) -> Self {
        Self {
            source: self.source.repetition(n),
            held: Arc::clone(&self.held),
            previous: None,
        }
    }
}

impl Identified for Queued {
    fn id(&self) -> &TaskId {
        self.source.id()
    }
    fn source(&self) -> Cow<'_, Path> {
        self.source.path()
    }
    fn source_hash(&self) -> String {
        self.source.source_hash()
    }
}

impl Resumable for Queued {
    fn inputs(&self) -> Inputs {
        self.held.inputs.with_task_file(self.source.source_hash())
    }
    fn resume_from(&mut self, previous: Box<TaskRecord>) {
        self.previous = Some(previous);
    }
    fn keeps_error(blame: crate::tool::Blame) -> bool {
        crate::attempt::rule(blame).kept_on_resume
    }
}

/// Prepares the batch `config` describes.
pub(crate) async fn prepare(config: &RunSettings) -> Result<Prepared, BatchError> {
    let (began, began_at) = (Instant::now(), Timestamp::now());
    register_keys(config);
    let (mcp, devices) = start_hubs(config).await?;
    let mut tools = task_tools(mcp.as_deref());
    if devices.is_some() {
        // A device's tools are known once it connects: a plan may call any of them.
        tools.push(ToolSpec::any());
    }
    // The sandbox is probed while the task files load: a jail's probe starts its
    // factory and makes a jail, milliseconds that are mostly waiting.
    let shim = std::env::current_exe().ok();
    let probing = {
        let (mode, shim) = (config.sandbox, shim.clone());
        std::thread::Builder::new()
            .name("sandbox-probe".into())
            .spawn(move || sandbox::resolve(mode, shim.as_deref()))
    };
    // Each task is kept by its file once its inputs are known: a batch never holds
    // every task's parsed plan.
    let shared = SharedSettings::new(config);
    let mut loaded = load(config, tools.into(), &shared)?;
    let selection = select(&mut loaded, config)?;
    let probed = match probing {
        Ok(probe) => probe.join().map_err(|_| {
            BatchError::Refused("internal error: the sandbox probe panicked".to_string())
        })?,
        // No thread to spare: probed here.
        Err(_) => sandbox::resolve(config.sandbox, shim.as_deref()),
    };
    let (sandbox, sandbox_warning) = probed.map_err(|e| BatchError::Refused(e.to_string()))?;
    let layout = RunLayout::new(&config.run_dir);
    let resumed = plan_resume(&layout, loaded.tasks, config.resume)?;
    let spend = Arc::new(Spend::default());
    let llm = match &config.llm {
        Some(c) => client(c, &resumed.work, spend.clone()).await?,
        None => {
            refuse_agents_without_llm(&resumed.work)?;
            None
        }
    };
    let operator = operator_client(config, &resumed.work, spend.clone()).await?;
    let work: Vec<Scheduled> = resumed
        .work
        .into_iter()
        .map(|queued| Scheduled {
            task: queued.source,
            inputs: queued.held.inputs.clone(),
            previous: queued.previous,
        })
        .collect();
    let (experience, experience_notes) = open_experience(config)?;
    crate::resources::release_free_memory();
    Ok(Prepared {
        layout,
        selection,
        invalid: loaded.invalid,
        kept: resumed.kept,
        rerun: resumed.rerun,
        work,
        previous_invocations: resumed.previous_invocations,
        discarding: resumed.discarding,
        lock: resumed.lock,
        sandbox,
        sandbox_warning,
        llm,
        operator,
        spend,
        mcp,
        devices,
        experience,
        experience_notes,
        began,
        began_at,
    })
}

/// The run's MCP servers and device hub, when it has them; one that cannot start refuses
/// the run.
async fn start_hubs(
    config: &RunSettings,
) -> Result<(Option<Arc<McpHub>>, Option<Arc<DeviceHub>>), BatchError> {
    let refused = |e: &dyn std::fmt::Display| BatchError::Refused(e.to_string());
    let mcp = if config.mcp.is_empty() {
        None
    } else {
        // A stdio server started to list its tools is confined as the tasks' are.
        let listing = if config.mcp.iter().any(|s| s.kind() == "stdio") {
            let shim = std::env::current_exe().ok();
            let (sandbox, _) =
                sandbox::resolve(config.sandbox, shim.as_deref()).map_err(|e| refused(&e))?;
            ShellSettings {
                sandbox,
                ..config.shell.clone()
            }
        } else {
            config.shell.clone()
        };
        Some(Arc::new(
            McpHub::start(&config.mcp, config.jobs.get(), &listing)
                .await
                .map_err(|e| refused(&e))?,
        ))
    };
    let devices = match &config.devices {
        Some(settings) => Some(
            DeviceHub::start(settings.clone())
                .await
                .map_err(|e| refused(&e))?,
        ),
        None => None,
    };
    Ok((mcp, devices))
}

/// The task files' tasks and the `--request`s, each held by its inputs.
fn load(
    config: &RunSettings,
    tools: Arc<[ToolSpec]>,
    shared: &SharedSettings,
) -> Result<LoadedTasks<Queued>, BatchError> {
    let keep = |task: Task, file| Queued::of(task, Some(file), config, shared);
    let mut loaded = if config.paths.is_empty() {
        LoadedTasks::default()
    } else {
        load_tasks_as(&config.paths, Some(&config.out_root), tools, keep)?
    };
    loaded.tasks.extend(
        request_tasks(&config.requests)
            .into_iter()
            .map(|task| Queued::of(task, None, config, shared)),
    );
    Ok(loaded)
}

/// Every id of the batch (returned), and the tasks this run makes of it: this machine's
/// shard, each repeated `--repeat` times. More runs than one run takes refuse it.
fn select(
    loaded: &mut LoadedTasks<Queued>,
    config: &RunSettings,
) -> Result<Vec<TaskId>, BatchError> {
    let runs = (loaded.tasks.len() as u64) * u64::from(config.repeat.unwrap_or(1));
    if runs > MAX_TASK_RUNS {
        return Err(BatchError::Refused(format!(
            "{} × --repeat {} is {runs} task runs, more than the {MAX_TASK_RUNS} one run takes: repeat fewer times, or shard the batch (--shard I/N)",
            crate::text::plural(loaded.tasks.len(), "task"),
            config.repeat.unwrap_or(1)
        )));
    }
    let selection = all_ids(loaded, config.repeat.unwrap_or(1));
    if let Some(shard) = config.shard {
        loaded.tasks.retain(|t| shard.contains(t.id()));
        loaded.invalid.retain(|t| shard.contains(&t.id));
    }
    if let Some(k) = config.repeat.filter(|k| *k > 1) {
        loaded.tasks = loaded
            .tasks
            .iter()
            .flat_map(|t| (1..=k).map(|n| t.repetition(n)))
            .collect();
    }
    Ok(selection)
}

/// Every tool a recorded plan may call: the built-in ones and the MCP servers'.
pub(crate) fn task_tools(mcp: Option<&McpHub>) -> Vec<ToolSpec> {
    let mut tools = all_tools().to_vec();
    tools.extend(mcp.map(McpHub::specs).unwrap_or_default());
    tools
}

/// The API keys in this runner's environment (the configured variable and the usual
/// ones), registered as secrets: no byte the run writes or prints will hold them, even
/// when the run uses no LLM.
fn register_keys(config: &RunSettings) {
    let operator = config
        .operator
        .as_ref()
        .map(|(_, c)| c.api_key_env.as_str());
    crate::secrets::register_env_keys(
        config
            .llm
            .as_ref()
            .map(|c| c.api_key_env.as_str())
            .into_iter()
            .chain(operator),
    );
}

/// Tasks that need an LLM agent when none is configured: refused before any task runs
/// (each would only end in the same error). OSWorld's tasks are left to find out when
/// they start whether this machine runs them at all (an unsupported one needs no agent).
fn refuse_agents_without_llm(work: &[Queued]) -> Result<(), BatchError> {
    let needing: Vec<&str> = work
        .iter()
        .filter(|q| q.held.agent && !q.held.osworld)
        .map(|q| q.source.id().as_str())
        .collect();
    let Some(first) = needing.first() else {
        return Ok(());
    };
    let more = match needing.len() {
        1 => String::new(),
        n => format!(" and {} more", n - 1),
    };
    Err(BatchError::Refused(format!(
        "{first}{more} {} an LLM agent and none is configured: run with --model MODEL (the key goes in $OPENAI_API_KEY; --llm-base-url for another server)",
        if needing.len() == 1 { "needs" } else { "need" }
    )))
}

/// The run's LLM client, when some task will talk to the LLM (a replay needs none). A
/// hosted service without a key, or a server that cannot be reached, is refused before
/// anything runs.
async fn client(
    c: &LlmConfig,
    work: &[Queued],
    spend: Arc<Spend>,
) -> Result<Option<Arc<LlmClient>>, BatchError> {
    let key = ApiKey::from_env(&c.api_key_env);
    let needed = work.iter().any(|q| q.held.uses_llm);
    if !needed {
        return Ok(LlmClient::new(c.clone(), key, spend).map(Arc::new).ok());
    }
    let client = connected(c, key, spend, "").await?;
    Ok(Some(Arc::new(client)))
}

/// A client for `c` that can reach its server: refused when its hosted service has no
/// key (`whose` names whose endpoint it is in the words), or nothing answers.
async fn connected(
    c: &LlmConfig,
    key: Option<ApiKey>,
    spend: Arc<Spend>,
    whose: &str,
) -> Result<LlmClient, BatchError> {
    if key.is_none() && c.needs_key() {
        return Err(BatchError::Refused(format!(
            "no API key for {whose}{}: set ${} (keys are read only from the environment)",
            without_userinfo(&c.base_url),
            c.api_key_env
        )));
    }
    let client =
        LlmClient::new(c.clone(), key, spend).map_err(|e| BatchError::Internal(e.to_string()))?;
    client
        .probe()
        .await
        .map_err(|e| BatchError::Refused(e.to_string()))?;
    Ok(client)
}

/// The operator's client, when an operator works on some task: refused before anything
/// runs when none is configured, its hosted service has no key, or it cannot be reached.
async fn operator_client(
    config: &RunSettings,
    work: &[Queued],
    spend: Arc<Spend>,
) -> Result<Option<crate::agent::OperatorRun>, BatchError> {
    let Some(first) = work.iter().find(|q| q.held.operator) else {
        return Ok(None);
    };
    let Some((settings, c)) = &config.operator else {
        return Err(BatchError::Refused(format!(
            "{} runs as an operator and no computer-use model is configured: add [operator] to ufo-batch.toml (provider, model), or give --model for an open model over chat completions",
            first.source.id().as_str()
        )));
    };
    let key = ApiKey::from_env(&c.api_key_env);
    let client = connected(c, key, spend, "the operator's ").await?;
    Ok(Some(crate::agent::OperatorRun {
        settings: Arc::new(settings.clone()),
        client: Arc::new(client),
    }))
}

/// The most task runs (tasks × `--repeat`) one run takes: what it holds per task was
/// measured at a million (139 MB).
const MAX_TASK_RUNS: u64 = 10_000_000;

/// Every id of the batch, valid and invalid, sorted: with `--repeat K`, the K
/// repetitions of each valid task (they are what the run dir holds).
fn all_ids(loaded: &LoadedTasks<Queued>, repeat: u32) -> Vec<TaskId> {
    let repeat = repeat.max(1);
    // Made to its size and sorted in place: a million ids are the largest list of a run.
    let mut ids = Vec::with_capacity(loaded.tasks.len() * repeat as usize + loaded.invalid.len());
    for task in &loaded.tasks {
        match repeat {
            1 => ids.push(task.id().clone()),
            k => ids.extend((1..=k).map(|n| task.id().repetition(n))),
        }
    }
    ids.extend(loaded.invalid.iter().map(|t| t.id.clone()));
    ids.sort_unstable();
    ids
}

/// Tasks for `--request` texts: ids `request`, `request-2`, ...
fn request_tasks(requests: &[String]) -> Vec<Task> {
    requests
        .iter()
        .enumerate()
        .map(|(i, text)| {
            let id = if i == 0 {
                "request".to_string()
            } else {
                format!("request-{}", i + 1)
            };
            let id = TaskId::parse(&id).expect("request ids are valid");
            Task::new(id, REQUEST_SOURCE, TaskShape::SeedRequest, text.clone())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    /// A batch holds one of these per task until it starts: a million of them are most
    /// of a large run's memory, so their size is kept.
    #[test]
    fn a_queued_task_is_held_in_64_bytes() {
        assert!(std::mem::size_of::<super::Queued>() <= 64);
        assert!(std::mem::size_of::<crate::pool::Scheduled>() <= 64);
    }
}
