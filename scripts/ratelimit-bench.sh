#!/usr/bin/env bash
# How a provider's rate limit slows a run: 128 request tasks of 3 LLM calls each
# against the loopback mock LLM that serves LIMIT calls at once (DELAY_MS each) and
# answers 429 with Retry-After: 1 beyond that, at several --jobs. The provider-bound
# ideal is calls x delay / min(limit, jobs); the table prints makespan / ideal, the
# tasks that passed, and the refusals the mock sent.
#
# usage: scripts/ratelimit-bench.sh [UFO_BATCH]   (default: target/release/ufo-batch)
# env:   LIMITS="4 8 32"  JOBS="16 64 256"  TASKS=128  CALLS=3  DELAY_MS=100
set -euo pipefail
cd "$(dirname "$0")/.."

read -ra limits <<<"${LIMITS:-4 8 32}"
read -ra jobs <<<"${JOBS:-16 64 256}"
tasks=${TASKS:-128}
calls=${CALLS:-3}
delay_ms=${DELAY_MS:-100}
bin=${1:-target/release/ufo-batch}

cargo build --release -q --example mock_llm
[ "$bin" != target/release/ufo-batch ] || cargo build --release -q --bin ufo-batch
[ -x "$bin" ] || { echo "no ufo-batch binary at $bin" >&2; exit 2; }
bin=$(realpath "$bin")

root=$(mktemp -d /tmp/ufo-batch-ratelimit.XXXXXX)
mock=
cleanup() {
  [ -z "$mock" ] || kill "$mock" 2>/dev/null || true
  rm -rf "$root"
}
trap cleanup EXIT

mkdir -p "$root/tasks"
for i in $(seq -w 1 "$tasks"); do
  printf '{"request": "task %s: run true twice, then finish"}\n' "$i" >"$root/tasks/t$i.json"
done
# A short give_up_after would turn a slow provider into errors; the default is minutes.
printf '[llm]\nmodel = "bench"\ntimeout = "30s"\n' >"$root/ufo-batch.toml"

echo "$("$bin" --version): $tasks tasks x $calls calls, ${delay_ms} ms per call; the mock refuses calls beyond its limit (429, Retry-After: 1)"
printf '%6s %6s %12s %10s %8s %8s %8s %10s\n' limit jobs makespan_s ideal_s ratio passed errors refused
for limit in "${limits[@]}"; do
  for j in "${jobs[@]}"; do
    rm -f "$root/mock.url" "$root/mock.stats"
    target/release/examples/mock_llm --delay-ms "$delay_ms" --steps "$calls" \
      --limit "$limit" --refusal retry-after=1 --stats "$root/mock.stats" >"$root/mock.url" &
    mock=$!
    for _ in $(seq 100); do [ -s "$root/mock.url" ] && break; sleep 0.05; done
    out=$root/out
    rm -rf "$out"
    start=$(date +%s%N)
    (cd "$root" && "$bin" run tasks --out "$out" --name run --jobs "$j" --eval none \
      --llm-base-url "$(cat mock.url)" --progress quiet >/dev/null 2>"$root/stderr") || true
    end=$(date +%s%N)
    sleep 0.3
    kill "$mock" 2>/dev/null || true
    wait "$mock" 2>/dev/null || true
    mock=
    [ -s "$out/run/summary.json" ] || { cat "$root/stderr" >&2; exit 1; }
    python3 - "$start" "$end" "$tasks" "$calls" "$delay_ms" "$limit" "$j" "$out/run/summary.json" "$root/mock.stats" <<'EOF'
import json, sys
start, end, tasks, calls, delay, limit, jobs = (int(x) for x in sys.argv[1:8])
totals = json.load(open(sys.argv[8]))["totals"]
refused = open(sys.argv[9]).read().split()[3]
makespan = (end - start) / 1e9
ideal = tasks * calls * delay / 1000 / min(limit, jobs)
errors = totals["error"] + totals["timeout"] + totals["cancelled"]
print(f"{limit:6} {jobs:6} {makespan:12.2f} {ideal:10.2f} {makespan / ideal:8.2f} {totals['passed']:8} {errors:8} {refused:>10}")
EOF
  done
done
