#!/usr/bin/env bash
# What an operator's action costs the runner, against the model's time, and N operator
# tasks at once: N Mousepad tasks (UFO's `operator` mode), each one model turn of four
# actions (click, select all, type Unicode, save) and one closing turn, against the OpenAI
# stand-in (tests/operator/stand_in.py, every request validated by the official SDK),
# which answers after DELAY ms as a model would. Reported: the runner's share of each
# step (observing the screen, the operator's screenshot made and encoded, each action with
# its hit test), the model's share, the makespan against the ideal, and the runner's peak
# memory.
#
#   scripts/operator-bench.sh [N=16] [DELAY_MS=1500]
# Needs the desktop stack (scripts/setup-desktop.sh), the SDKs' venv
# (scripts/setup-operator.sh) and a release build.
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-16}
delay=${2:-1500}
bin=target/release/ufo-batch
[ -x "$bin" ] || { echo "build first: cargo build --release" >&2; exit 2; }
bash scripts/setup-desktop.sh --check >/dev/null || { echo "the desktop stack is missing: scripts/setup-desktop.sh" >&2; exit 2; }
bash scripts/setup-operator.sh --check >/dev/null || { echo "the SDKs' venv is missing: scripts/setup-operator.sh" >&2; exit 2; }

work=$(mktemp -d)
trap 'kill "${stand:-0}" 2>/dev/null || true; rm -rf "$work"' EXIT
mkdir -p "$work/proj/tasks" "$work/proj/files"
printf 'an old line\n' >"$work/proj/files/note.txt"
cat >"$work/script.json" <<'EOF'
{"scenarios": {"bench": [
  {"thought": "Into the note, over its text.", "actions": [{"click": [0.25, 0.3]}, {"keypress": ["ctrl", "a"]}, {"type": "naïve — 東京 ✓"}, {"keypress": ["ctrl", "s"]}]},
  {"message": "Saved."}
]}}
EOF
for i in $(seq 1 "$n"); do
  cat >"$work/proj/tasks/note-$i.json" <<EOF
{"task": "Replace the note's text with naïve — 東京 ✓ and save it [script:bench]", "object": "note.txt",
 "mode": "operator", "close": true, "timeout": 600,
 "evaluate": [{"type": "file_equals", "path": "note.txt", "content": "naïve — 東京 ✓"}]}
EOF
done
target/operator/venv/bin/python tests/operator/stand_in.py --script "$work/script.json" --log "$work/log.jsonl" \
  --delay-ms "$delay" --parent $$ >"$work/stand.out" 2>&1 &
stand=$!
for _ in $(seq 1 600); do grep -q listening "$work/stand.out" 2>/dev/null && break; sleep 0.1; done
url=$(sed -n 's/^listening on //p' "$work/stand.out")
[ -n "$url" ] || { cat "$work/stand.out" >&2; echo "the stand-in did not start" >&2; exit 2; }
cat >"$work/proj/ufo-batch.toml" <<EOF
[operator]
provider = "openai"
model = "bench-operator"
base_url = "$url/v1"
EOF
echo "== $n operator tasks at once, the model answering in ${delay} ms"
start=$(date +%s.%N)
(cd "$work/proj" && OPENAI_API_KEY=sk-bench /usr/bin/time -f "%M" -o "$work/rss" \
  "$OLDPWD/$bin" run tasks --jobs "$n" --progress lines >"$work/run.out" 2>&1) || true
end=$(date +%s.%N)
tail -1 "$work/run.out"
python3 - "$work" "$n" "$delay" "$start" "$end" <<'EOF'
import json, re, statistics, sys, pathlib
work, n, delay, start, end = pathlib.Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
run = work / "proj/results/proj"
observe, shot, actions, picture = [], [], {}, []
passed = 0
for task in sorted(run.glob("note-*")):
    status = json.loads((task / "status.json").read_text())
    passed += status["status"] == "passed"
    log = (task / "task.log").read_text()
    for m in re.finditer(r"observed .*? in ([\d.]+)s; screenshot ([\d.]+)s; saved in ([\d.]+)s", log):
        observe.append(float(m.group(1)) + float(m.group(3)))
        shot.append(float(m.group(2)))
    picture += [float(x) for x in re.findall(r"as its model sees it \(\d+ KiB\), made in ([\d.]+)s", log)]
    for line in (task / "response.log").read_text().splitlines():
        for a in json.loads(line)["action"]:
            actions.setdefault(a["function"], []).append(a["duration_s"])
med = lambda xs: statistics.median(xs) * 1000 if xs else float("nan")
print(f"passed {passed}/{n}")
print(f"per step, the runner's (median ms): screen observed and saved {med(observe):.0f}, screenshot taken {med(shot):.0f}, "
      f"the operator's picture made and encoded {med(picture):.0f}")
for tool, xs in sorted(actions.items()):
    print(f"  action {tool}: {med(xs):.0f} ms (with its hit test: {'yes' if tool in ('click', 'double_click', 'move', 'drag') else 'no'})")
turns = 2
ideal = turns * delay / 1000
print(f"the model's share: {turns} turns x {delay} ms = {ideal:.1f} s a task; makespan {end - start:.1f} s for {n} at once "
      f"({(end - start) / ideal:.2f}x one task's model time)")
print(f"runner peak RSS: {int((work / 'rss').read_text().strip()) / 1024:.0f} MiB")
EOF
