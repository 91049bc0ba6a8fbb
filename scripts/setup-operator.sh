#!/usr/bin/env bash
# Installs the official SDKs of the computer-use providers for the operator tests'
# stand-ins (tests/operator/stand_in.py): every request the runner sends is validated
# against their request types and every reply built from their response models. A venv
# under target/operator with the pinned packages (about 40 MB). Not needed to run
# ufo-batch.
#
#   scripts/setup-operator.sh          install (idempotent)
#   scripts/setup-operator.sh --check  only say whether it is there (exit 1 if not)
set -euo pipefail
cd "$(dirname "$0")/.."
venv=target/operator/venv
packages=(openai==3.51.0 anthropic==2.10.0 pydantic==2.14.4)

ready() {
  "$venv/bin/python" -c 'import openai, anthropic, pydantic; assert openai.__version__ == "3.51.0" and anthropic.__version__ == "2.10.0"' \
    >/dev/null 2>&1
}
if ready; then
  echo "operator: the providers' SDKs are in $venv"
  exit 0
fi
if [ "${1:-}" = "--check" ]; then
  echo "operator: the providers' SDKs are missing (install with scripts/setup-operator.sh)"
  exit 1
fi
command -v python3 >/dev/null || { echo "operator: python3 is missing" >&2; exit 2; }
mkdir -p target/operator
log=target/operator/setup.log
echo "operator: installing ${packages[*]} into $venv"
rm -rf "$venv"
python3 -m venv "$venv" >"$log" 2>&1 \
  || { echo "operator: python3 -m venv failed (apt-get install python3-venv; log: $log)" >&2; exit 2; }
"$venv/bin/pip" install -q --disable-pip-version-check "${packages[@]}" >>"$log" 2>&1 \
  || { tail -20 "$log" >&2; echo "operator: pip install failed (log: $log)" >&2; exit 2; }
ready || { echo "operator: the SDKs still do not import (log: $log)" >&2; exit 2; }
echo "operator: installed the providers' SDKs into $venv"
