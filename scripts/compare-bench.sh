#!/usr/bin/env bash
# `compare` at scale (not part of CI): two run dirs of N tasks (default 10,000) written
# directly as records, a tenth of the tasks changed, then the same as N/5 tasks run 5
# times each with most tasks changed (the sign-flip test's drawn branch, its costliest
# case). Prints how long each `compare --json` takes (best of 3) and checks it against the
# limit LIMIT_S seconds (default 2).
#
# usage: scripts/compare-bench.sh [N] [LIMIT_S]
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-10000}
limit=${2:-2}
root=target/bench/compare-$n
cargo build --release -q --bin ufo-batch
bin=$PWD/target/release/ufo-batch
rm -rf "$root"
python3 - "$root" "$n" <<'PY'
import json, os, random, sys
root, n = sys.argv[1], int(sys.argv[2])
random.seed(7)
def record(rid, passed, repeat):
    st = "passed" if passed else "failed"
    return {"id": rid, "source": f"tasks/{rid}.json", "source_hash": "0", "shape": "recorded_plan",
            "session": "FollowerSession", "request": "r", "tags": [], "status": st,
            "complete": "yes" if passed else "no", "error": None if passed else "check failed",
            "attempts": [{"attempt": 1, "started": "2026-11-20T10:00:00.000Z",
                          "finished": "2026-11-20T10:00:01.000Z", "status": st, "error": None}],
            "started": "2026-11-20T10:00:00.000Z", "finished": "2026-11-20T10:00:01.000Z",
            "duration_s": 1.0, "rounds": 1, "steps": 1, "round_steps": [1],
            "usage": {"prompt_tokens": 0, "completion_tokens": 0}, "cost_usd": 0.0,
            "llm": {"calls": 0, "retries": 0, "bad_replies": 0}, "repeat": repeat}
def run(name, tasks, reps, rate):
    d = os.path.join(root, name)
    os.makedirs(d)
    json.dump({"tool": "ufo-batch", "version": "0.1.0", "name": name, "state": "finished",
               "invocation": 1, "started": "2026-11-20T10:00:00.000Z",
               "finished": "2026-11-20T10:05:00.000Z"}, open(os.path.join(d, "run.json"), "w"))
    for t in range(tasks):
        for r in range(reps):
            rid = f"g{t % 100:02d}/t{t}" + (f"/rep-{r + 1}" if reps > 1 else "")
            os.makedirs(os.path.join(d, rid))
            passed = random.random() < rate(t)
            json.dump(record(rid, passed, r + 1 if reps > 1 else None),
                      open(os.path.join(d, rid, "status.json"), "w"))
run("single-a", n, 1, lambda t: 0.7)
run("single-b", n, 1, lambda t: 0.7 if t % 10 else 0.3)
run("reps-a", n // 5, 5, lambda t: 0.6)
run("reps-b", n // 5, 5, lambda t: 0.55)
PY
status=0
for pair in single reps; do
  best=""
  for _ in 1 2 3; do
    start=$(date +%s.%N)
    "$bin" compare "$root/$pair-a" "$root/$pair-b" --json --fail-on never > "$root/$pair.json"
    took=$(echo "$(date +%s.%N) - $start" | bc)
    if [ -z "$best" ] || [ "$(echo "$took < $best" | bc)" = 1 ]; then best=$took; fi
  done
  verdict=$(python3 -c "import json; print(json.load(open('$root/$pair.json'))['verdict'])")
  printf '%s: %.3f s (limit %s s)\n  %s\n' "$pair" "$best" "$limit" "$verdict"
  if [ "$(echo "$best > $limit" | bc)" = 1 ]; then status=1; fi
done
exit $status
