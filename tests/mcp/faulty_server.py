"""A stdio MCP server whose tools misbehave on purpose, for ufo-batch's tests of faults:
echo answers, fail is a tool error (isError), hang never answers in time, crash ends the
server mid-call, and where says which folder the server runs in.

    python faulty_server.py                     (serve)
    python faulty_server.py --die               (exit at once, before any handshake)
    python faulty_server.py --die-in-workspace  (exit at once when started in a folder
                                                 named workspace: a task's, not the
                                                 runner's check before the run)
"""

import os
import sys
import time

if "--die" in sys.argv or ("--die-in-workspace" in sys.argv
                           and os.path.basename(os.getcwd()) == "workspace"):
    print("faulty_server: asked to die before starting", file=sys.stderr)
    sys.exit(3)

from fastmcp import FastMCP
from fastmcp.exceptions import ToolError

mcp = FastMCP("faulty")


@mcp.tool()
def echo(text: str) -> str:
    """Returns the text."""
    return text


@mcp.tool()
def fail(message: str) -> str:
    """Always fails with the message."""
    raise ToolError(message)


@mcp.tool()
def hang(seconds: float) -> str:
    """Sleeps, then answers."""
    time.sleep(seconds)
    return "woke up"


@mcp.tool()
def crash() -> str:
    """Ends the server without answering."""
    print("faulty_server: crashing on purpose", file=sys.stderr, flush=True)
    os._exit(7)


@mcp.tool()
def where() -> str:
    """The server's working folder."""
    return os.getcwd()


if __name__ == "__main__":
    mcp.run(transport="stdio", show_banner=False)
