#!/usr/bin/env bash
# Wall time of replaying the sample plans at several --jobs values.
# Usage: scripts/time-plans.sh [REPEATS] [JOBS...]   (default: 5 repeats, jobs 1 and 8)
set -euo pipefail
cd "$(dirname "$0")/.."
repeats=${1:-5}
shift || true
jobs=("${@:-1 8}")
[ "$#" -eq 0 ] && jobs=(1 8)
cargo build --release -q
bin=target/release/ufo-batch
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
tasks=$(find plans -name '*.json' | wc -l)
echo "replaying $tasks sample plans, $repeats runs each"
for j in "${jobs[@]}"; do
  best=""; total=0
  for _ in $(seq "$repeats"); do
    start=$(date +%s%N)
    "$bin" run plans/ --out "$out" --name "j$j" --fresh --jobs "$j" --progress quiet >/dev/null 2>&1 || true
    end=$(date +%s%N)
    ms=$(( (end - start) / 1000000 ))
    total=$(( total + ms ))
    if [ -z "$best" ] || [ "$ms" -lt "$best" ]; then best=$ms; fi
  done
  printf 'jobs %-3s mean %5d ms  best %5d ms\n' "$j" $(( total / repeats )) "$best"
done
