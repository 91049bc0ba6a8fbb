//! Preparing a batch before anything runs: load the tasks (and `--request`s), take this
//! machine's shard, repeat, find the sandbox this machine offers, open the run dir and
//! decide what a resumed run keeps, and build the LLM client when some task needs it.
//! Everything that can be refused is refused here, before a task starts.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

use super::experience::open_experience;
use super::inputs::SharedSettings;
use super::{BatchError, RunSettings};
use crate::device::DeviceHub;
use crate::executor::sandbox::{self, Sandbox};
use crate::executor::{ShellSettings, all_tools};
use crate::experience::Experience;
use crate::llm::{LlmClient, Spend};
use crate::mcp::McpHub;
use crate::pool::Scheduled;
use crate::record::EncodedRows;
use crate::rundir::{Discarding, RunLayout, RunLock, plan_resume};
use crate::task::{InvalidTask, TaskId};
use crate::tool::ToolSpec;
use crate::units::Timestamp;

mod llm;
mod queued;
mod tasks;

use llm::{client, operator_client, refuse_agents_without_llm};
use tasks::{load, select};

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
