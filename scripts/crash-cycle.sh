#!/usr/bin/env bash
# Reliability under kill -9 (not part of CI; a few minutes). Prints its figures.
#
# CYCLES times: start the runner on TASKS tasks (resuming the same run dir), kill -9 it
# at a random moment, and count the processes of its tasks still alive a second later.
# Then resume until the run finishes, and check every task's files:
#   lost         a task with no final result
#   torn         a JSON file or JSON line that does not parse
#   double-final a task with more than one final attempt, or one that ran again after
#                its result was final (each command appends a witness line with the time)
#   running      an attempt still recorded as running (the runner died in it: must say
#                `interrupted`)
#   survivors    processes of tasks alive 2 s after their runner was killed
#
# Usage: scripts/crash-cycle.sh [CYCLES] [TASKS]     (default: 100 cycles, 400 tasks)
#        SANDBOX=landlock scripts/crash-cycle.sh      (default: auto)
set -euo pipefail
cd "$(dirname "$0")/.."
cycles=${1:-100}
tasks=${2:-400}
sandbox=${SANDBOX:-auto}
root=$PWD/target/crash-cycle
rm -rf "$root"
mkdir -p "$root/tasks" "$root/witness"
cargo build --release -q --bin ufo-batch
bin=$PWD/target/release/ufo-batch

python3 - "$root" "$tasks" <<'PY'
import json, os, random, sys
root, n = sys.argv[1], int(sys.argv[2])
random.seed(7)
for i in range(n):
    witness = os.path.join(root, "witness", f"t{i:04d}")
    # Each command leaves a witness line with the time (ns), then works a little; one in
    # ten leaves background processes (one in its own session) that would outlive a
    # careless runner.
    # (Every sleep ends in 271828: what the survivor count looks for.)
    work = f"date +%s%N >> {witness}; sleep {random.randint(3, 15) / 10}271828"
    if i % 10 == 0:
        work += f"; (sleep 300.{i:04d}271828 &) ; setsid -f sleep 300.{i:04d}271828; true"
    task = {"request": f"crash cycle {i}", "actions": [
        {"action": "execute_command", "parameters": {"command": work}},
        {"action": "execute_command", "parameters": {"command": f"printf {i}"}, "expect": {"stdout": str(i)}},
    ]}
    with open(os.path.join(root, "tasks", f"t{i:04d}.json"), "w") as f:
        json.dump(task, f)
PY

run() {
  exec "$bin" run "$root/tasks" --out "$root/results" --name tasks --jobs 16 \
    --sandbox "$sandbox" --progress quiet "$@"
}
survivors=0
kills=0
start=$(date +%s)
for c in $(seq "$cycles"); do
  (run >/dev/null 2>&1) &
  pid=$!
  sleep "$((RANDOM % 2)).$(printf '%03d' $((RANDOM % 1000)))"
  if kill -9 "$pid" 2>/dev/null; then kills=$((kills + 1)); fi
  wait "$pid" 2>/dev/null || true
  sleep 2
  alive=$(pgrep -f '^sleep [0-9.]+271828$' | wc -l || true)
  if [ "$alive" -gt 0 ] && [ -n "${VERBOSE:-}" ]; then
    for p in $(pgrep -f '^sleep [0-9.]+271828$'); do
      echo "survivor: $(ps -o pid=,ppid=,stat=,etimes=,args= -p "$p") parent: $(ps -o args= -p "$(ps -o ppid= -p "$p")")" >&2
    done
  fi
  survivors=$((survivors + alive))
  pkill -9 -f '^sleep [0-9.]+271828$' 2>/dev/null || true
done
# Finish the run.
for _ in 1 2 3; do (run >/dev/null 2>&1) && break || true; done
elapsed=$(( $(date +%s) - start ))

python3 - "$root" "$tasks" <<'PY' || failed=1
import json, os, sys, datetime
root, n = sys.argv[1], int(sys.argv[2])
run = os.path.join(root, "results", "tasks")
lost = torn = double = running = 0
final = {"passed", "failed", "error", "timeout"}
for dirpath, dirs, files in os.walk(run):
    dirs[:] = [d for d in dirs if d not in ("workspace", "tmp")]
    for f in files:
        p = os.path.join(dirpath, f)
        if f.endswith(".json"):
            try: json.load(open(p))
            except Exception: torn += 1
        elif f == "response.log":
            for line in open(p):
                try: json.loads(line)
                except Exception: torn += 1
for i in range(n):
    tid = f"t{i:04d}"
    try:
        rec = json.load(open(os.path.join(run, tid, "status.json")))
    except Exception:
        lost += 1
        continue
    if rec.get("status") not in final:
        lost += 1
    attempts = rec.get("attempts", [])
    if sum(1 for a in attempts if a["status"] in final) != 1:
        double += 1
    if any(a["status"] == "running" for a in attempts):
        running += 1
    if rec.get("finished"):
        fin = datetime.datetime.fromisoformat(rec["finished"].replace("Z", "+00:00")).timestamp()
        w = os.path.join(root, "witness", tid)
        if os.path.exists(w):
            for line in open(w):
                if int(line) / 1e9 > fin + 0.001:
                    double += 1
                    break
print(f"lost {lost}, torn {torn}, double-final {double}, running {running}")
sys.exit(1 if lost or torn or double or running else 0)
PY
echo "cycles $cycles (kills that landed: $kills), tasks $tasks, sandbox $sandbox, ${elapsed}s"
echo "survivors (task processes alive 2 s after their runner's kill -9, summed over cycles): $survivors"
[ "${failed:-0}" = 0 ] && [ "$survivors" = 0 ]
