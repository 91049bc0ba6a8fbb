#!/usr/bin/env bash
# What a file tool call costs the runner (not part of CI; about a minute). Prints its figures.
#
# `write_file`, `read_file` and `list_dir` run in the runner itself (they are on the hot
# path of LLM shell tasks), so their cost is the runner's CPU (`run.json` runner.cpu_s).
# TASKS tasks of K calls each (write, append, read, list, in turn, on a workspace of a few
# files) are run, and TASKS tasks of one call each; the difference, divided by the calls
# it adds, is the cost of a call. With OTHER=path/to/an/older/ufo-batch the same runs are
# made with it, interleaved with this build's, ROUNDS times; the median is printed.
#
# Usage: scripts/file-tools-cost.sh [TASKS] [K]     (default: 20 tasks of 500 calls)
#        OTHER=/tmp/old/ufo-batch ROUNDS=5 scripts/file-tools-cost.sh
set -euo pipefail
cd "$(dirname "$0")/.."
tasks=${1:-20}
k=${2:-500}
cargo build --release -q --bin ufo-batch --bin ufo-batch-jail
bin=$PWD/target/release/ufo-batch
root=$PWD/target/file-tools-cost
rm -rf "$root"
mkdir -p "$root"

python3 - "$bin" "${OTHER:-}" "$root" "$tasks" "$k" "${ROUNDS:-3}" <<'PY'
import json, os, statistics, subprocess, sys
bin, other, root, tasks, k, rounds = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])

def make(name, calls):
    folder = os.path.join(root, name)
    os.makedirs(folder, exist_ok=True)
    cycle = [
        {"action": "write_file", "parameters": {"path": "notes/a.txt", "content": "line\n"}},
        {"action": "write_file", "parameters": {"path": "notes/a.txt", "content": "more\n", "append": True}},
        {"action": "read_file", "parameters": {"path": "notes/a.txt"}},
        {"action": "list_dir", "parameters": {"path": "notes"}},
    ]
    files = {f"notes/f{i}.txt": "x" * 100 for i in range(8)}
    for i in range(tasks):
        actions = [cycle[j % len(cycle)] for j in range(calls)]
        with open(os.path.join(folder, f"t{i:04d}.json"), "w") as f:
            json.dump({"request": "cost", "files": files, "actions": actions}, f)
    return folder

many, one = make("many", k), make("one", 1)

def runner_cpu(binary, folder, label):
    out = os.path.join(root, f"results-{label}")
    subprocess.run([binary, "run", folder, "--out", out, "--fresh", "--jobs", "1", "--progress", "quiet"],
                   check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    with open(os.path.join(out, os.path.basename(folder), "run.json")) as f:
        run = json.load(f)
    assert run["totals"]["passed"] == tasks, run["totals"]
    return run["runner"]["cpu_s"]

builds = [("this build", bin)] + ([("OTHER", other)] if other else [])
per_call = {name: [] for name, _ in builds}
for r in range(rounds):
    for name, binary in builds:
        label = name.replace(" ", "-")
        c_many = runner_cpu(binary, many, f"{label}-many")
        c_one = runner_cpu(binary, one, f"{label}-one")
        per_call[name].append((c_many - c_one) / (tasks * (k - 1)) * 1e6)
print(f"{tasks} tasks of {k} file tool calls against {tasks} of 1, one task at a time, {rounds} rounds;")
print(f"runner CPU per call (median, range), running as uid {os.getuid()}:")
for name, values in per_call.items():
    print(f"  {name:12} {statistics.median(values):7.1f} µs   ({min(values):.1f}–{max(values):.1f})")
PY
