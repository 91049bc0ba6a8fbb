#!/usr/bin/env bash
# The runner's memory as a batch grows (not part of CI; a few minutes). For each N
# (default 10,000 and 100,000): N recorded plans with no commands (so the run is the
# runner's own work), run fresh, then resumed once finished (every result kept); prints
# wall time and peak RSS of each, then the cost per task between the two largest N and
# what that comes to at 1,000,000 tasks.
#
# Usage: scripts/memory-bench.sh [N...]
#        BENCH_DIR=/somewhere scripts/memory-bench.sh   (default: /dev/shm when present,
#        so that the file system's own cost does not hide the runner's)
#        OUT_DIR=/on/disk scripts/memory-bench.sh 100000 1000000   (the results apart
#        from the task files: a million tasks' results take about 40 GB on ext4, more
#        than a tmpfs holds; default: BENCH_DIR/out)
set -euo pipefail
cd "$(dirname "$0")/.."
sizes=("$@")
[ ${#sizes[@]} -eq 0 ] && sizes=(10000 100000)
default_dir=$PWD/target/bench
[ -d /dev/shm ] && [ -w /dev/shm ] && default_dir=/dev/shm/ufo-batch-memory-bench
root=${BENCH_DIR:-$default_dir}
mkdir -p "$root"
out=${OUT_DIR:-$root/out}
trap 'rm -rf "$out"' EXIT
cargo build --release -q --bin ufo-batch --bin ufo-batch-jail
bin=$PWD/target/release/ufo-batch

generate() { # DIR COUNT
  python3 - "$1" "$2" <<'PY'
import json, os, sys
root, count = sys.argv[1], int(sys.argv[2])
for i in range(count):
    d = os.path.join(root, f"g{i % 100:02d}")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, f"t{i:07d}.json"), "w") as f:
        json.dump({"request": f"memory bench task {i}", "actions": []}, f)
PY
}

measure() { # ARGS... -> "wall_s peak_kb" (a run that fails stops the benchmark)
  if ! /usr/bin/time -f "%e %M" -o "$root/time" "$bin" "$@" >"$root/log" 2>&1; then
    echo "ufo-batch $* failed:" >&2
    tail -n 5 "$root/log" >&2
    exit 1
  fi
  tail -n 1 "$root/time"
}

printf '%-9s %-18s %-18s %-18s\n' tasks "fresh run" "resume (all kept)" "validate"
declare -A fresh resume
for n in "${sizes[@]}"; do
  plans=$root/empty-$n
  [ -d "$plans" ] || generate "$plans" "$n"
  read -r fw fk < <(measure run "$plans" --out "$out" --name "r$n" --fresh --progress quiet)
  read -r rw rk < <(measure run "$plans" --out "$out" --name "r$n" --progress quiet)
  read -r vw vk < <(measure validate "$plans")
  fresh[$n]=$fk
  resume[$n]=$rk
  printf '%-9s %6.1f s %6d MB  %6.1f s %6d MB  %6.1f s %6d MB\n' "$n" "$fw" $((fk / 1024)) "$rw" $((rk / 1024)) "$vw" $((vk / 1024))
  rm -rf "$out"
done
if [ ${#sizes[@]} -ge 2 ]; then
  a=${sizes[-2]}
  b=${sizes[-1]}
  python3 - "$a" "$b" "${fresh[$a]}" "${fresh[$b]}" "${resume[$a]}" "${resume[$b]}" <<'PY'
import sys
a, b, fa, fb, ra, rb = map(int, sys.argv[1:])
for label, x, y in (("fresh run", fa, fb), ("resume", ra, rb)):
    per = (y - x) * 1024 / (b - a)
    at_million = (y * 1024 + per * (1_000_000 - b)) / 2**20
    print(f"{label}: {per:.0f} bytes per task between {a:,} and {b:,} tasks; at 1,000,000 tasks about {at_million:,.0f} MB")
PY
fi
