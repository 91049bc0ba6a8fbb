#!/usr/bin/env bash
# The cost of a call through MCP against a direct shell command (not part of CI): one
# task per kind of call, each making N calls (default 50) one after another, run one
# task at a time with the release build in the default sandbox. It prints, per kind, the
# median and 90th percentile of a call's time as the task saw it, and what the first call
# cost (for a stdio server: starting it in the task's sandbox and the MCP handshake).
#
#   - shell:        execute_command "echo hi" (the physical floor: sh -c in the jail)
#   - stdio (node): npm's server-filesystem, read_text_file
#   - stdio (python): a FastMCP 2.11.3 server, echo
#   - http:         a FastMCP 2.11.3 server with UFO's Linux tools, execute_command "echo hi"
#
# Needs scripts/setup-mcp.sh.   usage: scripts/mcp-bench.sh [N]
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-50}
bash scripts/setup-mcp.sh --check >/dev/null || { echo "needs scripts/setup-mcp.sh" >&2; exit 2; }
cargo build --release -q --bin ufo-batch --bin ufo-batch-jail
bin=$PWD/target/release/ufo-batch
root=$PWD/target/bench/mcp
rm -rf "$root" && mkdir -p "$root/tasks"
python=$PWD/target/mcp/venv/bin/python
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
UFO_MCP_API_KEY=bench-key-0123456789 PYTHONWARNINGS=ignore "$python" tests/mcp/linux_server.py "$port" >/dev/null 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true' EXIT
cat >"$root/ufo-batch.toml" <<TOML
[[mcp.servers]]
name = "fs"
command = "node"
args = ["$PWD/target/mcp/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js", "{workspace}"]

[[mcp.servers]]
name = "py"
command = "$python"
args = ["$PWD/tests/mcp/faulty_server.py"]
env = { PYTHONWARNINGS = "ignore" }

[[mcp.servers]]
name = "linux"
url = "http://127.0.0.1:$port/mcp"
inject = { api_key = "BENCH_KEY" }
TOML
python3 - "$root/tasks" "$n" <<'PY'
import json, os, sys
root, n = sys.argv[1], int(sys.argv[2])
kinds = {
    "1-shell": [{"action": "execute_command", "parameters": {"command": "echo hi"}}],
    "2-stdio-node": [{"action": "fs.write_file", "parameters": {"path": "a.txt", "content": "hi"}}]
                    + [{"action": "fs.read_text_file", "parameters": {"path": "a.txt"}}],
    "3-stdio-python": [{"action": "py.echo", "parameters": {"text": "hi"}}],
    "4-http": [{"action": "linux.execute_command", "parameters": {"command": "echo hi"}}],
}
for name, first in kinds.items():
    actions = first + [first[-1]] * (n - len(first))
    json.dump({"request": name, "actions": actions}, open(os.path.join(root, name + ".json"), "w"))
PY
cd "$root"
BENCH_KEY=bench-key-0123456789 "$bin" run tasks --name bench --jobs 1 --progress quiet --out results >/dev/null
python3 - results/bench <<'PY'
import json, os, statistics, sys
run = sys.argv[1]
print(f"{'calls of':<16}{'first call':>12}{'median':>10}{'p90':>10}   (ms, as the task saw each call)")
rows = {}
for name in sorted(os.listdir(run)):
    log = os.path.join(run, name, "response.log")
    if not os.path.isfile(log):
        continue
    times = [json.loads(l)["action"][0]["duration_s"] * 1000 for l in open(log)]
    st = json.load(open(os.path.join(run, name, "status.json")))["status"]
    rest = sorted(times[1:])
    med, p90 = statistics.median(rest), rest[int(len(rest) * 0.9)]
    rows[name] = med
    print(f"{name[2:]:<16}{times[0]:>12.1f}{med:>10.2f}{p90:>10.2f}   ({len(times)} calls, {st})")
shell = rows.get("1-shell")
if shell:
    for name, med in rows.items():
        if name != "1-shell":
            print(f"{name[2:]}: {med - shell:+.2f} ms per call against a shell command")
PY
