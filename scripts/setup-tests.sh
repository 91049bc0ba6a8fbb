#!/usr/bin/env bash
# Installs every stack the tests use (as root, or with sudo for the apt parts), each with
# its own script: bubblewrap and util-linux's `script`, the desktop stack, a headless
# browser, the MCP test servers and AIP test client, UFO's own code's venv. A stack named
# in UFO_BATCH_SKIP_TESTS (a comma list: desktop, osworld, browser, mcp, ufo, stats, harbor,
# operator, bwrap, script, shm; or `all`) is
# not installed: its tests are skipped on request (tests/integration/helpers.rs).
#
# UFO's and OSWorld's code come from a local copy or their upstream repositories; a stack
# whose code cannot be had (setup-*.sh exit 3: no copy and no network to GitHub) is not
# an error here: it is named in target/tmp/unobtainable-stacks.txt, and scripts/test.sh
# skips its tests and says so. UFO_BATCH_REQUIRE_STACKS=1 (as .ci/run sets) makes it one.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p target/tmp
unobtainable=target/tmp/unobtainable-stacks.txt
rm -f "$unobtainable"

skip=",${UFO_BATCH_SKIP_TESTS:-},"
skip=${skip// /}
wanted() { [[ "$skip" != *",$1,"* && "$skip" != *",all,"* ]]; }

sudo=()
if [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null; then sudo=(sudo); fi
apt_install() {
  "${sudo[@]}" apt-get install -y -q --no-install-recommends -o DPkg::Lock::Timeout=120 "$@" >/dev/null 2>&1 \
    || { "${sudo[@]}" apt-get update -q -o DPkg::Lock::Timeout=120 >/dev/null 2>&1 \
         && "${sudo[@]}" apt-get install -y -q --no-install-recommends -o DPkg::Lock::Timeout=120 "$@" >/dev/null 2>&1; }
}

if wanted bwrap && ! command -v bwrap >/dev/null 2>&1; then
  echo "== bubblewrap (the bwrap sandbox's tests)"
  apt_install bubblewrap || { echo "bubblewrap could not be installed (apt-get install bubblewrap)" >&2; exit 2; }
fi
if wanted script && ! command -v script >/dev/null 2>&1; then
  echo "== util-linux's script (a test gives the runner a terminal)"
  apt_install bsdutils || { echo "script could not be installed (apt-get install bsdutils)" >&2; exit 2; }
fi
# Each stack with its own script, unless its tests are to be skipped.
for stack in "desktop:the desktop stack" "osworld:OSWorld's server and evaluator venv" \
             "browser:a headless browser" \
             "mcp:the MCP test servers and the AIP test client" "ufo:UFO's own code's venv" \
             "stats:SciPy and statsmodels" "harbor:Harbor (ATIF and its viewer)" \
             "operator:the computer-use providers' SDKs"; do
  name=${stack%%:*}
  if wanted "$name"; then
    echo "== ${stack#*:} (scripts/setup-$name.sh)"
    code=0
    bash "scripts/setup-$name.sh" || code=$?
    if [ "$code" -eq 3 ] && [ "${UFO_BATCH_REQUIRE_STACKS:-}" != 1 ]; then
      echo "$name" >>"$unobtainable"
    elif [ "$code" -ne 0 ]; then
      exit "$code"
    fi
  fi
done
