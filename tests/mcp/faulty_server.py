"""A stdio MCP server whose tools misbehave on purpose, for ufo-batch's tests of faults:
echo answers, fail is a tool error (isError), hang never answers in time, crash ends the
server mid-call, where says which folder the server runs in, huge answers megabytes of
text with control characters in them, and deep answers a line nested 200,000 levels deep
(no JSON reader takes it: a malformed answer).

    python faulty_server.py                     (serve)
    python faulty_server.py --die               (exit at once, before any handshake)
    python faulty_server.py --die-in-workspace  (exit at once when started in a folder
                                                 named workspace: a task's, not the
                                                 runner's check before the run)
    python faulty_server.py --many-tools=N      (also offer N tools of 1 KB descriptions)
    python faulty_server.py --mark-start=PATH   (try to write PATH as it starts, wherever
                                                 it is: a start with the runner's rights
                                                 would leave it there)
"""

import os
import sys
import time

if "--die" in sys.argv or ("--die-in-workspace" in sys.argv
                           and os.path.basename(os.getcwd()) == "workspace"):
    print("faulty_server: asked to die before starting", file=sys.stderr)
    sys.exit(3)

for arg in sys.argv:
    if arg.startswith("--mark-start="):
        try:
            with open(arg.split("=", 1)[1], "a") as f:
                f.write(f"started in {os.getcwd()}\n")
        except OSError:
            pass

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
def huge(megabytes: int) -> str:
    """Answers megabytes of text, with an ESC, a BEL and a lone CR in it."""
    return "\x1b]0;owned\x07\r" + "x" * (megabytes << 20)


@mcp.tool()
def deep() -> str:
    """Answers with a line nested 200,000 levels deep, then nothing."""
    os.write(1, b'{"jsonrpc":"2.0","id":1,"result":' + b"[" * 200_000 + b"\n")
    time.sleep(30)
    return "never read"


for arg in sys.argv:
    if arg.startswith("--many-tools="):
        for i in range(int(arg.split("=", 1)[1])):
            def one(text: str, i=i) -> str:
                return f"tool {i}: {text}"
            mcp.tool(name=f"many{i}", description=f"Tool {i}. " + "d" * 1024)(one)


@mcp.tool()
def where() -> str:
    """The server's working folder."""
    return os.getcwd()


if __name__ == "__main__":
    mcp.run(transport="stdio", show_banner=False)
