//! MCP tool servers (UFO's command dispatch to MCP servers; design.md §3's `mcp`
//! executor): the servers a run is configured with (`config`), a client session with one
//! (`connection`), the run's servers readied before tasks start (`hub`), what agents see
//! of their tools (`catalog`), a task's own stdio server (`stdio`), how an answer becomes
//! a Result (`result`), and the router that sends a task's calls to them (`router`); a
//! stdio server's messages are bounded (`bounded`); why a server cannot be used, and
//! whose failure that is (`error`).

mod bounded;
mod catalog;
mod config;
mod connection;
mod error;
mod hub;
mod result;
mod router;
mod stdio;

pub(crate) use catalog::{shown_tool, unfilled_credential};
pub(crate) use config::{Injected, McpSection, McpServer, Transport, servers};
pub(crate) use hub::McpHub;
pub(crate) use router::McpRouter;
