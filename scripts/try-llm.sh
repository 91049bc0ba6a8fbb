#!/usr/bin/env bash
# LLM mode with no key and no download: the shipped loopback mock server
# (examples/mock_llm.rs) plays a SCRIPTED agent (scripts/mock-agent.json; not a
# model) that answers the sample requests as a LinuxAgent, a HostAgent, an AppAgent, an
# operator (UI-TARS's format), the judge and the experience summarizer would, and
# ufo-batch runs examples/requests/ (and, where the desktop stack is installed,
# examples/desktop-requests/ and examples/operator/) against it, exactly as it would run
# them against a real provider: prompts, replies in UFO's schema, tools, checks, tokens and costs.
#
#   bash scripts/try-llm.sh            results in results/try-llm/
#   bash scripts/try-llm.sh --save-experience passed   arguments go to `ufo-batch run`
#                                      (not --out or --name: TRY_LLM_OUT sets the folder)
#   MOCK_AGENT=my-script.json bash scripts/try-llm.sh  another script (docs/llm.md:
#                                      how it reads), for requests of your own
#
# UFO_BATCH and MOCK_LLM name prebuilt binaries (the tests use them); else they are built.
set -euo pipefail
# A script of your own, named from where you are (before the cd below).
agent=${MOCK_AGENT:+$(realpath "$MOCK_AGENT")}
cd "$(dirname "$0")/.."

bin=${UFO_BATCH:-}
mock=${MOCK_LLM:-}
if [ -z "$bin" ] || [ -z "$mock" ]; then
  echo "== cargo build --release --bin ufo-batch --bin ufo-batch-jail --example mock_llm"
  cargo build --release --bin ufo-batch --bin ufo-batch-jail --example mock_llm
  bin=${bin:-target/release/ufo-batch}
  mock=${mock:-target/release/examples/mock_llm}
fi

out=${TRY_LLM_OUT:-results}
urlfile=$(mktemp)
"$mock" --play "${agent:-scripts/mock-agent.json}" >"$urlfile" &
mock_pid=$!
trap 'kill "$mock_pid" 2>/dev/null || true; rm -f "$urlfile"' EXIT
for _ in $(seq 100); do [ -s "$urlfile" ] && break; sleep 0.05; done
url=$(head -n 1 "$urlfile")
[ -n "$url" ] || { echo "the mock server did not start" >&2; exit 1; }
echo "== the scripted agent answers on $url (a script, not a model)"

paths=(examples/requests/)
if bash scripts/setup-desktop.sh --check >/dev/null 2>&1; then
  paths+=(examples/desktop-requests/ examples/operator/)
else
  echo "(the desktop stack is not installed: the desktop requests are left out; scripts/setup-desktop.sh installs it)"
fi
echo "== $bin run ${paths[*]} --config examples/mock-llm/ufo-batch.toml --llm-base-url $url"
"$bin" run "${paths[@]}" --config examples/mock-llm/ufo-batch.toml --llm-base-url "$url" \
  --out "$out" --name try-llm --fresh --progress lines "$@"
echo "== open $out/try-llm/report.html, or read a trajectory: $out/try-llm/ufo/hello_file/output.md"
