//! A task's executor with the run's MCP tools beside its own (UFO's CommandRouter):
//! a call of `SERVER.TOOL` goes to that server, with the injected arguments filled in,
//! anything else to the task's executor. A stdio server is started at the task's first
//! call of one of its tools and ended with the task. A server that cannot be started or
//! reached makes the attempt an infrastructure error; a tool's own failure, a refused
//! call or a timeout is the call's failed result.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{Map, Value};

use super::catalog::McpTool;
use super::config::McpServer;
use super::connection::CallError;
use super::error::McpError;
use super::hub::McpHub;
use super::result::tool_result;
use super::stdio::StdioServer;
use crate::executor::{Executor, Scope, Service, ServiceSpec, StepScreens};
use crate::tool::{Blamed, Failure, ToolCall, ToolResult};

/// The task's executor and the run's MCP servers.
pub(crate) struct McpRouter {
    inner: Box<dyn Executor>,
    hub: Arc<McpHub>,
    workspace: PathBuf,
    /// The task's stdio servers, by server index, started at first use.
    running: HashMap<usize, StdioServer>,
    fault: Option<Failure>,
}

impl McpRouter {
    /// Routes the task's calls between `inner` and the servers of `hub`; `workspace` is
    /// the task's (what `{workspace}` means in a stdio server's arguments).
    pub(crate) fn new(inner: Box<dyn Executor>, hub: Arc<McpHub>, workspace: PathBuf) -> Self {
        Self {
            inner,
            hub,
            workspace: workspace.canonicalize().unwrap_or(workspace),
            running: HashMap::new(),
            fault: None,
        }
    }

    async fn call(&mut self, command: &ToolCall, i: usize) -> ToolResult {
        let hub = self.hub.clone();
        let server = hub.server(i);
        let Some((_, tool)) = hub.lookup(&command.tool_name) else {
            unreachable!("routed here because the hub has it");
        };
        if let Err(e) = tool.spec.check_arguments(&command.parameters) {
            return ToolResult::failure(command, &server.name, Failure::agent(e), Value::Null);
        }
        let arguments = with_injected(server, tool, command);
        if let Err(e) = self.start(i).await {
            return self.failed(command, &server.name, e.failure());
        }
        let connection = match hub.shared(i) {
            Some(shared) => shared,
            None => self.running[&i].connection(),
        };
        let answer = connection.call(&tool.tool, arguments, server.timeout).await;
        let name = server.name.clone();
        let refused = |e: McpError| ToolResult::failure(command, &name, e.failure(), Value::Null);
        let result = match answer {
            Ok(answer) => tool_result(command, &server.name, &answer),
            // The call the agent made took too long, or the server refused it: the
            // agent sees why (its server still answers).
            Err(CallError::Timeout(limit)) => refused(McpError::CallTimeout {
                server: name.clone(),
                limit,
            }),
            Err(CallError::Refused(why)) => refused(McpError::CallRefused {
                server: name.clone(),
                why,
            }),
            Err(CallError::Gone(why)) => return self.gone(command, i, why).await,
        };
        let result = result.scrubbed();
        if let Some(argument) = crate::tool::refused_injection(&result, &tool.injected) {
            // The runner's own argument refused: no verdict on the agent.
            let why = McpError::InjectionRefused {
                server: server.name.clone(),
                argument: argument.to_string(),
                error: result.error.clone().unwrap_or_default(),
            };
            return self.failed(command, &server.name, why.failure());
        }
        result
    }

    /// Starts server `i` for the task, when it is a stdio server not running yet.
    async fn start(&mut self, i: usize) -> Result<(), McpError> {
        let hub = self.hub.clone();
        if hub.shared(i).is_some() || self.running.contains_key(&i) {
            return Ok(());
        }
        let server = hub.server(i);
        let started = StdioServer::start(server, self.inner.as_mut(), &self.workspace)
            .await
            .map_err(|source| McpError::NotStarted {
                server: server.name.clone(),
                source,
            })?;
        self.running.insert(i, started);
        Ok(())
    }

    /// A call whose server cannot be reached: the attempt's fault, saying what a stdio
    /// server (ended now) last wrote to stderr.
    async fn gone(&mut self, command: &ToolCall, i: usize, why: String) -> ToolResult {
        let hub = self.hub.clone();
        let server = &hub.server(i).name;
        let gone = McpError::Gone {
            server: server.clone(),
            why,
        }
        .failure();
        let gone = match self.running.remove(&i) {
            Some(running) => {
                let why = running.explain(gone.message).await;
                running.stop().await;
                Failure::new(gone.blame, why)
            }
            None => gone,
        };
        self.failed(command, server, gone)
    }

    /// A call that failed because its server did, or refused the runner's argument:
    /// the attempt is an `error`, its status decided by whose failure it is.
    fn failed(&mut self, command: &ToolCall, server: &str, why: Failure) -> ToolResult {
        let why = why.context(|w| crate::secrets::scrub(w).into_owned());
        self.fault.get_or_insert_with(|| why.clone());
        ToolResult::failure(command, server, why, Value::Null)
    }
}

/// The arguments of `command` with those the runner fills in that `tool` takes (the
/// server's others are not sent to it).
fn with_injected(server: &McpServer, tool: &McpTool, command: &ToolCall) -> Map<String, Value> {
    let mut arguments = command.parameters.clone();
    for injected in server
        .inject
        .iter()
        .filter(|i| tool.injected.contains(&i.argument))
    {
        arguments.insert(injected.argument.clone(), injected.value.clone().into());
    }
    arguments
}

/// `result` with every secret masked: a server may echo an injected value, and what a
/// tool returns goes back to the model.
#[async_trait]
impl Executor for McpRouter {
    async fn execute(&mut self, command: &ToolCall) -> ToolResult {
        match self.hub.lookup(&command.tool_name) {
            Some((i, _)) => self.call(command, i).await,
            None => self.inner.execute(command).await,
        }
    }

    fn fault(&self) -> Option<Failure> {
        self.fault.clone().or_else(|| self.inner.fault())
    }

    async fn prepare(&mut self) -> Result<Option<String>, Failure> {
        self.inner.prepare().await
    }

    async fn begin_step(&mut self, step: u32, scope: Scope) -> Option<StepScreens> {
        self.inner.begin_step(step, scope).await
    }

    fn tools(&self) -> Option<Vec<crate::tool::ToolSpec>> {
        self.inner.tools()
    }

    async fn fetch(&mut self, wanted: &[crate::executor::Fetch]) -> Result<(), Failure> {
        self.inner.fetch(wanted).await
    }

    async fn end_session(&mut self) -> Option<String> {
        self.inner.end_session().await
    }

    async fn start_service(&mut self, spec: &ServiceSpec<'_>) -> Result<Service, Failure> {
        self.inner.start_service(spec).await
    }

    async fn osworld_evaluate(
        &mut self,
        last: crate::osworld::LastAction,
    ) -> Option<Result<crate::osworld::Scored, Failure>> {
        self.inner.osworld_evaluate(last).await
    }

    async fn shutdown(&mut self) -> Option<String> {
        let started = self.running.len();
        for (_, server) in self.running.drain() {
            server.stop().await;
        }
        let inner = self.inner.shutdown().await;
        let ours =
            (started > 0).then(|| format!("ended {}", crate::text::plural(started, "MCP server")));
        match (ours, inner) {
            (Some(a), Some(b)) => Some(format!("{a}; {b}")),
            (a, b) => a.or(b),
        }
    }
}
