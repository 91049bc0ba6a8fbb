#!/usr/bin/env bash
# The runner at scale (not part of CI). Prints its figures.
#
# 1. N synthetic recorded plans (default 10,000; two tiny commands each: `true` and
#    `printf ok`), run at several --jobs values: tasks/s, the runner's own CPU time per
#    task and its peak RSS (from run.json), the largest RSS of any process of the run
#    (GNU time -v), and the time to load and validate the task files.
# 2. LLM_TASKS request tasks (default 512) against the loopback mock LLM, which answers
#    each call after LLM_DELAY_MS (default 200 ms): makespan against the ideal
#    (total wait / jobs) at LLM_JOBS (default "8 64 256").
#
# Usage: scripts/bench.sh [N] [JOBS...]        (default: 10000, jobs 1 8 64 256)
#        SANDBOX=none scripts/bench.sh ...     (default: auto)
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-10000}
shift || true
jobs=("$@")
[ ${#jobs[@]} -eq 0 ] && jobs=(1 8 64 256)
llm_tasks=${LLM_TASKS:-512}
llm_delay_ms=${LLM_DELAY_MS:-200}
read -r -a llm_jobs <<<"${LLM_JOBS:-8 64 256}"
sandbox=${SANDBOX:-auto}
root=target/bench
mkdir -p "$root"
cargo build --release -q --bin ufo-batch --example mock_llm
bin=$PWD/target/release/ufo-batch

generate() { # DIR COUNT KIND
  python3 - "$1" "$2" "$3" <<'PY'
import json, os, sys
root, count, kind = sys.argv[1], int(sys.argv[2]), sys.argv[3]
for i in range(count):
    d = os.path.join(root, f"g{i % 100:02d}")
    os.makedirs(d, exist_ok=True)
    if kind == "plans":
        task = {"request": f"bench task {i}", "actions": [
            {"action": "execute_command", "parameters": {"command": "true"}},
            {"action": "execute_command", "parameters": {"command": "printf ok"}, "expect": {"stdout": "ok"}}]}
    else:
        task = {"request": f"bench request {i}"}
    with open(os.path.join(d, f"t{i:05d}.json"), "w") as f:
        json.dump(task, f)
PY
}

field() { grep -F "$1" "$2" | sed 's/.*: //' | tail -1; }
runner() { python3 -c "import json,sys; r=json.load(open(sys.argv[1]))['runner']; print(r['$1'])" "$2"; }

plans=$root/plans-$n
[ -d "$plans" ] || generate "$plans" "$n" plans
echo "== $n recorded plans (2 commands each), sandbox $sandbox, $(nproc) CPUs"
start=$(date +%s%N)
"$bin" validate "$plans" >/dev/null
echo "load + validate: $(( ($(date +%s%N) - start) / 1000000 )) ms"
printf '%6s %10s %10s %14s %14s %12s %12s\n' jobs wall_s tasks/s runner_cpu_ms cpu_ms/task runner_rss_MB max_rss_MB
for j in "${jobs[@]}"; do
  t=$root/time-plans-$j.txt
  # Old results are deleted before the clock starts: deleting 80,000 files is the file
  # system's time, not the runner's.
  rm -rf "$root/out/plans-j$j" && sync
  /usr/bin/time -v "$bin" run "$plans" --out "$root/out" --name "plans-j$j" --jobs "$j" \
    --sandbox "$sandbox" --progress quiet 2>"$t" >/dev/null || true
  wall=$(python3 -c "import sys; p=sys.argv[1].split(':'); print(sum(float(x)*60**i for i,x in enumerate(reversed(p))))" "$(field 'Elapsed (wall clock)' "$t")")
  cpu=$(runner cpu_s "$root/out/plans-j$j/run.json")
  own=$(runner peak_rss_kb "$root/out/plans-j$j/run.json")
  rss=$(field 'Maximum resident set size' "$t")
  python3 -c "import sys; n,w,c,o,r=int(sys.argv[1]),float(sys.argv[2]),float(sys.argv[3]),int(sys.argv[4]),int(sys.argv[5]); print(f'{sys.argv[6]:>6} {w:10.2f} {n/w:10.0f} {c*1000:14.0f} {c*1000/n:14.3f} {o/1024:12.1f} {r/1024:12.1f}')" \
    "$n" "$wall" "$cpu" "$own" "$rss" "$j"
done

requests=$root/requests-$llm_tasks
[ -d "$requests" ] || generate "$requests" "$llm_tasks" requests
port=$((20000 + RANDOM % 20000))
target/release/examples/mock_llm --port "$port" --delay-ms "$llm_delay_ms" >"$root/mock.url" &
mock=$!
trap 'kill $mock 2>/dev/null || true' EXIT
for _ in $(seq 50); do [ -s "$root/mock.url" ] && break; sleep 0.1; done
echo
echo "== $llm_tasks LLM tasks, one call each, ${llm_delay_ms} ms per call (loopback mock LLM)"
printf '%6s %12s %12s %10s %14s\n' jobs makespan_s ideal_s ratio runner_cpu_ms
for j in "${llm_jobs[@]}"; do
  rm -rf "$root/out/llm-j$j" && sync
  start=$(date +%s%N)
  "$bin" run "$requests" --out "$root/out" --name "llm-j$j" --jobs "$j" --sandbox "$sandbox" \
    --model bench --llm-base-url "$(cat "$root/mock.url")" --eval none --progress quiet >/dev/null 2>&1 || true
  end=$(date +%s%N)
  cpu=$(runner cpu_s "$root/out/llm-j$j/run.json")
  python3 -c "import sys; m=(int(sys.argv[2])-int(sys.argv[1]))/1e9; ideal=int(sys.argv[3])*int(sys.argv[4])/1000/int(sys.argv[5]); print(f'{sys.argv[5]:>6} {m:12.2f} {ideal:12.2f} {m/ideal:10.2f} {float(sys.argv[6])*1000:14.0f}')" \
    "$start" "$end" "$llm_tasks" "$llm_delay_ms" "$j" "$cpu"
done
