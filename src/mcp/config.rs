//! The MCP servers of a run, as the config file's `[[mcp.servers]]` describe them: how
//! each is reached (a command the runner starts per task, speaking stdio, or a URL
//! speaking streamable HTTP, shared by the run), how long a call may take, which of its
//! tools agents see, and which arguments the runner fills in from the environment.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Deserialize;

use crate::units::parse_duration;

/// A call's time limit when the config names none.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// `[mcp]` of the config file.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct McpSection {
    /// `[[mcp.servers]]`.
    #[serde(default)]
    pub(crate) servers: Vec<ServerSection>,
}

/// One `[[mcp.servers]]` entry as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ServerSection {
    name: Option<String>,
    command: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    cwd: Option<String>,
    url: Option<String>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    timeout: Option<String>,
    tools: Option<Vec<String>>,
    #[serde(default)]
    inject: BTreeMap<String, String>,
}

/// How a server is reached.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Transport {
    /// A program the runner starts for each task, in the task's workspace and sandbox,
    /// speaking MCP on its stdin and stdout. `{workspace}` in `args` and `env` is the
    /// task's workspace.
    Stdio {
        /// The program.
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Variables added to the scrubbed environment commands get.
        env: Vec<(String, String)>,
        /// Its working directory, relative to the workspace (default: the workspace).
        cwd: Option<String>,
    },
    /// A server already running, reached over streamable HTTP, shared by every task.
    Http {
        /// Its MCP endpoint.
        url: String,
        /// Headers sent with every request (`${VAR}` taken from the environment).
        headers: Vec<(String, String)>,
    },
}

/// A tool argument the runner fills in: the model never sees it, no output holds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Injected {
    /// The argument's name.
    pub(crate) argument: String,
    /// Its value (from the environment variable the config names).
    pub(crate) value: String,
}

/// One MCP server of the run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct McpServer {
    /// Its name: its tools are `NAME.TOOL`.
    pub(crate) name: String,
    /// How it is reached.
    pub(crate) transport: Transport,
    /// How long one call may take.
    pub(crate) timeout: Duration,
    /// The only tools agents see, when set.
    pub(crate) tools: Option<Vec<String>>,
    /// Arguments the runner fills in.
    pub(crate) inject: Vec<Injected>,
}

impl McpServer {
    /// `stdio` or `http`, for messages.
    pub(crate) fn kind(&self) -> &'static str {
        match self.transport {
            Transport::Stdio { .. } => "stdio",
            Transport::Http { .. } => "http",
        }
    }
}

/// A `[[mcp.servers]]` entry that cannot be used: told before the run starts, with the
/// config file's other mistakes.
#[derive(Debug, thiserror::Error)]
pub(crate) enum McpConfigError {
    /// An entry (numbered from 1) without a name.
    #[error("[[mcp.servers]] #{0} needs a name (its tools are called NAME.TOOL)")]
    NoName(usize),
    /// A name that cannot begin a tool's name.
    #[error(
        "MCP server `{0}`: a name is letters, digits, `_` and `-` (its tools are called NAME.TOOL)"
    )]
    BadName(String),
    /// Two entries of one name.
    #[error("MCP server `{0}` is configured twice")]
    Twice(String),
    /// `${VAR}` in a header or an `env` value, with the variable not set.
    #[error("MCP server `{server}`: {what} uses ${{{var}}}, which is not set in the environment")]
    UnsetVariable {
        /// The server.
        server: String,
        /// `env NAME` or `header NAME`.
        what: String,
        /// The variable.
        var: String,
    },
    /// Both `command` and `url`.
    #[error("MCP server `{0}`: give either `command` (stdio) or `url` (HTTP), not both")]
    Both(String),
    /// Neither `command` nor `url`.
    #[error("MCP server `{0}`: give `command` (a stdio server) or `url` (an HTTP server)")]
    Neither(String),
    /// `headers` for a stdio server.
    #[error("MCP server `{0}`: `headers` are for an HTTP server (`url`)")]
    HeadersForStdio(String),
    /// A `url` that is not HTTP.
    #[error("MCP server `{server}`: url {url:?} is not an http:// or https:// URL")]
    NotHttp {
        /// The server.
        server: String,
        /// The url given.
        url: String,
    },
    /// `args`, `env` or `cwd` for an HTTP server.
    #[error("MCP server `{0}`: `args`, `env` and `cwd` are for a stdio server (`command`)")]
    StdioKeysForHttp(String),
    /// A `timeout` that is not a duration.
    #[error("MCP server `{server}`: timeout: {source}")]
    Timeout {
        /// The server.
        server: String,
        /// What is wrong with it.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A `timeout` of 0.
    #[error("MCP server `{0}`: timeout must be more than 0")]
    ZeroTimeout(String),
    /// `inject` from a variable that is not set.
    #[error(
        "MCP server `{server}`: inject.{argument} comes from ${var}, which is not set in the environment"
    )]
    UnsetInject {
        /// The server.
        server: String,
        /// The argument.
        argument: String,
        /// The variable.
        var: String,
    },
    /// `tools = []`.
    #[error("MCP server `{0}`: `tools = []` would offer no tool; leave it out for all")]
    NoTools(String),
}

