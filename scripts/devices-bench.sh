#!/usr/bin/env bash
# Remote devices measured on loopback (not part of CI; about a minute): N recorded plans
# of K trivial commands each (`echo`), run on 1, 2 and 4 AIP device clients (the tests'
# own client, tests/devices/aip_client.py, which runs each command through a shell as
# UFO's Linux tool runs its own), and the same plans run locally in the jail. Prints
# tasks/s for each, and a command's median time as the task saw it (from response.log):
# the per-command overhead of a device against a local command. The device clients
# share this machine's 2 CPUs with the runner, so the figures are a floor, not a fleet.
#
# Needs scripts/setup-mcp.sh.   usage: scripts/devices-bench.sh [N] [K]
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-60}
k=${2:-5}
bash scripts/setup-mcp.sh --check >/dev/null || { echo "needs scripts/setup-mcp.sh" >&2; exit 2; }
cargo build --release -q --bin ufo-batch --bin ufo-batch-jail
root=$PWD/target/bench/devices
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
python3 - "$PWD/target/release/ufo-batch" "$root" "$PWD/target/mcp/venv/bin/python" "$n" "$k" <<'PY'
import glob, json, os, socket, statistics, subprocess, sys, time
bin, root, python, n, k = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])

def port():
    s = socket.socket(); s.bind(("127.0.0.1", 0)); p = s.getsockname()[1]; s.close(); return p

def command_times(out):
    times = []
    for log in glob.glob(os.path.join(out, "**", "response.log"), recursive=True):
        for line in open(log):
            for a in json.loads(line)["action"]:
                times.append(a["duration_s"])
    return times

def run(devices):
    out = os.path.join(root, f"out-{devices}")
    args = [bin, "run", os.path.join(root, "tasks"), "--out", out, "--fresh", "--progress", "quiet",
            "--config", os.path.join(root, "ufo-batch.toml")]
    clients = []
    if devices:
        p = port()
        args += ["--devices", f"127.0.0.1:{p}", "--devices-wait", str(devices), "--jobs", str(devices)]
    else:
        args += ["--jobs", "2"]
    clock = time.monotonic()
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if devices:
        time.sleep(0.3)
        for d in range(devices):
            clients.append(subprocess.Popen([python, "tests/devices/aip_client.py",
                f"ws://127.0.0.1:{p}/ws?token={os.environ['UFO_BATCH_DEVICE_TOKEN']}", f"bench-{d}", "--backoff", "0.2"],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    stdout, stderr = proc.communicate(timeout=600)
    wall = time.monotonic() - clock
    for c in clients:
        c.kill(); c.wait()
    if proc.returncode != 0:
        sys.exit(f"the run failed:\n{stdout}\n{stderr}")
    times = command_times(os.path.join(out, "devices"))
    return wall, statistics.median(times), statistics.quantiles(times, n=10)[-1]

print(f"{n} tasks of {k} commands each (echo), release build, loopback, 2 CPUs")
print(f"{'where':>12} {'wall s':>7} {'tasks/s':>8} {'median cmd ms':>14} {'p90 cmd ms':>11}")
local = run(0)
print(f"{'local (jail)':>12} {local[0]:7.2f} {n / local[0]:8.1f} {local[1] * 1000:14.1f} {local[2] * 1000:11.1f}")
for devices in (1, 2, 4):
    wall, median, p90 = run(devices)
    print(f"{str(devices) + ' device' + ('s' if devices > 1 else ''):>12} {wall:7.2f} {n / wall:8.1f} {median * 1000:14.1f} {p90 * 1000:11.1f}")
print("wall includes the devices' start and registration (about 0.5 s); a device runs one command at a time")
PY
