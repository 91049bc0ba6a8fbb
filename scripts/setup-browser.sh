#!/usr/bin/env bash
# Installs a headless browser on Debian/Ubuntu (as root, or with sudo): Debian's
# chromium, which the report page's browser test drives through the DevTools protocol.
# About 250 MB of disk. Not needed to run ufo-batch: report.html opens in any browser.
#
#   scripts/setup-browser.sh          install (idempotent)
#   scripts/setup-browser.sh --check  only say whether it is there (exit 1 if not)
set -euo pipefail

if command -v chromium >/dev/null; then
  echo "browser: $(chromium --version 2>/dev/null | head -1)"
  exit 0
fi
if [ "${1:-}" = "--check" ]; then
  echo "browser: chromium is missing (install with scripts/setup-browser.sh)"
  exit 1
fi
sudo=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "run as root (or install sudo)" >&2; exit 2; }
  sudo=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
echo "browser: installing chromium"
apt_install() {
  "${sudo[@]}" apt-get install -y -q --no-install-recommends -o DPkg::Lock::Timeout=120 chromium fonts-dejavu-core
}
if ! apt_install >/tmp/setup-browser.log 2>&1; then
  "${sudo[@]}" apt-get update -q -o DPkg::Lock::Timeout=120 >>/tmp/setup-browser.log 2>&1
  apt_install >>/tmp/setup-browser.log 2>&1 || {
    tail -20 /tmp/setup-browser.log >&2
    echo "browser: apt-get failed (log: /tmp/setup-browser.log)" >&2
    exit 2
  }
fi
command -v chromium >/dev/null || { echo "browser: chromium is still missing" >&2; exit 2; }
echo "browser: installed $(chromium --version 2>/dev/null | head -1)"
