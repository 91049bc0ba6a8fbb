#!/usr/bin/env bash
# Sets up UFO's own, unmodified Python code for the tests: its device client (`python -m ufo.client.client`) and its Linux MCP server
# (`python -m ufo.client.mcp.http_servers.linux_mcp_server`), which the device and MCP tests
# start from there. A venv under target/ufo with exactly the 12 PyPI packages SOURCE.md
# pins (no Windows packages, nothing stubbed; websockets stays at 12.0, with which the
# client registers). Needs python3 with venv. About 80 MB. Not needed to run ufo-batch.
#
# UFO's code is taken from, in order: $UFO_SOURCE (a checkout of microsoft/UFO), ../shared/ufo
# (beside this clone, where it exists), or microsoft/UFO fetched from GitHub at the pinned commit
# below into target/ufo/upstream (about 40 MB, once). The copy used is named in
# target/ufo/source, where the tests read it.
#
#   scripts/setup-ufo.sh          install (idempotent)
#   scripts/setup-ufo.sh --check  only say whether it is there (exit 1 if not)
#
# Exit 3: UFO's code could not be had (no local copy, and no network to GitHub); scripts/test.sh
# then skips the tests that need it, and says so.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=target/ufo/venv
# microsoft/UFO at the commit ../shared/ufo/SOURCE.md names (2026-06-26).
commit=b28183fd426452c6cb511627c9bd32a929f29406
repo=${UFO_BATCH_UFO_REPO:-https://github.com/microsoft/UFO}
upstream=target/ufo/upstream
mkdir -p target/ufo
packages=(pydantic==2.11.7 fastmcp==2.11.3 websockets==12.0 fastapi==0.116.1 uvicorn==0.35.0
  PyYAML==6.0.1 psutil==5.9.8 colorama==0.4.6 rich==14.1.0 art==6.1 requests==2.32.5 Pillow==11.3.0)

has_code() { [ -f "$1/ufo/client/client.py" ] && [ -d "$1/aip" ]; }
if [ -n "${UFO_SOURCE:-}" ]; then
  has_code "$UFO_SOURCE" || { echo "ufo: UFO_SOURCE=$UFO_SOURCE holds no copy of microsoft/UFO (no ufo/client/client.py and aip/)" >&2; exit 2; }
  ufo=$(cd "$UFO_SOURCE" && pwd)
elif has_code "$(cd .. && pwd)/shared/ufo"; then
  ufo=$(cd .. && pwd)/shared/ufo
elif has_code "$upstream" && [ "$(git -C "$upstream" rev-parse HEAD 2>/dev/null)" = "$commit" ]; then
  ufo=$(pwd)/$upstream
elif [ "${1:-}" = "--check" ]; then
  echo "ufo: UFO's code is not here (scripts/setup-ufo.sh fetches it)"
  exit 1
else
  # The pinned commit, and only the folders the tests use; git checks what it fetched
  # against the commit's hash.
  command -v git >/dev/null || { echo "ufo: UFO's code is not here and git is missing to fetch it: set UFO_SOURCE to a checkout of microsoft/UFO at $commit, or skip its tests with UFO_BATCH_SKIP_TESTS=ufo" >&2; exit 2; }
  echo "ufo: fetching microsoft/UFO at $commit into $upstream"
  rm -rf "$upstream.new"
  if ! { git init -q "$upstream.new" \
         && timeout "${UFO_BATCH_FETCH_TIMEOUT:-300}" git -C "$upstream.new" fetch -q --depth 1 "$repo" "$commit" \
         && git -C "$upstream.new" checkout -q FETCH_HEAD -- aip ufo config LICENSE requirements.txt \
         && git -C "$upstream.new" update-ref HEAD FETCH_HEAD; } >target/ufo/fetch.log 2>&1; then
    rm -rf "$upstream.new"
    echo "ufo: UFO's code is not here and fetching $repo at $commit failed (no network to GitHub? log: target/ufo/fetch.log): set UFO_SOURCE to a checkout of microsoft/UFO at that commit, or skip its tests with UFO_BATCH_SKIP_TESTS=ufo" >&2
    exit 3
  fi
  rm -rf "$upstream" && mv "$upstream.new" "$upstream"
  ufo=$(pwd)/$upstream
fi
printf '%s\n' "$ufo" >target/ufo/source
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
