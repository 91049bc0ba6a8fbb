#!/usr/bin/env bash
# Desktop sessions, measured on the sample UI plans (examples/desktop; not part of CI;
# about two minutes). Prints its figures:
#
# - start: a desktop (virtual display, session bus, accessibility bus) up, and each
#   app's first window, from the task logs;
# - observation, per step: the AT-SPI tree walk (nodes visited, controls listed) and the
#   screenshot (GetImage), and writing the PNGs;
# - replay throughput at --jobs 1 and --jobs 3: tasks per minute and the speed-up, next
#   to the physical limit of this machine (its cores: LibreOffice starting is CPU-bound).
#
# Usage: scripts/desktop-bench.sh [ROUNDS]     (default: 2 rounds of each --jobs)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-2}
if ! bash scripts/setup-desktop.sh --check >/dev/null; then
  bash scripts/setup-desktop.sh --check || true
  exit 2
fi
cargo build --release -q --bin ufo-batch --bin ufo-batch-jail
bin=$PWD/target/release/ufo-batch
root=$PWD/target/desktop-bench
rm -rf "$root"
mkdir -p "$root"

python3 - "$bin" "$root" "$rounds" <<'PY'
import glob, json, os, re, statistics, subprocess, sys, time
bin, root, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
cores = os.cpu_count()

def run(jobs, n):
    out = os.path.join(root, f"jobs{jobs}-{n}")
    clock = time.monotonic()
    proc = subprocess.run([bin, "run", "examples/desktop", "--out", out, "--jobs", str(jobs),
                           "--fresh", "--progress", "lines"], capture_output=True, text=True)
    wall = time.monotonic() - clock
    if proc.returncode != 0:
        sys.exit(f"the run failed:\n{proc.stdout}\n{proc.stderr}")
    return out, wall

up, app, walk, nodes, controls, shot, save, tasks = [], {}, [], [], [], [], [], 0
walls = {1: [], 3: []}
for n in range(rounds):
    for jobs in (1, 3):
        out, wall = run(jobs, n)
        walls[jobs].append(wall)
        for log in glob.glob(os.path.join(out, "**", "task.log"), recursive=True):
            tasks += jobs == 1
            for line in open(log):
                m = re.search(r"desktop up in ([\d.]+)s", line)
                if m and jobs == 1:
                    up.append(float(m.group(1)))
                m = re.search(r"; (\S+) showed its window in ([\d.]+)s", line)
                if m and jobs == 1:
                    app.setdefault(m.group(1), []).append(float(m.group(2)))
                m = re.search(r"observed (\d+) nodes, (\d+) controls in ([\d.]+)s; screenshot ([\d.]+)s; saved in ([\d.]+)s", line)
                if m and jobs == 1:
                    nodes.append(int(m.group(1))); controls.append(int(m.group(2)))
                    walk.append(float(m.group(3))); shot.append(float(m.group(4))); save.append(float(m.group(5)))

def med(xs):
    return statistics.median(xs) if xs else float("nan")

n_tasks = tasks // rounds
print(f"desktop sessions on the {n_tasks} sample plans, {rounds} rounds, {cores} cores")
print(f"  desktop up (display + session bus + accessibility bus): median {med(up):.2f} s")
for name, xs in sorted(app.items()):
    print(f"  {name} first window: median {med(xs):.2f} s")
print(f"  tree walk: median {med(walk)*1000:.0f} ms for a median {med(nodes):.0f} nodes"
      f" ({max(nodes) if nodes else 0} at most), {med(controls):.0f} controls listed")
print(f"  screenshot (1280x800 GetImage): median {med(shot)*1000:.0f} ms; PNGs written: median {med(save)*1000:.0f} ms")
j1, j3 = med(walls[1]), med(walls[3])
print(f"  replay, --jobs 1: {j1:.1f} s for {n_tasks} tasks = {n_tasks/j1*60:.1f} tasks/min")
print(f"  replay, --jobs 3: {j3:.1f} s for {n_tasks} tasks = {n_tasks/j3*60:.1f} tasks/min"
      f" (speed-up {j1/j3:.2f}x; the limit is {min(3, cores)}x on {cores} cores)")
PY
