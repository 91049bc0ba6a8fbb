//! One MCP client session with one server, over the two transports: a stdio server's
//! pipes, or a streamable HTTP endpoint (whose expired sessions are opened again). It
//! lists the server's tools and calls one with a time limit, telling a tool's own
//! failure (a result) from the server's (an error).

use std::time::Duration;

use rmcp::ServiceExt;
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, Implementation,
};
use rmcp::service::{RoleClient, RunningService, ServiceError};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Map, Value};
use tokio::io::{AsyncRead, AsyncWrite};

use super::error::McpError;

/// How long connecting (the handshake) may take.
pub(crate) const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// Why a call did not come back with a result.
#[derive(Debug)]
pub(crate) enum CallError {
    /// No answer within the server's timeout.
    Timeout(Duration),
    /// The server cannot be reached any more (it ended, the connection broke).
    Gone(String),
    /// The server answered with a protocol error (an unknown tool, bad arguments).
    Refused(String),
}

/// A client session with one server.
pub(crate) struct Connection {
    service: RunningService<RoleClient, ClientConfig>,
}

/// What ufo-batch says it is in the handshake.
fn client_info() -> ClientConfig {
    ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("ufo-batch", env!("CARGO_PKG_VERSION")),
    )
}

impl Connection {
    /// A session over a stdio server's pipes (`from` its stdout, `to` its stdin).
    pub(crate) async fn over_pipes<R, W>(from: R, to: W) -> Result<Self, McpError>
    where
        R: AsyncRead + Send + Unpin + 'static,
        W: AsyncWrite + Send + Unpin + 'static,
    {
        Self::handshake(client_info().serve((from, to))).await
    }

    /// A session with the streamable HTTP endpoint `url`, sending `headers` with every
    /// request, with up to `concurrency` calls in flight at once (the tasks of a run share
    /// it).
    pub(crate) async fn over_http(
        url: &str,
        headers: &[(String, String)],
        concurrency: usize,
    ) -> Result<Self, McpError> {
        let mut custom = std::collections::HashMap::new();
        for (name, value) in headers {
            let name = reqwest::header::HeaderName::from_bytes(name.as_bytes()).map_err(|e| {
                McpError::Header {
                    name: name.clone(),
                    source: e.into(),
                }
            })?;
            let value =
                reqwest::header::HeaderValue::from_str(value).map_err(|e| McpError::Header {
                    name: name.to_string(),
                    source: e.into(),
                })?;
            custom.insert(name, value);
        }
        // rmcp makes its own HTTP client.
        crate::tls::ready();
        let config = StreamableHttpClientTransportConfig::with_uri(url)
            .custom_headers(custom)
            .max_concurrent_requests(concurrency)
            .reinit_on_expired_session(true);
        Self::handshake(client_info().serve(StreamableHttpClientTransport::from_config(config)))
            .await
    }

    async fn handshake<E: std::fmt::Display>(
        started: impl Future<Output = Result<RunningService<RoleClient, ClientConfig>, E>>,
    ) -> Result<Self, McpError> {
        match tokio::time::timeout(CONNECT_TIMEOUT, started).await {
            Ok(Ok(service)) => Ok(Self { service }),
            Ok(Err(e)) => Err(McpError::Handshake(plain(&e.to_string()))),
            Err(_) => Err(McpError::HandshakeTimeout(CONNECT_TIMEOUT)),
        }
    }

    /// Every tool the server offers.
    pub(crate) async fn tools(&self) -> Result<Vec<rmcp::model::Tool>, McpError> {
        match tokio::time::timeout(CONNECT_TIMEOUT, self.service.peer().list_all_tools()).await {
            Ok(Ok(tools)) => Ok(tools),
            Ok(Err(e)) => Err(McpError::List(e)),
            Err(_) => Err(McpError::ListTimeout),
        }
    }

    /// Calls `tool` with `arguments`, waiting at most `timeout` (a call given up is
    /// dropped, and the client then tells the server it is cancelled).
    pub(crate) async fn call(
        &self,
        tool: &str,
        arguments: Map<String, Value>,
        timeout: Duration,
    ) -> Result<CallToolResult, CallError> {
        let params = CallToolRequestParams::new(tool.to_string()).with_arguments(arguments);
        match tokio::time::timeout(timeout, self.service.peer().call_tool(params)).await {
            Err(_) => Err(CallError::Timeout(timeout)),
            Ok(Ok(result)) => Ok(result),
            Ok(Err(ServiceError::McpError(e))) => Err(CallError::Refused(e.message.to_string())),
            Ok(Err(ServiceError::Timeout { timeout })) => Err(CallError::Timeout(timeout)),
            Ok(Err(e)) => Err(CallError::Gone(plain(&e.to_string()))),
        }
    }

    /// Ends the session.
    pub(crate) async fn close(self) {
        let _ = tokio::time::timeout(Duration::from_secs(5), self.service.cancel()).await;
    }
}

/// A transport error without the client library's type names: what follows its last
/// `Client error: ` (an HTTP client's own words), or the text without the bracketed
/// type names (`Transport [rmcp::transport::worker::WorkerTransport<...>] error`).
fn plain(error: &str) -> String {
    if let Some(i) = error.rfind("Client error: ") {
        return error[i + "Client error: ".len()..].to_string();
    }
    let mut out = String::with_capacity(error.len());
    let mut rest = error;
    while let Some(open) = rest.find('[') {
        let mut depth = 0;
        let close = rest[open..].char_indices().find_map(|(i, c)| {
            match c {
                '[' => depth += 1,
                ']' => depth -= 1,
                _ => {}
            }
            (depth == 0).then_some(open + i)
        });
        let Some(close) = close else { break };
        let inside = &rest[open + 1..close];
        if inside.contains("::") {
            out.push_str(rest[..open].trim_end());
        } else {
            out.push_str(&rest[..=close]);
        }
        rest = &rest[close + 1..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::plain;

    #[test]
    fn transport_errors_lose_the_libraries_type_names() {
        let long = "Transport send error: Transport [rmcp::transport::worker::WorkerTransport<rmcp::transport::streamable_http_client::StreamableHttpClientWorker<reqwest::Client>>] error: Client error: error sending request for url (http://127.0.0.1:8010/mcp)";
        assert_eq!(
            plain(long),
            "error sending request for url (http://127.0.0.1:8010/mcp)"
        );
        assert_eq!(
            plain("Transport closed: Transport [rmcp::transport::Child<x>] error: pipe broke"),
            "Transport closed: Transport error: pipe broke"
        );
        assert_eq!(plain("a [plain] bracket"), "a [plain] bracket");
        assert_eq!(plain("unbalanced [rmcp::x"), "unbalanced [rmcp::x");
    }
}
