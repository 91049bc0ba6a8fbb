//! Why an MCP server cannot be used: a session that cannot be opened, tools that cannot
//! be listed, what a server offers that does not fit the configuration, a server that
//! cannot be started; and whose failure each is.

use std::path::PathBuf;
use std::time::Duration;

use crate::tool::{Blame, Blamed, Failure};

/// An MCP server that cannot be reached, listed or started.
#[derive(Debug, thiserror::Error)]
pub(crate) enum McpError {
    /// A configured header that HTTP cannot carry.
    #[error("header `{name}`: {source}")]
    Header {
        /// The header's name (as HTTP has it, once it is one: lower case).
        name: String,
        /// What HTTP says is wrong.
        #[source]
        source: HeaderError,
    },
    /// The server did not complete the MCP handshake. The text is the transport's
    /// words without the client library's type names (`connection::plain`), so the
    /// library's error itself is not kept.
    #[error("the MCP handshake failed: {0}")]
    Handshake(String),
    /// No handshake within the limit.
    #[error("no MCP handshake within {}", humantime::format_duration(*.0))]
    HandshakeTimeout(Duration),
    /// The server did not list its tools.
    #[error("listing its tools failed: {0}")]
    List(#[source] rmcp::service::ServiceError),
    /// The server did not list its tools in time.
    #[error("it did not list its tools in time")]
    ListTimeout,
    /// `tools` of `[[mcp.servers]]` names tools the server does not offer.
    #[error(
        "`tools` names {}, which it does not offer (it has: {})",
        missing.iter().map(|m| format!("`{m}`")).collect::<Vec<_>>().join(", "),
        offered.join(", ")
    )]
    NotOffered {
        /// The tools named and not offered.
        missing: Vec<String>,
        /// The tools it offers.
        offered: Vec<String>,
    },
    /// A tool requires a credential nothing fills in.
    #[error(transparent)]
    Unfilled(#[from] UnfilledCredential),
    /// The folder a stdio server is started in to list its tools cannot be made.
    #[error("cannot make a scratch folder {}: {source}", dir.display())]
    Scratch {
        /// The folder.
        dir: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A stdio server could not be started (the executor says why, and whose it is).
    #[error(transparent)]
    Start(Failure),
    /// A task's stdio server could not be started.
    #[error("cannot start the MCP server `{server}`: {source}")]
    NotStarted {
        /// The server.
        server: String,
        /// Why, and whose failure it is.
        #[source]
        source: Failure,
    },
    /// A call the agent made took longer than the server's timeout (the server still
    /// answers).
    #[error(
        "the MCP server `{server}` did not answer within {}",
        humantime::format_duration(*limit)
    )]
    CallTimeout {
        /// The server.
        server: String,
        /// Its timeout.
        limit: Duration,
    },
    /// The server refused a call the agent made (an unknown tool, bad arguments).
    #[error("the MCP server `{server}` refused the call: {why}")]
    CallRefused {
        /// The server.
        server: String,
        /// The server's words (its protocol error's message).
        why: String,
    },
    /// The server cannot be reached any more (it ended, the connection broke).
    #[error("the MCP server `{server}` cannot be reached: {why}")]
    Gone {
        /// The server.
        server: String,
        /// The transport's words.
        why: String,
    },
    /// The server refused the argument the runner fills in.
    #[error(
        "the MCP server `{server}` refused the `{argument}` the runner fills in ([[mcp.servers]] inject): {error}"
    )]
    InjectionRefused {
        /// The server.
        server: String,
        /// The argument.
        argument: String,
        /// The failed result's error.
        error: String,
    },
    /// One of the run's servers cannot be readied.
    #[error("MCP server `{name}` ({transport}): {source}")]
    Server {
        /// Its name.
        name: String,
        /// `stdio: COMMAND` or `http: URL`.
        transport: String,
        /// Why.
        #[source]
        source: Box<McpError>,
    },
}

