#!/usr/bin/env bash
# Installs Harbor (the harness behind Terminal-Bench 2), pinned, for the tests that check
# ufo-batch's ATIF trajectories and Harbor job export against Harbor's own code
# (tests/integration/harbor.rs: its trajectory validator, its pydantic models, and
# `harbor view` serving an exported run). A venv under target/harbor; Harbor needs
# Python >= 3.12. About 430 MB. Not needed to run ufo-batch; to look at a run in Harbor's
# viewer: `ufo-batch export --harbor OUT RUN_DIR` then `target/harbor/venv/bin/harbor view
# OUT --jobs`.
#
#   scripts/setup-harbor.sh          install (idempotent)
#   scripts/setup-harbor.sh --check  only say whether it is there (exit 1 if not)
set -euo pipefail
cd "$(dirname "$0")/.."
venv=target/harbor/venv
packages=(harbor==0.25.0)
ready() { "$venv/bin/python" -c 'import harbor.models.trajectories, harbor.viewer' >/dev/null 2>&1; }
if ready; then
  echo "harbor: Harbor 0.25.0 is in $venv"
  exit 0
fi
if [ "${1:-}" = "--check" ]; then
  echo "harbor: the venv with Harbor is missing (install with scripts/setup-harbor.sh)"
  exit 1
fi
python=""
for p in python3.13 python3.12 "$HOME/.pyenv/versions/3.12.1/bin/python3" python3; do
  if command -v "$p" >/dev/null 2>&1 && "$p" 2>/dev/null -c 'import sys; sys.exit(not sys.version_info[:2] >= (3, 12))'; then
    python=$p
    break
  fi
done
[ -n "$python" ] || { echo "harbor: Harbor needs Python 3.12 or newer; none found" >&2; exit 2; }
mkdir -p target/harbor
log=target/harbor/setup.log
echo "harbor: installing ${packages[*]} into $venv"
rm -rf "$venv"
"$python" -m venv "$venv" >"$log" 2>&1 \
  || { echo "harbor: $python -m venv failed (log: $log)" >&2; exit 2; }
"$venv/bin/pip" install -q --disable-pip-version-check "${packages[@]}" >>"$log" 2>&1 \
  || { tail -20 "$log" >&2; echo "harbor: pip install failed (log: $log)" >&2; exit 2; }
ready || { echo "harbor: Harbor still does not import (log: $log)" >&2; exit 2; }
echo "harbor: installed in $venv"
