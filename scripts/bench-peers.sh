#!/usr/bin/env bash
# ufo-batch against a peer runner on the same work (opt-in, not part of CI: it installs
# inspect-ai from PyPI into target/peers/venv on first use). Prints its figures.
#
# N samples (default 10,000) of one model call each, JOBS at once (default 64), no
# commands and no scorer of note, so that what is measured is the runner itself:
#   - Inspect AI (`inspect_ai.eval`) with its in-process `mockllm` model (fixed outputs
#     with a fixed `usage`: tiktoken cannot download its tables here);
#   - ufo-batch with N request tasks against the loopback mock LLM answering at once
#     (`--eval none`); the mock server's CPU is shown apart (it stands for the provider).
# For each: wall time, CPU seconds of the runner process, CPU per sample, peak RSS,
# and the ratios. Median of ROUNDS (default 3) interleaved rounds.
#
# Usage: scripts/bench-peers.sh [N] [JOBS]
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-10000}
jobs=${2:-64}
rounds=${ROUNDS:-3}
root=$PWD/target/peers
venv=$root/venv
if ! "$venv/bin/python" -c 'import inspect_ai' 2>/dev/null; then
  echo "== installing inspect-ai into $venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q inspect-ai
fi
cargo build --release -q --bin ufo-batch --bin ufo-batch-jail --example mock_llm
bin=$PWD/target/release/ufo-batch
out=$root/out-$$
mkdir -p "$out"
requests=$root/requests-$n
if [ ! -d "$requests" ]; then
  python3 - "$requests" "$n" <<'PY'
import json, os, sys
root, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    d = os.path.join(root, f"g{i % 100:02d}")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, f"t{i:06d}.json"), "w") as f:
        json.dump({"request": f"bench request {i}"}, f)
PY
fi
cat >"$out/inspect_task.py" <<'PY'
import sys
from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import match
from inspect_ai.solver import generate

n, jobs, log_dir = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
output = ModelOutput.from_content(model="mockllm/model", content="FINISH")
output.usage = ModelUsage(input_tokens=100, output_tokens=20, total_tokens=120)
model = get_model("mockllm/model", custom_outputs=[output] * n)
task = Task(
    dataset=[Sample(input=f"bench request {i}", target="FINISH") for i in range(n)],
    solver=generate(),
    scorer=match(),
)
logs = eval(task, model=model, max_samples=jobs, max_connections=jobs, log_dir=log_dir,
            display="none")
assert logs[0].status == "success", logs[0].status
assert len(logs[0].samples or []) == n, "not every sample ran"
PY
port=$((20000 + RANDOM % 20000))
target/release/examples/mock_llm --port "$port" --delay-ms 0 >"$out/mock.url" &
mock=$!
trap 'kill $mock 2>/dev/null || true; rm -rf "$out"' EXIT
for _ in $(seq 50); do [ -s "$out/mock.url" ] && break; sleep 0.1; done
python3 - "$n" "$jobs" "$rounds" "$out" "$bin" "$requests" "$(cat "$out/mock.url")" "$mock" "$venv/bin/python" <<'PY'
import json, os, statistics, subprocess, sys, time
n, jobs, rounds = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
out, bin, requests, url, mock, python = sys.argv[4:10]

def measured(argv):
    # GNU time: wall, user+system CPU and peak RSS of the one process it starts (and
    # what that waits for).
    report = os.path.join(out, "time.txt")
    start = time.monotonic()
    subprocess.run(["/usr/bin/time", "-f", "%U %S %M", "-o", report] + argv,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    wall = time.monotonic() - start
    user, system, rss = open(report).read().split()[-3:]
    return wall, float(user) + float(system), int(rss) / 1024

def mock_cpu():
    fields = open(f"/proc/{mock}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

runs = {"inspect": [], "ufo-batch": []}
mock_used = []
for r in range(rounds):
    runs["inspect"].append(measured([python, os.path.join(out, "inspect_task.py"), str(n),
                                     str(jobs), os.path.join(out, f"inspect-{r}")]))
    before = mock_cpu()
    runs["ufo-batch"].append(measured([bin, "run", requests, "--out", out, "--name", f"ufo-{r}",
                                       "--jobs", str(jobs), "--model", "bench",
                                       "--llm-base-url", url, "--eval", "none",
                                       "--progress", "quiet"]))
    mock_used.append(mock_cpu() - before)
    run = json.load(open(os.path.join(out, f"ufo-{r}", "run.json")))
    assert run["totals"]["passed"] == n, run["totals"]
print(f"== {n} samples of one model call, {jobs} at once, median of {rounds} interleaved rounds")
print(f"{'runner':>10} {'wall s':>8} {'cpu s':>8} {'cpu/sample ms':>14} {'peak RSS MB':>12}")
med = {}
for name, rs in runs.items():
    wall = statistics.median(w for w, _, _ in rs)
    cpu = statistics.median(c for _, c, _ in rs)
    rss = statistics.median(m for _, _, m in rs)
    med[name] = (wall, cpu, rss)
    print(f"{name:>10} {wall:>8.2f} {cpu:>8.2f} {cpu * 1000 / n:>14.3f} {rss:>12.0f}")
print(f"{'(mock LLM)':>10} {'':>8} {statistics.median(mock_used):>8.2f} "
      f"{statistics.median(mock_used) * 1000 / n:>14.3f}   the provider's side, not ufo-batch's")
(iw, ic, ir), (uw, uc, ur) = med["inspect"], med["ufo-batch"]
print(f"Inspect AI / ufo-batch: CPU per sample {ic / uc:.1f}x, wall {iw / uw:.1f}x, peak RSS {ir / ur:.1f}x")
PY
