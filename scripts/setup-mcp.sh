#!/usr/bin/env bash
# Installs the MCP servers the MCP tests run against, and the AIP device client the device
# tests run, under target/mcp (nothing system-wide):
#   - npm's @modelcontextprotocol/server-filesystem (stdio; written by others), and
#   - a Python venv with FastMCP 2.11.3 (the version UFO pins), for tests/mcp/linux_server.py
#     (streamable HTTP: the tool signatures of UFO's Linux MCP server) and
#     tests/mcp/faulty_server.py (stdio: tools that fail, hang and crash), and with
#     websockets 12.0 (UFO's pin) for tests/devices/aip_client.py.
# Needs node/npm and python3 with venv. About 60 MB. Not needed to run ufo-batch.
#
#   scripts/setup-mcp.sh          install (idempotent)
#   scripts/setup-mcp.sh --check  only say whether it is there (exit 1 if not)
set -euo pipefail
cd "$(dirname "$0")/.."
root=target/mcp
fs_version=2026.8.31
fs=$root/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js
venv=$root/venv

ready() { [ -f "$fs" ] && "$venv/bin/python" -c 'import fastmcp, websockets' >/dev/null 2>&1; }
if ready; then
  echo "mcp: server-filesystem $fs_version and FastMCP $("$venv/bin/python" -c 'import fastmcp; print(fastmcp.__version__)') in $root"
  exit 0
fi
if [ "${1:-}" = "--check" ]; then
  echo "mcp: the test servers are missing (install with scripts/setup-mcp.sh)"
  exit 1
fi
command -v npm >/dev/null || { echo "mcp: npm is missing (apt-get install nodejs npm)" >&2; exit 2; }
command -v python3 >/dev/null || { echo "mcp: python3 is missing" >&2; exit 2; }
mkdir -p "$root"
log=$root/setup.log
if [ ! -f "$fs" ]; then
  echo "mcp: installing @modelcontextprotocol/server-filesystem@$fs_version"
  npm install --prefix "$root" --no-audit --no-fund --silent \
    "@modelcontextprotocol/server-filesystem@$fs_version" >"$log" 2>&1 \
    || { tail -20 "$log" >&2; echo "mcp: npm install failed (log: $log)" >&2; exit 2; }
fi
if ! "$venv/bin/python" -c 'import fastmcp' >/dev/null 2>&1; then
  echo "mcp: installing fastmcp==2.11.3 into $venv"
  rm -rf "$venv"
  python3 -m venv "$venv" >>"$log" 2>&1 \
    || { echo "mcp: python3 -m venv failed (apt-get install python3-venv; log: $log)" >&2; exit 2; }
  "$venv/bin/pip" install -q --disable-pip-version-check "fastmcp==2.11.3" "pydantic==2.11.7" >>"$log" 2>&1 \
    || { tail -20 "$log" >&2; echo "mcp: pip install failed (log: $log)" >&2; exit 2; }
fi
if ! "$venv/bin/python" -c 'import websockets' >/dev/null 2>&1; then
  echo "mcp: installing websockets==12.0 into $venv (the AIP device client of the tests)"
  "$venv/bin/pip" install -q --disable-pip-version-check "websockets==12.0" >>"$log" 2>&1 \
    || { tail -20 "$log" >&2; echo "mcp: pip install failed (log: $log)" >&2; exit 2; }
fi
ready || { echo "mcp: the servers are still missing (log: $log)" >&2; exit 2; }
echo "mcp: installed server-filesystem $fs_version, FastMCP 2.11.3 and websockets 12.0 in $root"
