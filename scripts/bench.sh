#!/usr/bin/env bash
# The runner against the physical limit (not part of CI; 5-10 minutes). Prints its
# figures; scripts/bench.py measures, this builds and makes the inputs.
#
# 1. N synthetic recorded plans (default 10,000; two tiny commands each: `true` and
#    `printf ok` with its expect) at each --jobs, interleaved ROUNDS times (default 3)
#    with the bare loop — xargs -P JOBS running the same commands with `sh -c` in a fresh
#    folder per task — and medians: tasks/s of both and their ratio, CPU per task of all
#    processes, the runner's own CPU per task, its fsync/syncfs calls per task and its
#    peak RSS (run.json runner); then the time to load and validate the task files.
# 2. LLM_TASKS request tasks (default 512) against the loopback mock LLM, which answers
#    each call after LLM_DELAY_MS (default 200 ms): makespan against the ideal (calls x
#    delay / jobs) at LLM_JOBS (default "8 64 256"), first with one call per task, then
#    with three (two commands, then FINISH), the median of ROUNDS interleaved rounds
#    and the range; and the mock server's own CPU per call, the rate it could serve,
#    beside the rate the run asked of it.
#
# Usage: scripts/bench.sh [N] [JOBS...]        (default: 10000, jobs 1 8 64 256)
#        SANDBOX=none scripts/bench.sh ...     (default: auto)
#        OTHER=/old/target/release/ufo-batch scripts/bench.sh ...   (also an older build,
#        interleaved, in the plans table; it needs its ufo-batch-jail beside it)
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-10000}
shift || true
jobs=("$@")
[ ${#jobs[@]} -eq 0 ] && jobs=(1 8 64 256)
rounds=${ROUNDS:-3}
llm_tasks=${LLM_TASKS:-512}
llm_delay_ms=${LLM_DELAY_MS:-200}
read -r -a llm_jobs <<<"${LLM_JOBS:-8 64 256}"
sandbox=${SANDBOX:-auto}
root=$PWD/target/bench
out=$root/out-$$
mkdir -p "$out"
# Results are deleted only at the end (see fresh() in bench.py); a bench run right
# after another one still pays for the other's deletions for up to 5 minutes.
trap 'rm -rf "$out"' EXIT
cargo build --release -q --bin ufo-batch --bin ufo-batch-jail --example mock_llm
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
    with open(os.path.join(d, f"t{i:06d}.json"), "w") as f:
        json.dump(task, f)
PY
}

plans=$root/plans-$n
[ -d "$plans" ] || generate "$plans" "$n" plans
echo "== $n recorded plans (2 commands each), sandbox $sandbox, $(nproc) CPUs, median of $rounds interleaved rounds"
python3 scripts/bench.py plans "$bin${OTHER:+,$OTHER}" "$plans" "$out" "$rounds" "$sandbox" "${jobs[@]}"
"$bin" validate "$plans" >/dev/null
start=$(date +%s%N)
"$bin" validate "$plans" >/dev/null
echo "load + validate (warm): $(( ($(date +%s%N) - start) / 1000000 )) ms"

requests=$root/requests-$llm_tasks
[ -d "$requests" ] || generate "$requests" "$llm_tasks" requests
for steps in 1 3; do
  port=$((20000 + RANDOM % 20000))
  target/release/examples/mock_llm --port "$port" --delay-ms "$llm_delay_ms" --steps "$steps" >"$root/mock.url" &
  mock=$!
  trap 'kill $mock 2>/dev/null || true; rm -rf "$out"' EXIT
  for _ in $(seq 50); do [ -s "$root/mock.url" ] && break; sleep 0.1; done
  echo
  echo "== $llm_tasks LLM tasks, $steps call(s) each ($((steps - 1)) commands), ${llm_delay_ms} ms per call (loopback mock LLM)"
  python3 scripts/bench.py llm "$bin" "$requests" "$out" "$(cat "$root/mock.url")" "$mock" \
    "$llm_delay_ms" "$steps" "$sandbox" "$rounds" "${llm_jobs[@]}"
  kill $mock 2>/dev/null || true
  wait $mock 2>/dev/null || true
done
