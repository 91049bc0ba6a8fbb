#!/usr/bin/env bash
# What confining commands costs (not part of CI; about a minute). Prints its figures.
#
# TASKS tasks of K commands `true` each run one at a time under each sandbox, and the
# CPU time of the runner and everything it started (getrusage of the children of a
# small Python driver) is divided by the number of commands. The baseline is the same
# number of bare `sh -c true` started one after another by a shell loop (what a command
# costs with no runner at all). Per task, the jail's own start and end are paid
# once; per command, only its request and the clone inside the jail. Under --sandbox
# none the runner forks itself per command to set the limits before exec (a limit set
# after the spawn races with the command); with `[sandbox] memory = "none"` and
# `cpu = "none"` it uses posix_spawn.
#
# Usage: scripts/sandbox-cost.sh [TASKS] [K]     (default: 100 tasks of 20 commands)
set -euo pipefail
cd "$(dirname "$0")/.."
tasks=${1:-100}
k=${2:-20}
cargo build --release -q --bin ufo-batch --bin ufo-batch-jail
bin=$PWD/target/release/ufo-batch
root=$PWD/target/sandbox-cost
rm -rf "$root"
mkdir -p "$root"

python3 - "$bin" "$root" "$tasks" "$k" <<'PY'
import json, os, resource, subprocess, sys, time
bin, root, tasks, k = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])

def make(name, per_task):
    folder = os.path.join(root, name)
    os.makedirs(folder, exist_ok=True)
    for i in range(tasks):
        actions = [{"action": "execute_command", "parameters": {"command": "true"}}] * per_task
        with open(os.path.join(folder, f"t{i:04d}.json"), "w") as f:
            json.dump({"request": "cost", "actions": actions}, f)
    return folder

def cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime

def measure(args):
    before, t = cpu(), time.perf_counter()
    subprocess.run(args, check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return cpu() - before, time.perf_counter() - t

commands = tasks * k
loop = f"i=0; while [ $i -lt {commands} ]; do /bin/sh -c true; i=$((i+1)); done"
bare_cpu, bare_wall = measure(["/bin/sh", "-c", loop])
print(f"{commands} commands ({tasks} tasks of {k}), one at a time; CPU per command (runner + commands):")
print(f"  bare sh -c true (no runner)        {bare_cpu / commands * 1000:6.3f} ms   wall {bare_wall / commands * 1000:6.3f} ms")
results = {}
for mode in ["none", "jail", "landlock", "bwrap"]:
    folder = make(f"tasks-{mode}", k)
    out = os.path.join(root, f"results-{mode}")
    c, w = measure([bin, "run", folder, "--out", out, "--jobs", "1", "--sandbox", mode, "--progress", "quiet"])
    ok = os.path.exists(os.path.join(out, f"tasks-{mode}", "summary.json"))
    if not ok:
        print(f"  --sandbox {mode:9}                 (not available here)")
        continue
    results[mode] = c
    print(f"  --sandbox {mode:9}                 {c / commands * 1000:6.3f} ms   wall {w / commands * 1000:6.3f} ms"
          f"   (+{(c - bare_cpu) / commands * 1000:.3f} ms over bare)")
if "none" in results and "jail" in results:
    # Per command and per task, from tasks of K commands and tasks of 1: C(K) = tasks *
    # (q + K * p), so p = (C(K) - C(1)) / (tasks * (K - 1)) and q = C(1) / tasks - p.
    # The jail's own start and end is q(jail) - q(none): what a task costs more in a jail
    # than without one (the runner's per-task work is in both).
    one = make("tasks-one", 1)
    split = {}
    for mode in ["none", "jail"]:
        c1, _ = measure([bin, "run", one, "--out", os.path.join(root, f"one-{mode}"), "--jobs", "1", "--sandbox", mode, "--progress", "quiet"])
        p_cmd = (results[mode] - c1) / (tasks * (k - 1)) if k > 1 else float("nan")
        split[mode] = (p_cmd, c1 / tasks - p_cmd)
        print(f"  {mode:5} per command {p_cmd * 1000:6.3f} ms, per task {split[mode][1] * 1000:6.3f} ms (runner's work for a task, commands apart)")
    print(f"jail per command over bare sh -c true: {(split['jail'][0] - bare_cpu / commands) * 1000:+.3f} ms of CPU "
          "(a command in a jail is a clone inside it, no fork of the runner)")
    print(f"jail start and end, per task: {(split['jail'][1] - split['none'][1]) * 1000:.3f} ms of CPU")
PY
