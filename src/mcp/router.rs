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
use serde_json::Value;

use super::connection::CallError;
use super::hub::McpHub;
use super::result::tool_result;
use super::stdio::StdioServer;
use crate::executor::{Executor, Scope, Service, ServiceSpec, StepScreens};
use crate::tool::{Blame, Failure, ToolCall, ToolResult};

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
        let mut arguments = command.parameters.clone();
        for injected in server
            .inject
            .iter()
            .filter(|i| tool.injected.contains(&i.argument))
        {
            arguments.insert(injected.argument.clone(), injected.value.clone().into());
        }
        if hub.shared(i).is_none() && !self.running.contains_key(&i) {
            match StdioServer::start(server, self.inner.as_mut(), &self.workspace).await {
                Ok(started) => {
                    self.running.insert(i, started);
                }
                Err(e) => {
                    let why = e
                        .context(|e| format!("cannot start the MCP server `{}`: {e}", server.name));
                    return self.failed(command, &server.name, why);
                }
            }
        }
        let connection = match hub.shared(i) {
            Some(shared) => shared,
            None => self.running[&i].connection(),
        };
        let answer = connection.call(&tool.tool, arguments, server.timeout).await;
        let result = match answer {
            Ok(answer) => tool_result(command, &server.name, &answer),
            // The call the agent made took too long, or the server refused it: the
            // agent sees why (its server still answers).
            Err(CallError::Timeout(limit)) => ToolResult::failure(
                command,
                &server.name,
                Failure::agent(format!(
                    "the MCP server `{}` did not answer within {}",
                    server.name,
                    humantime::format_duration(limit)
                )),
                Value::Null,
            ),
            Err(CallError::Refused(why)) => ToolResult::failure(
                command,
                &server.name,
                Failure::agent(format!(
                    "the MCP server `{}` refused the call: {why}",
                    server.name
                )),
                Value::Null,
            ),
            Err(CallError::Gone(why)) => {
                let why = format!("the MCP server `{}` cannot be reached: {why}", server.name);
                let why = match self.running.remove(&i) {
                    Some(gone) => {
                        let why = gone.explain(why).await;
                        gone.stop().await;
                        why
                    }
                    None => why,
                };
                return self.failed(command, &server.name, Failure::environment(why));
            }
        };
        let result = result.scrubbed();
        if let Some(argument) = crate::tool::refused_injection(&result, &tool.injected) {
            // The runner's own argument refused: no verdict on the agent.
            let why = Failure::new(
                Blame::Config,
                format!(
                    "the MCP server `{}` refused the `{argument}` the runner fills in ([[mcp.servers]] inject): {}",
                    server.name,
                    result.error.as_deref().unwrap_or_default()
                ),
            );
            return self.failed(command, &server.name, why);
        }
        result
    }

    /// A call that failed because its server did, or refused the runner's argument:
    /// the attempt is an `error`, its status decided by whose failure it is.
    fn failed(&mut self, command: &ToolCall, server: &str, why: Failure) -> ToolResult {
        let why = why.context(|w| crate::secrets::scrub(w).into_owned());
        self.fault.get_or_insert_with(|| why.clone());
        ToolResult::failure(command, server, why, Value::Null)
    }
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
