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

/// The servers of `[[mcp.servers]]`, checked; `env` looks up environment variables.
/// Values taken from the environment (injected arguments, `${VAR}` in headers and in a
/// server's `env`) are registered as secrets.
pub(crate) fn servers(
    section: McpSection,
    env: impl Fn(&str) -> Option<String>,
) -> Result<Vec<McpServer>, String> {
    let mut out: Vec<McpServer> = Vec::new();
    for (i, s) in section.servers.into_iter().enumerate() {
        let at = format!("[[mcp.servers]] #{}", i + 1);
        let name = s
            .name
            .clone()
            .ok_or_else(|| format!("{at} needs a name (its tools are called NAME.TOOL)"))?;
        let at = format!("MCP server `{name}`");
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            return Err(format!(
                "{at}: a name is letters, digits, `_` and `-` (its tools are called NAME.TOOL)"
            ));
        }
        if out.iter().any(|o| o.name == name) {
            return Err(format!("{at} is configured twice"));
        }
        out.push(server(name, s, &at, &env)?);
    }
    Ok(out)
}

fn server(
    name: String,
    s: ServerSection,
    at: &str,
    env: &impl Fn(&str) -> Option<String>,
) -> Result<McpServer, String> {
    let expand = |text: &str, what: &str| {
        expand_vars(text, env)
            .map_err(|v| format!("{at}: {what} uses ${{{v}}}, which is not set in the environment"))
    };
    let transport = match (s.command, s.url) {
        (Some(_), Some(_)) => {
            return Err(format!(
                "{at}: give either `command` (stdio) or `url` (HTTP), not both"
            ));
        }
        (None, None) => {
            return Err(format!(
                "{at}: give `command` (a stdio server) or `url` (an HTTP server)"
            ));
        }
        (Some(command), None) => {
            if !s.headers.is_empty() {
                return Err(format!("{at}: `headers` are for an HTTP server (`url`)"));
            }
            let mut vars = Vec::new();
            for (k, v) in s.env {
                vars.push((k.clone(), expand(&v, &format!("env {k}"))?));
            }
            Transport::Stdio {
                command,
                args: s.args,
                env: vars,
                cwd: s.cwd,
            }
        }
        (None, Some(url)) => {
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                return Err(format!(
                    "{at}: url {url:?} is not an http:// or https:// URL"
                ));
            }
            if !s.args.is_empty() || !s.env.is_empty() || s.cwd.is_some() {
                return Err(format!(
                    "{at}: `args`, `env` and `cwd` are for a stdio server (`command`)"
                ));
            }
            let mut headers = Vec::new();
            for (k, v) in s.headers {
                headers.push((k.clone(), expand(&v, &format!("header {k}"))?));
            }
            Transport::Http { url, headers }
        }
    };
    let timeout = match s.timeout {
        Some(t) => parse_duration(&t).map_err(|e| format!("{at}: timeout: {e}"))?,
        None => DEFAULT_TIMEOUT,
    };
    if timeout.is_zero() {
        return Err(format!("{at}: timeout must be more than 0"));
    }
    let mut inject = Vec::new();
    for (argument, var) in s.inject {
        let value = env(&var).filter(|v| !v.is_empty()).ok_or_else(|| {
            format!(
                "{at}: inject.{argument} comes from ${var}, which is not set in the environment"
            )
        })?;
        crate::secrets::register(&value);
        inject.push(Injected { argument, value });
    }
    if let Some(tools) = &s.tools
        && tools.is_empty()
    {
        return Err(format!(
            "{at}: `tools = []` would offer no tool; leave it out for all"
        ));
    }
    Ok(McpServer {
        name,
        transport,
        timeout,
        tools: s.tools,
        inject,
    })
}

/// `text` with each `${VAR}` replaced by the variable's value (registered as a secret);
/// the name of a variable that is not set, as the error.
fn expand_vars(text: &str, env: &impl Fn(&str) -> Option<String>) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        let Some(len) = rest[start + 2..].find('}') else {
            break;
        };
        let var = &rest[start + 2..start + 2 + len];
        let value = env(var).ok_or_else(|| var.to_string())?;
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

    fn parse(text: &str) -> Result<Vec<McpServer>, String> {
        let section: McpSection = toml::from_str(text).map_err(|e| e.to_string())?;
        servers(section, |v| match v {
            "KEY" => Some("k-123456789".into()),
            "TOKEN" => Some("t-987654321".into()),
            _ => None,
        })
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
            let e = parse(text).unwrap_err();
            assert!(e.contains(wanted), "{text}: {e}");
        }
    }
}