/// A tool that requires a credential the runner fills in, and nothing does: every call
/// of it would be refused. The run's configuration lacks it.
#[derive(Debug, thiserror::Error)]
#[error(
    "{tool} requires `{argument}`, a credential the runner fills in, and nothing does: add {key} (the variable holding it) to the config"
)]
pub(crate) struct UnfilledCredential {
    /// The tool, as a message names it (`its tool `x``).
    pub(super) tool: String,
    /// The credential.
    pub(super) argument: String,
    /// The config that would fill it in.
    pub(super) key: String,
}

/// A header name or value that HTTP cannot carry.
#[derive(Debug, thiserror::Error)]
pub(crate) enum HeaderError {
    /// Not a header name.
    #[error(transparent)]
    Name(#[from] reqwest::header::InvalidHeaderName),
    /// Not a header value.
    #[error(transparent)]
    Value(#[from] reqwest::header::InvalidHeaderValue),
}

impl Blamed for McpError {
    fn blame(&self) -> Blame {
        match self {
            // The run's configuration of the server: its headers, its allow-list, the
            // credentials it injects.
            Self::Header { .. } | Self::NotOffered { .. } | Self::Unfilled(_) => Blame::Config,
            // The server, or the machine it runs on.
            Self::Handshake(_) | Self::HandshakeTimeout(_) | Self::List(_) | Self::ListTimeout => {
                Blame::Environment
            }
            // What the agent asked of a server that still answers.
            Self::CallTimeout { .. } | Self::CallRefused { .. } => Blame::Agent,
            Self::Gone { .. } => Blame::Environment,
            // The runner's own argument: every call would be refused the same way.
            Self::InjectionRefused { .. } => Blame::Config,
            Self::Scratch { .. } => Blame::Runner,
            Self::Start(failure)
            | Self::NotStarted {
                source: failure, ..
            } => failure.blame,
            Self::Server { source, .. } => source.blame(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_that_does_not_answer_is_the_environments_and_its_config_the_runs() {
        let e = McpError::Server {
            name: "fs".into(),
            transport: "stdio: node server.js".into(),
            source: Box::new(McpError::HandshakeTimeout(Duration::from_secs(30))),
        };
        assert_eq!(
            e.to_string(),
            "MCP server `fs` (stdio: node server.js): no MCP handshake within 30s"
        );
        assert_eq!(e.blame(), Blame::Environment);
        let f = e.failure();
        assert_eq!(f.message, e.to_string(), "the cause is said once");
        let listed = McpError::NotOffered {
            missing: vec!["a".into(), "b".into()],
            offered: vec!["c".into()],
        };
        assert_eq!(
            listed.to_string(),
            "`tools` names `a`, `b`, which it does not offer (it has: c)"
        );
        assert_eq!(listed.blame(), Blame::Config);
        let started = McpError::Start(Failure::new(Blame::TaskFile, "no such program"));
        assert_eq!(
            (started.to_string().as_str(), started.blame()),
            ("no such program", Blame::TaskFile)
        );
    }

    #[test]
    fn a_call_the_server_refuses_is_the_agents_and_a_refused_injection_the_configs() {
        let refused = McpError::CallRefused {
            server: "fs".into(),
            why: "unknown tool".into(),
        };
        assert_eq!(
            refused.failure(),
            Failure::agent("the MCP server `fs` refused the call: unknown tool")
        );
        let slow = McpError::CallTimeout {
            server: "fs".into(),
            limit: Duration::from_secs(5),
        };
        assert_eq!(
            (slow.to_string().as_str(), slow.blame()),
            ("the MCP server `fs` did not answer within 5s", Blame::Agent)
        );
        let gone = McpError::Gone {
            server: "fs".into(),
            why: "it closed".into(),
        };
        assert_eq!(gone.blame(), Blame::Environment);
        let key = McpError::InjectionRefused {
            server: "linux".into(),
            argument: "api_key".into(),
            error: "Authentication failed.".into(),
        };
        assert_eq!(key.blame(), Blame::Config);
        assert_eq!(
            key.to_string(),
            "the MCP server `linux` refused the `api_key` the runner fills in ([[mcp.servers]] inject): Authentication failed."
        );
        let not_started = McpError::NotStarted {
            server: "fs".into(),
            source: Failure::environment("no pipes"),
        };
        assert_eq!(
            not_started.failure(),
            Failure::environment("cannot start the MCP server `fs`: no pipes")
        );
    }
}
