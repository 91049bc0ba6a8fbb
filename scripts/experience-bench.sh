#!/usr/bin/env bash
# Experience retrieval at scale (not part of CI): an experience.yaml of N records
# (default 10,000) with requests made of a few hundred words, and T shell requests
# (default 200) run against the loopback mock server (two calls each) with
# `--experience`. Prints how long reading and indexing the file took, the time of each
# retrieval (mean, 95th percentile, max, from RUST_LOG=debug) and the characters the
# examples add to each agent step's system prompt (about 4 per token), and checks the
# mean retrieval against LIMIT_MS milliseconds (default 20).
#
# usage: scripts/experience-bench.sh [N] [T] [LIMIT_MS]
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-10000}
tasks=${2:-200}
limit=${3:-20}
root=$PWD/target/bench/experience-$n
cargo build --release -q --bin ufo-batch --bin ufo-batch-jail --example mock_llm
bin=$PWD/target/release/ufo-batch
mock=$PWD/target/release/examples/mock_llm
rm -rf "$root"
mkdir -p "$root/exp" "$root/tasks"
python3 - "$root" "$n" "$tasks" <<'PY'
import json, random, sys
root, n, tasks = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
random.seed(11)
verbs = "sum count sort filter join rename copy compress list find replace merge split trim".split()
things = ("column rows lines words errors files pictures logs totals headers names dates prices "
          "orders customers clients regions amounts scores reports backups configs").split()
places = [f"{w}{i}" for w in ("sales", "server", "data", "notes", "users", "stock") for i in range(40)]
def request():
    return (f"{random.choice(verbs).capitalize()} the {random.choice(things)} of {random.choice(places)}.csv "
            f"and the {random.choice(things)} into {random.choice(places)}.txt")
with open(f"{root}/exp/experience.yaml", "w") as f:
    for i in range(n):
        r = request()
        example = {"Observation": "the workspace holds the input file", "Thought": "one command does it",
                   "ControlLabel": "", "ControlText": "", "Function": "execute_command",
                   "Args": {"command": "awk -F, 'NR>1 {s+=$2} END {print s}' in.csv > out.txt"},
                   "Status": "FINISH", "Plan": "<FINISH>", "Comment": "done"}
        f.write(f"example{i}:\n  example: {json.dumps(example)}\n  Tips: {json.dumps('- skip the header row')}\n"
                f"  request: {json.dumps(r)}\n  Sub-task: {json.dumps(r)}\n  app_list: [shell]\n")
for t in range(tasks):
    json.dump({"request": request(), "evaluate": [{"type": "command", "run": "true"}]},
              open(f"{root}/tasks/t{t:04d}.json", "w"))
PY
echo "== $(du -h "$root/exp/experience.yaml" | cut -f1) experience.yaml, $n records; $tasks tasks"
urlfile=$(mktemp)
"$mock" --steps 2 >"$urlfile" &
mock_pid=$!
trap 'kill "$mock_pid" 2>/dev/null || true; rm -f "$urlfile"' EXIT
for _ in $(seq 100); do [ -s "$urlfile" ] && break; sleep 0.05; done
url=$(head -n 1 "$urlfile")
cd "$root"
start=$(date +%s.%N)
RUST_LOG=ufo_batch=debug "$bin" run tasks --model bench --llm-base-url "$url" --jobs 2 \
  --experience exp --progress quiet --out out 2>"$root/debug.log" || true
end=$(date +%s.%N)
python3 - "$root/debug.log" "$limit" "$start" "$end" "$tasks" <<'PY'
import re, sys
log, limit, start, end, tasks = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5])
text = re.sub(r"\x1b\[[0-9;]*m", "", open(log).read())
opened = re.search(r"experience read and indexed records=(\d+) millis=(\d+)", text)
times, chars, given = [], [], []
for m in re.finditer(r"experience retrieval micros=(\d+) chars=(\d+) given=(\d+)", text):
    times.append(int(m.group(1)) / 1000.0); chars.append(int(m.group(2))); given.append(int(m.group(3)))
if not opened or not times:
    sys.exit(f"no timing in {log}: was RUST_LOG honoured?")
times.sort()
mean = sum(times) / len(times)
p95 = times[int(len(times) * 0.95) - 1]
print(f"read and indexed {opened.group(1)} records in {int(opened.group(2))} ms")
print(f"{len(times)} retrievals: mean {mean:.2f} ms, p95 {p95:.2f} ms, max {times[-1]:.2f} ms "
      f"(limit {limit} ms); {sum(given)/len(given):.1f} records given each")
print(f"examples add {sum(chars)/len(chars):.0f} characters to each step's system prompt "
      f"(about {sum(chars)/len(chars)/4:.0f} tokens), max {max(chars)}")
print(f"the run of {tasks} tasks took {end - start:.1f} s in all")
if mean > limit:
    sys.exit(f"mean retrieval {mean:.2f} ms is over the limit of {limit} ms")
PY
