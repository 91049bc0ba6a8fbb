#!/usr/bin/env bash
# Installs what UFO's own, unmodified Python code needs to run here (../shared/ufo, see its
# SOURCE.md): its device client (`python -m ufo.client.client`) and its Linux MCP server
# (`python -m ufo.client.mcp.http_servers.linux_mcp_server`), which the device and MCP tests
# start from there. A venv under target/ufo with exactly the 12 PyPI packages SOURCE.md
# pins (no Windows packages, nothing stubbed; websockets stays at 12.0, with which the
# client registers). Needs python3 with venv. About 80 MB. Not needed to run ufo-batch.
#
#   scripts/setup-ufo.sh          install (idempotent)
#   scripts/setup-ufo.sh --check  only say whether it is there (exit 1 if not)
set -euo pipefail
cd "$(dirname "$0")/.."
ufo=${UFO_SOURCE:-$(cd .. && pwd)/shared/ufo}
venv=target/ufo/venv
packages=(pydantic==2.11.7 fastmcp==2.11.3 websockets==12.0 fastapi==0.116.1 uvicorn==0.35.0
  PyYAML==6.0.1 psutil==5.9.8 colorama==0.4.6 rich==14.1.0 art==6.1 requests==2.32.5 Pillow==11.3.0)

[ -d "$ufo/ufo/client" ] || { echo "ufo: UFO's code is not at $ufo: set UFO_SOURCE to a checkout of microsoft/UFO (the commit ../shared/ufo/SOURCE.md names, where that folder exists), or skip its tests with UFO_BATCH_SKIP_TESTS=ufo" >&2; exit 2; }
ready() {
  PYTHONPATH="$ufo" "$venv/bin/python" -c \
    'import fastmcp, websockets, colorama, psutil, yaml, art, rich, PIL; import ufo.client.mcp.http_servers.linux_mcp_server' \
    >/dev/null 2>&1
}
if ready; then
  echo "ufo: UFO's client and Linux MCP server run from $ufo with $venv"
  exit 0
fi
if [ "${1:-}" = "--check" ]; then
  echo "ufo: the venv for UFO's code is missing (install with scripts/setup-ufo.sh)"
  exit 1
fi
command -v python3 >/dev/null || { echo "ufo: python3 is missing" >&2; exit 2; }
mkdir -p target/ufo
log=target/ufo/setup.log
echo "ufo: installing ${#packages[@]} pinned packages into $venv"
rm -rf "$venv"
python3 -m venv "$venv" >"$log" 2>&1 \
  || { echo "ufo: python3 -m venv failed (apt-get install python3-venv; log: $log)" >&2; exit 2; }
"$venv/bin/pip" install -q --disable-pip-version-check "${packages[@]}" >>"$log" 2>&1 \
  || { tail -20 "$log" >&2; echo "ufo: pip install failed (log: $log)" >&2; exit 2; }
ready || { echo "ufo: UFO's modules still do not import (log: $log)" >&2; exit 2; }
echo "ufo: installed; UFO's client and Linux MCP server run from $ufo with $venv"
