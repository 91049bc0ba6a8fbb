"""An MCP server over streamable HTTP with the tool signatures of UFO's Linux MCP server
(ufo/client/mcp/http_servers/linux_mcp_server.py): execute_command(command, api_key,
timeout, cwd) and get_system_info(api_key), both refusing unless api_key equals
$UFO_MCP_API_KEY. Commands run without a shell and only from a read-only allow-list, as
UFO's do. Written for ufo-batch's tests (FastMCP 2.11.3, the version UFO pins).

    python linux_server.py PORT
"""

import os
import shlex
import subprocess
import sys

from fastmcp import FastMCP

ALLOWED = {"ls", "cat", "grep", "find", "ps", "df", "echo", "head", "tail", "wc", "pwd",
           "uname", "whoami", "date", "stat", "du", "sort", "uniq"}
BLOCKED = set(";&|`$<>\n")

# As UFO's server: sessions kept, answers as plain JSON rather than an event stream.
mcp = FastMCP("BashExecutor", stateless_http=False, json_response=True)


def key_ok(api_key: str) -> bool:
    expected = os.environ.get("UFO_MCP_API_KEY", "")
    return bool(expected) and api_key == expected


@mcp.tool()
def execute_command(command: str, api_key: str, timeout: int = 30, cwd: str | None = None) -> dict:
    """Run a read-only shell command (no pipes or redirects) and return its output."""
    if not key_ok(api_key):
        return {"success": False, "error": "Invalid API key."}
    if any(c in BLOCKED for c in command) or "-exec" in command:
        return {"success": False, "error": "Blocked: shell metacharacters are not allowed."}
    argv = shlex.split(command)
    if not argv or argv[0] not in ALLOWED:
        return {"success": False, "error": f"Blocked: {argv[0] if argv else ''} is not allowed."}
    timeout = max(1, min(int(timeout), 120))
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, cwd=cwd)
    except subprocess.TimeoutExpired:
        return {"success": False, "error": f"Timeout after {timeout}s."}
    except OSError as e:
        return {"success": False, "error": str(e)}
    return {"success": done.returncode == 0, "exit_code": done.returncode,
            "stdout": done.stdout, "stderr": done.stderr}


@mcp.tool()
def get_system_info(api_key: str) -> dict:
    """Basic facts about the machine."""
    if not key_ok(api_key):
        return {"success": False, "error": "Invalid API key."}
    return {"uname": " ".join(os.uname()), "cpus": os.cpu_count()}


if __name__ == "__main__":
    mcp.run(transport="http", host="127.0.0.1", port=int(sys.argv[1]), path="/mcp",
            log_level="warning", show_banner=False)
