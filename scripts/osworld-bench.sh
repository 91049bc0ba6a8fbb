#!/usr/bin/env bash
# OSWorld without VMs, measured: N copies of the test suite's Calc task (tests/osworld:
# download, open in LibreOffice Calc, OSWorld's compare_table against a gold) replayed
# with a plan that solves it, J at a time, each on a desktop of its own with OSWorld's own
# server and setup controller. Reported: per task, the desktop's start, OSWorld's part
# (server up, setup steps) and the whole set-up (desktop ready to the first step), the
# evaluation, and the memory each desktop held (the machine's used memory at its peak
# during the run over the baseline, over J), against OSWorld's own per-VM cost: a VM that
# boots in minutes, a fixed `sleep(60)` before every task (run.py), and 4 GB of memory
# per VM (OSWorld's README), which the comparison lines check.
#
#   scripts/osworld-bench.sh [N=16] [J=8]
# Needs the desktop stack and OSWorld's venv (scripts/setup-osworld.sh), a release build.
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-16}
jobs=${2:-8}
bin=target/release/ufo-batch
[ -x "$bin" ] || { echo "build first: cargo build --release" >&2; exit 2; }
bash scripts/setup-osworld.sh --check >/dev/null || { echo "OSWorld's stack is missing: scripts/setup-osworld.sh" >&2; exit 2; }
bash scripts/setup-desktop.sh --check >/dev/null || { echo "the desktop stack is missing: scripts/setup-desktop.sh" >&2; exit 2; }

work=$(mktemp -d)
trap 'kill "${sampler:-0}" 2>/dev/null || true; rm -rf "$work"' EXIT
task=tests/osworld/evaluation_examples/examples/libreoffice_calc/6a53248d-6cd1-5cb7-9ba6-caf325476143.json
mkdir -p "$work/plans"
python3 - "$task" "$work/plans" "$n" <<'EOF'
import json, sys
task, out, n = json.load(open(sys.argv[1])), sys.argv[2], int(sys.argv[3])
k = lambda *keys, **kw: {"action": "keypress", "parameters": dict({"keys": list(keys)}, **kw)}
ready = "xdotool search --sync --onlyvisible --name 'Quarterly_Totals.xlsx - LibreOffice Calc' windowactivate --sync && sleep 1"
actions = [{"action": "execute_command", "parameters": {"command": ready}}, k("ctrl", "Home"), k("Down", repeat=5), k("Right"),
           {"action": "type", "parameters": {"text": "=SUM(B2:B5)"}}, k("Return"),
           {"action": "wait", "parameters": {"seconds": 0.5}}]
for i in range(n):
    json.dump({"request": task["instruction"], "osworld": task, "actions": actions},
              open(f"{out}/calc-{i + 1:03}.json", "w"))
EOF

available() { awk '/^MemAvailable:/ {print $2}' /proc/meminfo; }
baseline=$(available)
: >"$work/mem"
( while :; do available >>"$work/mem"; sleep 0.2; done ) &
sampler=$!
start=$(date +%s.%N)
"$bin" run "$work/plans" --out "$work/runs" --osworld-cache tests/osworld/cache -j "$jobs" >"$work/out.txt" 2>&1 || true
end=$(date +%s.%N)
kill "$sampler" 2>/dev/null || true
lowest=$(sort -n "$work/mem" | head -1)
run=$(find "$work/runs" -maxdepth 2 -name summary.json -printf '%h\n' | head -1)

python3 - "$run" "$n" "$jobs" "$baseline" "$lowest" "$start" "$end" <<'EOF'
import json, os, re, statistics, sys
run, n, jobs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
baseline, lowest, start, end = int(sys.argv[4]), int(sys.argv[5]), float(sys.argv[6]), float(sys.argv[7])
desktop, room, setup, evaluation, passed = [], [], [], [], 0
for name in sorted(os.listdir(run)):
    log = os.path.join(run, name, "task.log")
    if not os.path.exists(log):
        continue
    text = open(log).read()
    status = json.load(open(os.path.join(run, name, "status.json")))
    passed += status["status"] == "passed" and status.get("score") == 1.0
    m = re.search(r"desktop up in ([\d.]+)s; OSWorld's desktop ready in ([\d.]+)s: .*? setup \d+ steps? in ([\d.]+)s", text)
    if m:
        desktop.append(float(m.group(1))); room.append(float(m.group(2))); setup.append(float(m.group(1)) + float(m.group(2)))
    stamps = re.findall(r"^(\S+) INFO  (?:session (?:finished|failed)|evaluation \(OsWorld\))", text, re.M)
    if len(stamps) >= 2:
        from datetime import datetime
        t = [datetime.fromisoformat(s.replace("Z", "+00:00")).timestamp() for s in stamps[-2:]]
        evaluation.append(t[1] - t[0])
med = lambda xs: statistics.median(xs) if xs else float("nan")
p90 = lambda xs: sorted(xs)[max(0, int(len(xs) * 0.9) - 1)] if xs else float("nan")
per_task_mb = (baseline - lowest) / 1024 / jobs
wall = end - start
print(f"{n} OSWorld Calc tasks, {jobs} at a time: {passed} scored 1.0 by compare_table, in {wall:.1f} s ({wall / n:.1f} s a task)")
print(f"set-up (desktop ready to the first step): median {med(setup):.2f} s, p90 {p90(setup):.2f} s")
print(f"  desktop (Xvfb, bus, AT-SPI, openbox): median {med(desktop):.2f} s")
print(f"  OSWorld's part (server up, download + open in Calc): median {med(room):.2f} s")
print(f"evaluation (postconfig save, getters, compare_table): median {med(evaluation):.2f} s")
print(f"memory: {(baseline - lowest) / 1024:.0f} MB at the peak over the baseline, {per_task_mb:.0f} MB a desktop")
print(f"OSWorld's VM: sleep(60) before each task alone: set-up here is {60 / med(setup):.0f}x shorter "
      f"({'OK' if med(setup) < 60 else 'SLOWER'}); 4 GB a VM: a desktop here holds {per_task_mb / 4096 * 100:.0f}% of it "
      f"({'OK' if per_task_mb < 4096 else 'MORE'})")
EOF