/// The servers of `[[mcp.servers]]`, checked; `env` looks up environment variables.
/// Values taken from the environment (injected arguments, `${VAR}` in headers and in a
/// server's `env`) are registered as secrets.
pub(crate) fn servers(
    section: McpSection,
    env: impl Fn(&str) -> Option<String>,
) -> Result<Vec<McpServer>, McpConfigError> {
    let mut out: Vec<McpServer> = Vec::new();
    for (i, s) in section.servers.into_iter().enumerate() {
        let name = s.name.clone().ok_or(McpConfigError::NoName(i + 1))?;
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            return Err(McpConfigError::BadName(name));
        }
        if out.iter().any(|o| o.name == name) {
            return Err(McpConfigError::Twice(name));
        }
        out.push(server(name, s, &env)?);
    }
    Ok(out)
}

fn server(
    name: String,
    mut s: ServerSection,
    env: &impl Fn(&str) -> Option<String>,
) -> Result<McpServer, McpConfigError> {
    let transport = match (s.command.take(), s.url.take()) {
        (Some(_), Some(_)) => return Err(McpConfigError::Both(name)),
        (None, None) => return Err(McpConfigError::Neither(name)),
        (Some(command), None) => stdio(&name, command, &mut s, env)?,
        (None, Some(url)) => http(&name, url, &mut s, env)?,
    };
    let timeout = match s.timeout {
        Some(t) => parse_duration(&t).map_err(|e| McpConfigError::Timeout {
            server: name.clone(),
            source: e.into(),
        })?,
        None => DEFAULT_TIMEOUT,
    };
    if timeout.is_zero() {
        return Err(McpConfigError::ZeroTimeout(name));
    }
    let mut inject = Vec::new();
    for (argument, var) in s.inject {
        let Some(value) = env(&var).filter(|v| !v.is_empty()) else {
            return Err(McpConfigError::UnsetInject {
                server: name,
                argument,
                var,
            });
        };
        crate::secrets::register(&value);
        inject.push(Injected { argument, value });
    }
    if s.tools.as_ref().is_some_and(Vec::is_empty) {
        return Err(McpConfigError::NoTools(name));
    }
    Ok(McpServer {
        name,
        transport,
        timeout,
        tools: s.tools,
        inject,
    })
}

/// A stdio server's transport: `command` with the entry's `args`, `env` and `cwd`.
fn stdio(
    name: &str,
    command: String,
    s: &mut ServerSection,
    env: &impl Fn(&str) -> Option<String>,
) -> Result<Transport, McpConfigError> {
    if !s.headers.is_empty() {
        return Err(McpConfigError::HeadersForStdio(name.to_string()));
    }
    let mut vars = Vec::new();
    for (k, v) in std::mem::take(&mut s.env) {
        let value = expand_vars(&v, env, name, &format!("env {k}"))?;
        vars.push((k, value));
    }
    Ok(Transport::Stdio {
        command,
        args: std::mem::take(&mut s.args),
        env: vars,
        cwd: s.cwd.take(),
    })
}

/// An HTTP server's transport: `url` with the entry's `headers`.
fn http(
    name: &str,
    url: String,
    s: &mut ServerSection,
    env: &impl Fn(&str) -> Option<String>,
) -> Result<Transport, McpConfigError> {
    if !(url.starts_with("http://") || url.starts_with("https://")) {
        return Err(McpConfigError::NotHttp {
            server: name.to_string(),
            url,
        });
    }
    if !s.args.is_empty() || !s.env.is_empty() || s.cwd.is_some() {
        return Err(McpConfigError::StdioKeysForHttp(name.to_string()));
    }
    let mut headers = Vec::new();
    for (k, v) in std::mem::take(&mut s.headers) {
        let value = expand_vars(&v, env, name, &format!("header {k}"))?;
        headers.push((k, value));
    }
    Ok(Transport::Http { url, headers })
}

