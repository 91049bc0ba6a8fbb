#!/usr/bin/env bash
# Installs the statistics libraries the tests check ufo-batch's statistics against
# (tests/integration/stats_reference.rs runs scripts/stats-reference.py with them): a venv
# under target/stats with SciPy and statsmodels, pinned. About 150 MB. Not needed to run
# ufo-batch.
#
#   scripts/setup-stats.sh          install (idempotent)
#   scripts/setup-stats.sh --check  only say whether it is there (exit 1 if not)
set -euo pipefail
cd "$(dirname "$0")/.."
venv=target/stats/venv
packages=(scipy==1.14.1 statsmodels==0.14.4)
ready() { "$venv/bin/python" -c 'import scipy, statsmodels' >/dev/null 2>&1; }
if ready; then
  echo "stats: SciPy and statsmodels are in $venv"
  exit 0
fi
if [ "${1:-}" = "--check" ]; then
  echo "stats: the venv with SciPy and statsmodels is missing (install with scripts/setup-stats.sh)"
  exit 1
fi
# SciPy 1.14 has wheels for Python 3.10 to 3.13: the newest python3 found.
python=""
for p in python3.13 python3.12 python3.11 python3.10 "$HOME/.pyenv/versions/3.12.1/bin/python3" python3; do
  if command -v "$p" >/dev/null 2>&1 && "$p" 2>/dev/null -c 'import sys; sys.exit(not (3, 10) <= sys.version_info[:2] <= (3, 13))'; then
    python=$p
    break
  fi
done
[ -n "$python" ] || { echo "stats: no python3 from 3.10 to 3.13 found" >&2; exit 2; }
mkdir -p target/stats
log=target/stats/setup.log
echo "stats: installing ${packages[*]} into $venv"
rm -rf "$venv"
"$python" -m venv "$venv" >"$log" 2>&1 \
  || { echo "stats: $python -m venv failed (apt-get install python3-venv; log: $log)" >&2; exit 2; }
"$venv/bin/pip" install -q --disable-pip-version-check "${packages[@]}" >>"$log" 2>&1 \
  || { tail -20 "$log" >&2; echo "stats: pip install failed (log: $log)" >&2; exit 2; }
ready || { echo "stats: SciPy or statsmodels still does not import (log: $log)" >&2; exit 2; }
echo "stats: installed in $venv"
