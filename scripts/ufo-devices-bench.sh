#!/usr/bin/env bash
# Remote devices measured with UFO's own code on loopback (not part of CI; about a minute):
# N recorded plans of K commands each (`echo`, which UFO's Linux tool allows), run over D of
# UFO's own device clients (`python -m ufo.client.client` from ../shared/ufo, each in front
# of its own Linux MCP server), and the same plans run locally in the jail. Prints tasks/s
# for each, and a command's median time as the task saw it (from response.log): what a
# command costs on a UFO device against a local one. The clients and servers share this
# machine's 2 CPUs with the runner, so the figures are a floor, not a fleet.
#
# Needs scripts/setup-ufo.sh.   usage: scripts/ufo-devices-bench.sh [N] [K] [D]
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-50}
k=${2:-3}
d=${3:-2}
bash scripts/setup-ufo.sh --check >/dev/null || { echo "needs scripts/setup-ufo.sh" >&2; exit 2; }
cargo build --release -q --bin ufo-batch --bin ufo-batch-jail
root=$PWD/target/bench/ufo-devices
rm -rf "$root" && mkdir -p "$root/tasks"
python3 - "$root/tasks" "$n" "$k" <<'PY'
import json, os, sys
root, n, k = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
for i in range(n):
    actions = [{"action": "execute_command", "parameters": {"command": f"echo {i}-{j}"},
                "expect": {"stdout": f"{i}-{j}\n"}} for j in range(k)]
    json.dump({"request": f"bench {i}", "actions": actions}, open(os.path.join(root, f"t{i:03d}.json"), "w"))
PY
printf '[devices]\ninject = { api_key = "UFO_MCP_API_KEY" }\n' >"$root/ufo-batch.toml"
export UFO_BATCH_DEVICE_TOKEN=bench-token-0123456789 UFO_MCP_API_KEY=bench-key-0123456789
ufo=$(cd .. && pwd)/shared/ufo
python3 - "$PWD/target/release/ufo-batch" "$root" "$PWD/target/ufo/venv/bin/python" "$ufo" "$n" "$k" "$d" <<'PY'
import glob, json, os, shutil, socket, statistics, subprocess, sys, time
bin, root, python, ufo, n, k, d = sys.argv[1:5] + [int(x) for x in sys.argv[5:8]]

def port():
    s = socket.socket(); s.bind(("127.0.0.1", 0)); p = s.getsockname()[1]; s.close(); return p

def wait_port(p):
    for _ in range(400):
        try:
            socket.create_connection(("127.0.0.1", p), timeout=0.2).close(); return
        except OSError:
            time.sleep(0.05)
    raise SystemExit(f"nothing listens on {p}")

def command_times(out):
    times = []
    for log in glob.glob(os.path.join(out, "**", "response.log"), recursive=True):
        for line in open(log):
            for a in json.loads(line)["action"]:
                times.append(a["duration_s"])
    return times

def device(i, runner_port):
    home = os.path.join(root, f"device-{i}")
    os.makedirs(os.path.join(home, "work"), exist_ok=True)
    shutil.copytree(os.path.join(ufo, "config/ufo"), os.path.join(home, "config/ufo"), dirs_exist_ok=True)
    server_port = port()
    mcp = os.path.join(home, "config/ufo/mcp.yaml")
    text = open(mcp).read()
    at = text.index("LinuxAgent:")
    open(mcp, "w").write(text[:at] + text[at:].replace("port: 8010", f"port: {server_port}", 1))
    env = dict(os.environ, PYTHONPATH=ufo)
    quiet = dict(stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    server = subprocess.Popen([python, "-m", "ufo.client.mcp.http_servers.linux_mcp_server", "--port",
                               str(server_port), "--host", "localhost"], cwd=os.path.join(home, "work"), env=env, **quiet)
    wait_port(server_port)
    client = subprocess.Popen([python, "-m", "ufo.client.client", "--ws", "--ws-server",
                               f"ws://127.0.0.1:{runner_port}/ws?token={os.environ['UFO_BATCH_DEVICE_TOKEN']}",
                               "--client-id", f"ufo-{i}", "--platform", "linux"], cwd=home, env=env, **quiet)
    return [server, client]

def run(devices):
    out = os.path.join(root, f"out-{devices}")
    args = [bin, "run", os.path.join(root, "tasks"), "--out", out, "--fresh", "--progress", "quiet",
            "--config", os.path.join(root, "ufo-batch.toml")]
    procs = []
    if devices:
        p = port()
        args += ["--devices", f"127.0.0.1:{p}", "--devices-wait", str(devices), "--jobs", str(devices)]
        runner = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_port(p)
        for i in range(devices):
            procs += device(i, p)
    else:
        runner = subprocess.Popen(args + ["--jobs", "2"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    runner.wait()
    for proc in procs:
        os.killpg(proc.pid, 9)
    summary = json.load(open(os.path.join(out, "ufo-devices", "summary.json")))
    passed = summary["totals"]["passed"]
    # The run's own time, from its first task's start to its last task's end.
    rows = [json.load(open(f)) for f in glob.glob(os.path.join(out, "ufo-devices", "*", "status.json"))]
    start = min(r["started"] for r in rows)
    end = max(r["finished"] for r in rows)
    return passed, command_times(out), (start, end)

from datetime import datetime
def seconds(a, b):
    f = lambda t: datetime.fromisoformat(t.replace("Z", "+00:00"))
    return (f(b) - f(a)).total_seconds()

print(f"{n} plans of {k} commands each (`echo`), over UFO's own clients and locally in the jail:")
for devices in [0, d]:
    passed, times, (start, end) = run(devices)
    wall = seconds(start, end)
    where = "locally, jail, --jobs 2" if devices == 0 else f"on {devices} UFO clients"
    print(f"  {where:26} {passed}/{n} passed in {wall:6.2f}s: {n / wall:6.1f} tasks/s; "
          f"a command takes {statistics.median(times) * 1000:7.1f} ms (median of {len(times)})")
PY
