//! The run's MCP servers, made ready before any task starts: each stdio server is
//! started once (in a scratch folder, confined as a task's commands are) to list its tools, each HTTP server is connected
//! to and kept for the run. A server that cannot be started or reached stops the run
//! here, with why, rather than failing every task later.

use std::time::{Duration, Instant};

use super::catalog::{McpTool, catalog};
use super::config::{McpServer, Transport};
use super::connection::Connection;
use super::error::McpError;
use super::stdio::StdioServer;
use crate::executor::ShellSettings;
use crate::tool::ToolSpec;

/// How long an HTTP server may refuse connections at the start (it may still be coming up).
const HTTP_WAIT: Duration = Duration::from_secs(10);

/// One server and what it offers.
struct Hosted {
    config: McpServer,
    tools: Vec<McpTool>,
    /// What to say of the tools it listed that agents are not offered.
    note: Option<String>,
    /// The run's session with an HTTP server.
    shared: Option<Connection>,
}

/// Every MCP server of the run.
pub(crate) struct McpHub {
    servers: Vec<Hosted>,
}

impl McpHub {
    /// Readies `servers` (in order) for up to `jobs` tasks at once, a stdio server
    /// started to list its tools under `listing` (the run's sandbox and limits); the
    /// first that fails is the error.
    pub(crate) async fn start(
        servers: &[McpServer],
        jobs: usize,
        listing: &ShellSettings,
    ) -> Result<Self, McpError> {
        let mut hosted = Vec::new();
        for server in servers {
            hosted.push(Self::ready(server, jobs, listing).await.map_err(|e| {
                McpError::Server {
                    name: server.name.clone(),
                    transport: describe(server),
                    source: Box::new(e),
                }
            })?);
        }
        Ok(Self { servers: hosted })
    }

    async fn ready(
        server: &McpServer,
        jobs: usize,
        listing: &ShellSettings,
    ) -> Result<Hosted, McpError> {
        let (listed, shared) = match &server.transport {
            Transport::Stdio { .. } => {
                let scratch = Scratch::new(&server.name)?;
                let running = StdioServer::start_alone(server, &scratch.0, listing.clone())
                    .await
                    .map_err(McpError::Start)?;
                let listed = running.connection().tools().await;
                running.stop().await;
                (listed?, None)
            }
            Transport::Http { url, headers } => {
                let connection = connect_http(url, headers, jobs).await?;
                (connection.tools().await?, Some(connection))
            }
        };
        let catalog = catalog(server, &listed)?;
        Ok(Hosted {
            note: catalog.note(&server.name),
            tools: catalog.tools,
            config: server.clone(),
            shared,
        })
    }

    /// What to say before the run: the tools servers listed and agents are not offered.
    pub(crate) fn notes(&self) -> impl Iterator<Item = &str> {
        self.servers.iter().filter_map(|h| h.note.as_deref())
    }

    /// Every tool agents see, as specs.
    pub(crate) fn specs(&self) -> Vec<ToolSpec> {
        self.tools().map(|(_, t)| t.spec.clone()).collect()
    }

    /// Every tool with its server.
    pub(crate) fn tools(&self) -> impl Iterator<Item = (&McpServer, &McpTool)> {
        self.servers
            .iter()
            .flat_map(|h| h.tools.iter().map(move |t| (&h.config, t)))
    }

    /// The server (by index) and tool called `name` (`SERVER.TOOL`).
    pub(crate) fn lookup(&self, name: &str) -> Option<(usize, &McpTool)> {
        self.servers
            .iter()
            .enumerate()
            .find_map(|(i, h)| h.tools.iter().find(|t| t.spec.name == name).map(|t| (i, t)))
    }

    /// Server `i`'s configuration.
    pub(crate) fn server(&self, i: usize) -> &McpServer {
        &self.servers[i].config
    }

    /// The run's session with server `i`, when it is an HTTP server.
    pub(crate) fn shared(&self, i: usize) -> Option<&Connection> {
        self.servers[i].shared.as_ref()
    }
}

/// `stdio: node server.js` or `http: URL`, for messages.
fn describe(server: &McpServer) -> String {
    match &server.transport {
        Transport::Stdio { command, args, .. } => {
            format!(
                "stdio: {}",
                crate::text::shorten(
                    &[command.as_str()]
                        .into_iter()
                        .chain(args.iter().map(String::as_str))
                        .collect::<Vec<_>>()
                        .join(" "),
                    120
                )
            )
        }
        Transport::Http { url, .. } => format!("http: {}", crate::text::without_userinfo(url)),
    }
}

/// A session with an HTTP server, tried again for a while (it may be starting).
async fn connect_http(
    url: &str,
    headers: &[(String, String)],
    jobs: usize,
) -> Result<Connection, McpError> {
    let clock = Instant::now();
    loop {
        match Connection::over_http(url, headers, jobs).await {
            Ok(c) => return Ok(c),
            Err(_) if clock.elapsed() < HTTP_WAIT => {
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            Err(e) => return Err(e),
        }
    }
}

/// A scratch folder for listing a stdio server's tools, removed after.
struct Scratch(std::path::PathBuf);

impl Scratch {
    fn new(name: &str) -> Result<Self, McpError> {
        let dir = std::env::temp_dir().join(format!(
            "ufo-batch-mcp-{}-{name}-{}",
            std::process::id(),
            fastrand::u64(..)
        ));
        match std::fs::create_dir_all(&dir) {
            Ok(()) => Ok(Self(dir)),
            Err(source) => Err(McpError::Scratch { dir, source }),
        }
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