/// `text` (`what` of the server `server`) with each `${VAR}` replaced by the variable's
/// value (registered as a secret).
fn expand_vars(
    text: &str,
    env: &impl Fn(&str) -> Option<String>,
    server: &str,
    what: &str,
) -> Result<String, McpConfigError> {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        let Some(len) = rest[start + 2..].find('}') else {
            break;
        };
        let var = &rest[start + 2..start + 2 + len];
        let value = env(var).ok_or_else(|| McpConfigError::UnsetVariable {
            server: server.to_string(),
            what: what.to_string(),
            var: var.to_string(),
        })?;
        crate::secrets::register(&value);
        out.push_str(&rest[..start]);
        out.push_str(&value);
        rest = &rest[start + 3 + len..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The servers `text` configures; the error's words.
    fn parse(text: &str) -> Result<Vec<McpServer>, Box<dyn std::error::Error>> {
        let section: McpSection = toml::from_str(text)?;
        Ok(servers(section, |v| match v {
            "KEY" => Some("k-123456789".into()),
            "TOKEN" => Some("t-987654321".into()),
            _ => None,
        })?)
    }

    #[test]
    fn stdio_and_http_servers_are_read_with_their_injected_arguments() {
        let s = parse(
            r#"
            [[servers]]
            name = "fs"
            command = "node"
            args = ["server.js", "{workspace}"]
            tools = ["read_text_file"]
            [[servers]]
            name = "linux"
            url = "http://127.0.0.1:8010/mcp"
            headers = { Authorization = "Bearer ${TOKEN}" }
            timeout = "5s"
            inject = { api_key = "KEY" }
            "#,
        )
        .unwrap();
        assert_eq!(s[0].kind(), "stdio");
        assert_eq!(s[0].timeout, DEFAULT_TIMEOUT);
        assert_eq!(s[1].timeout, Duration::from_secs(5));
        assert_eq!(
            s[1].transport,
            Transport::Http {
                url: "http://127.0.0.1:8010/mcp".into(),
                headers: vec![("Authorization".into(), "Bearer t-987654321".into())]
            }
        );
        assert_eq!(s[1].inject[0].value, "k-123456789");
    }

    #[test]
    fn mistakes_are_named() {
        for (text, wanted) in [
            ("[[servers]]\ncommand = \"x\"", "needs a name"),
            (
                "[[servers]]\nname = \"a.b\"\ncommand = \"x\"",
                "letters, digits",
            ),
            ("[[servers]]\nname = \"a\"", "give `command`"),
            (
                "[[servers]]\nname = \"a\"\ncommand = \"x\"\nurl = \"http://h\"",
                "not both",
            ),
            (
                "[[servers]]\nname = \"a\"\nurl = \"ftp://h\"",
                "not an http://",
            ),
            (
                "[[servers]]\nname = \"a\"\ncommand = \"x\"\ninject = { api_key = \"NOPE\" }",
                "$NOPE, which is not set",
            ),
            (
                "[[servers]]\nname = \"a\"\nurl = \"http://h\"\nheaders = { A = \"${NOPE}\" }",
                "${NOPE}, which is not set",
            ),
            (
                "[[servers]]\nname = \"a\"\ncommand = \"x\"\ntimeout = \"soon\"",
                "timeout",
            ),
            (
                "[[servers]]\nname = \"a\"\ncommand = \"x\"\n[[servers]]\nname = \"a\"\ncommand = \"y\"",
                "configured twice",
            ),
            (
                "[[servers]]\nname = \"a\"\ncommand = \"x\"\nport = 1",
                "unknown field `port`",
            ),
        ] {
            let e = parse(text).unwrap_err().to_string();
            assert!(e.contains(wanted), "{text}: {e}");
        }
    }

    #[test]
    fn messages_are_word_for_word() {
        for (text, wanted) in [
            (
                "[[servers]]\ncommand = \"x\"",
                "[[mcp.servers]] #1 needs a name (its tools are called NAME.TOOL)",
            ),
            (
                "[[servers]]\nname = \"a\"\ncommand = \"x\"\nurl = \"http://h\"",
                "MCP server `a`: give either `command` (stdio) or `url` (HTTP), not both",
            ),
            (
                "[[servers]]\nname = \"a\"\ncommand = \"x\"\nenv = { X = \"${NOPE}\" }",
                "MCP server `a`: env X uses ${NOPE}, which is not set in the environment",
            ),
            (
                "[[servers]]\nname = \"a\"\nurl = \"ftp://h\"",
                "MCP server `a`: url \"ftp://h\" is not an http:// or https:// URL",
            ),
            (
                "[[servers]]\nname = \"a\"\nurl = \"http://h\"\ninject = { api_key = \"NOPE\" }",
                "MCP server `a`: inject.api_key comes from $NOPE, which is not set in the environment",
            ),
            (
                "[[servers]]\nname = \"a\"\ncommand = \"x\"\ntools = []",
                "MCP server `a`: `tools = []` would offer no tool; leave it out for all",
            ),
        ] {
            assert_eq!(parse(text).unwrap_err().to_string(), wanted, "{text}");
        }
    }
}
