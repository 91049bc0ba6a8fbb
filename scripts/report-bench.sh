#!/usr/bin/env bash
# The report page at scale (not part of CI): N recorded plans (default 10,000) are run,
# then the script prints the size of report.html and of a task page, how long
# `ufo-batch report` takes to re-render every derived file (OTHER, an older ufo-batch,
# gives the same without the pages, for the difference), and how long headless chromium
# takes to open report.html against a blank page (median of 3).
#
# usage: scripts/report-bench.sh [N] [OTHER_UFO_BATCH]
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-10000}
other=${2:-}
root=target/bench
plans=$root/report-plans-$n
out=$root/report-out
cargo build --release -q --bin ufo-batch
bin=$PWD/target/release/ufo-batch
command -v chromium >/dev/null || { echo "needs chromium: scripts/setup-browser.sh" >&2; exit 2; }

if [ ! -d "$plans" ]; then
  python3 - "$plans" "$n" <<'PY'
import json, os, sys
root, count = sys.argv[1], int(sys.argv[2])
for i in range(count):
    d = os.path.join(root, f"g{i % 100:02d}")
    os.makedirs(d, exist_ok=True)
    ok = i % 10 != 0   # one in ten fails its expectation
    task = {"request": f"report bench task {i}", "tags": [f"t{i % 7}"], "actions": [
        {"action": "execute_command", "parameters": {"command": "printf ok"},
         "expect": {"stdout": "ok" if ok else "no"}}]}
    with open(os.path.join(d, f"t{i:05d}.json"), "w") as f:
        json.dump(task, f)
PY
fi
rm -rf "$out"
start=$(date +%s%N)
"$bin" run "$plans" --out "$out" --name run --jobs 16 --progress quiet >/dev/null 2>&1 || true
echo "run of $n tasks: $(( ($(date +%s%N) - start) / 1000000 )) ms"
run=$out/run
page=$(find "$run" -name task.html -print -quit)
echo "report.html: $(( $(stat -c %s "$run/report.html") / 1024 )) KiB; a task page: $(( $(stat -c %s "$page") / 1024 )) KiB"

median_ms() { # COMMAND...: the median wall time of 3 runs, in ms
  local times=()
  for _ in 1 2 3; do
    local s; s=$(date +%s%N)
    "$@" >/dev/null 2>&1 || true
    times+=($(( ($(date +%s%N) - s) / 1000000 )))
  done
  printf '%s\n' "${times[@]}" | sort -n | sed -n 2p
}
echo "ufo-batch report (every derived file, $n task pages included): $(median_ms "$bin" report "$run") ms"
if [ -n "$other" ]; then
  echo "the same with $other (no pages): $(median_ms "$other" report "$run") ms"
  "$bin" report "$run" >/dev/null
fi
shot() { chromium --headless --no-sandbox --disable-gpu --window-size=1300,900 --screenshot="$root/report-$1.png" "$2"; }
blank=$(median_ms shot blank about:blank)
full=$(median_ms shot page "file://$PWD/$run/report.html")
echo "chromium: report.html loaded and drawn in $full ms, a blank page in $blank ms: the page costs $(( full - blank )) ms"
echo "screenshot: $root/report-page.png"
