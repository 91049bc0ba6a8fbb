#!/usr/bin/env bash
# Installs what OSWorld's own, unmodified code needs to run here, on our per-task jailed desktops
# (Xvfb + dbus + AT-SPI + openbox, no VM): its in-VM HTTP server (desktop_env/server/main.py,
# started with `python -m flask --app main run`) and its evaluator (the `desktop-env` 1.0.2
# package: SetupController, getters, metrics, DesktopEnv.evaluate), driven by
# src/osworld/driver.py. Needs root (or sudo) for apt. About 430 MB (scipy,
# pandas, numpy) and ~60 s with a warm mirror.
#
#   - apt: the window manager and tools OSWorld's server calls (openbox, wmctrl, xdg-utils,
#     gnome-screenshot, python3-tk, python3-pyatspi), xdotool (the fixtures' keyboard solves),
#     python3-venv. The desktop stack itself (Xvfb, dbus, AT-SPI, LibreOffice) is
#     scripts/setup-desktop.sh's.
#   - one venv, target/osworld/venv, from /usr/bin/python3 with --system-site-packages (pyatspi,
#     gi and tkinter come from apt), with the server's packages and desktop-env --no-deps plus
#     exactly what its LibreOffice/OS getters and metrics import; every version pinned. The
#     heavy rest (playwright, torch, easyocr, opencv, ...) is left out: the driver stubs it and
#     its probe says which tasks need it.
#   - OSWorld's files (desktop_env/server and evaluation_examples) copied into
#     target/osworld/OSWorld from $UFO_BATCH_OSWORLD, else ../shared/osworld, else a git clone.
#
#   scripts/setup-osworld.sh          install (idempotent)
#   scripts/setup-osworld.sh --check  only say whether it is ready (exit 1 if not)
#
# Exit 3: OSWorld's files could not be had (no local copy, and no network to GitHub);
# scripts/test.sh then skips the tests that need them, and says so.
set -euo pipefail
cd "$(dirname "$0")/.."

python=/usr/bin/python3
venv=target/osworld/venv
dest=target/osworld/OSWorld
log=target/osworld/setup.log
source_dir=${UFO_BATCH_OSWORLD:-$(cd .. && pwd)/shared/osworld}
osworld_repo=https://github.com/xlang-ai/OSWorld
# The commit to clone when no local copy exists. Empty: the default branch, and the commit it
# got is written to $dest/SOURCE.md. Set it to the commit whose desktop_env/ matches the
# desktop-env 1.0.2 package (../shared/osworld/SOURCE.md: a mirror taken 2026-04-29).
OSWORLD_COMMIT=${UFO_BATCH_OSWORLD_COMMIT:-}

apt_packages=(openbox wmctrl xdg-utils gnome-screenshot python3-tk python3-pyatspi xdotool python3-venv)
# What the server imports (flask, pyautogui + its X11 backend, lxml, Pillow, requests, numpy)
# and what desktop-env's controllers, getters and metrics import for LibreOffice and OS tasks,
# with every dependency they pull in, pinned.
pip_packages=(
  flask==3.0.3 Werkzeug==3.1.9 Jinja2==3.1.6 MarkupSafe==3.0.4 itsdangerous==2.2.0 click==8.5.1
  blinker==1.9.0
  PyAutoGUI==0.9.54 python3-xlib==0.15 PyScreeze==1.0.1 MouseInfo==0.1.3 PyMsgBox==2.0.1
  pytweening==1.2.0 PyGetWindow==0.0.9 PyRect==0.2.0 pyperclip==1.11.0
  lxml==6.1.3 pillow==11.0.0 numpy==1.26.4
  requests==2.34.2 urllib3==2.8.0 idna==3.20 charset-normalizer==3.5.3 certifi==2026.10.19.post1
  requests-toolbelt==1.0.0 python-dotenv==1.2.4
  openpyxl==3.1.5 et_xmlfile==2.0.0 pandas==2.2.3 python-dateutil==4.0.0 pytz==2024.2 tzdata==2026.6
  rapidfuzz==3.14.6 formulas==1.3.4 schedula==1.6.15 regex==2026.11.19 numpy-financial==1.0.0
  scipy==1.17.1 tqdm==4.70.1
  xmltodict==0.14.2 tldextract==5.4.0 requests-file==3.0.1 filelock==4.3.1 cssselect==1.6.0
  PyYAML==6.0.2 python-docx==1.2.0 typing_extensions==4.16.0 python-pptx==1.0.2 XlsxWriter==3.3.1
  odfpy==1.4.1 defusedxml==0.7.1
)
desktop_env=desktop-env==1.0.2

say() { echo "osworld: $*"; }
fail() { echo "osworld: $*" >&2; exit 2; }

files_ready() { [ -f "$dest/desktop_env/server/main.py" ] && [ -d "$dest/evaluation_examples/examples" ]; }
tools_ready() {
  for exe in openbox wmctrl xdg-open gnome-screenshot xdotool; do
    command -v "$exe" >/dev/null 2>&1 || return 1
  done
}
# Ready: the server's imports resolve, and the driver's probe imports OSWorld's evaluator and
# finds the LibreOffice/OS getters and metrics usable.
ready() {
  files_ready && tools_ready || return 1
  "$venv/bin/python" -c 'import flask, lxml.etree, PIL, Xlib, tkinter, pyatspi, importlib.util as u; assert u.find_spec("pyautogui")' \
    >/dev/null 2>&1 || return 1
  local out
  out=$(echo '{"setup": ["download", "open", "execute"], "getters": ["vm_file", "cloud_file", "vm_command_line", "rule"], "metrics": ["compare_table", "compare_docx_files", "compare_pptx_files", "check_include_exclude", "exact_match", "infeasible"]}' \
    | "$venv/bin/python" src/osworld/driver.py probe 2>/dev/null) || return 1
  [[ "$out" == *'"desktop_env": "1.0.2"'* && "$out" != *'"needs"'* && "$out" != *'"unknown"'* ]]
}

if ready; then
  say "ready: OSWorld's server and evaluator run from $dest with $venv"
  exit 0
fi
if [ "${1:-}" = "--check" ]; then
  files_ready || say "OSWorld's files are not in $dest"
  tools_ready || say "some of openbox, wmctrl, xdg-open, gnome-screenshot, xdotool are missing"
  [ -x "$venv/bin/python" ] || say "the venv $venv is missing"
  say "not ready (install with scripts/setup-osworld.sh)"
  exit 1
fi

mkdir -p target/osworld
: >"$log"
started=$SECONDS

# 1. apt
missing=()
for p in "${apt_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || fail "run as root (or install sudo) to apt-get install ${missing[*]}"
    sudo=(sudo)
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt_install() {
    "${sudo[@]}" apt-get install -y -q --no-install-recommends -o DPkg::Lock::Timeout=120 "$@" >>"$log" 2>&1 \
      || { "${sudo[@]}" apt-get update -q -o DPkg::Lock::Timeout=120 >>"$log" 2>&1 \
           && "${sudo[@]}" apt-get install -y -q --no-install-recommends -o DPkg::Lock::Timeout=120 "$@" >>"$log" 2>&1; }
  }
  say "apt-get install ${missing[*]}"
  apt_install "${missing[@]}" || { tail -20 "$log" >&2; fail "apt-get install ${missing[*]} failed (log: $log)"; }
fi
tools_ready || fail "openbox, wmctrl, xdg-open, gnome-screenshot or xdotool is still missing (log: $log)"
for exe in Xvfb dbus-daemon soffice; do
  command -v "$exe" >/dev/null || say "note: $exe is missing (the desktop stack: scripts/setup-desktop.sh)"
done

# 2. OSWorld's files, copied (never linked: each desktop gets its own copy of the server folder
# from here, and the task files must not change under a run).
if [ -f "$source_dir/desktop_env/server/main.py" ] && [ -d "$source_dir/evaluation_examples/examples" ]; then
  say "copying OSWorld's server and task files from $source_dir"
  rm -rf "$dest.new"
  mkdir -p "$dest.new/desktop_env"
  cp -R "$source_dir/desktop_env/server" "$dest.new/desktop_env/server"
  cp -R "$source_dir/evaluation_examples" "$dest.new/evaluation_examples"
  for f in LICENSE SOURCE.md; do [ -f "$source_dir/$f" ] && cp "$source_dir/$f" "$dest.new/"; done
  rm -rf "$dest.new/desktop_env/server/screenshots" "$dest.new/desktop_env/server/__pycache__"
  rm -rf "$dest" && mv "$dest.new" "$dest"
elif ! files_ready; then
  command -v git >/dev/null || fail "OSWorld's files are not at $source_dir and git is missing: set UFO_BATCH_OSWORLD to an OSWorld checkout (with desktop_env/server and evaluation_examples), or skip its tests with UFO_BATCH_SKIP_TESTS=osworld"
  say "OSWorld's files are not at $source_dir: cloning $osworld_repo${OSWORLD_COMMIT:+ at $OSWORLD_COMMIT}"
  clone=target/osworld/clone
  rm -rf "$clone"
  if ! { timeout "${UFO_BATCH_FETCH_TIMEOUT:-600}" git clone -q --filter=blob:none --no-checkout "$osworld_repo" "$clone" >>"$log" 2>&1 \
         && timeout "${UFO_BATCH_FETCH_TIMEOUT:-600}" git -C "$clone" checkout -q "${OSWORLD_COMMIT:-HEAD}" -- desktop_env/server evaluation_examples LICENSE >>"$log" 2>&1; }; then
    rm -rf "$clone"
    echo "osworld: cannot get OSWorld's files: $source_dir has none and cloning $osworld_repo failed (no network to GitHub? log: $log): set UFO_BATCH_OSWORLD to a copy of OSWorld (a checkout with desktop_env/server and evaluation_examples), or skip its tests with UFO_BATCH_SKIP_TESTS=osworld" >&2
    exit 3
  fi
  commit=$(git -C "$clone" rev-parse "${OSWORLD_COMMIT:-HEAD}")
  rm -rf "$dest" && mkdir -p "$dest/desktop_env"
  mv "$clone/desktop_env/server" "$dest/desktop_env/server"
  mv "$clone/evaluation_examples" "$dest/evaluation_examples"
  mv "$clone/LICENSE" "$dest/LICENSE" 2>/dev/null || true
  printf 'OSWorld files from %s at commit %s (cloned by scripts/setup-osworld.sh)\n' "$osworld_repo" "$commit" >"$dest/SOURCE.md"
  rm -rf "$clone"
  [ -n "$OSWORLD_COMMIT" ] || say "note: cloned the default branch (commit $commit); set UFO_BATCH_OSWORLD_COMMIT to pin it"
fi
files_ready || fail "OSWorld's files are still not in $dest"

# 3. the venv
[ -x "$python" ] || fail "$python is missing"
if ! [ -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import sys; assert sys.version_info[:2] == (3, 11)' 2>/dev/null; then
  rm -rf "$venv"
  "$python" -m venv --system-site-packages "$venv" >>"$log" 2>&1 \
    || fail "$python -m venv failed (apt-get install python3-venv; log: $log)"
fi
say "installing ${#pip_packages[@]} pinned packages and $desktop_env (--no-deps) into $venv"
"$venv/bin/pip" install -q --disable-pip-version-check "${pip_packages[@]}" >>"$log" 2>&1 \
  || { tail -20 "$log" >&2; fail "pip install failed (log: $log)"; }
"$venv/bin/pip" install -q --disable-pip-version-check --no-deps "$desktop_env" >>"$log" 2>&1 \
  || { tail -20 "$log" >&2; fail "pip install --no-deps $desktop_env failed (log: $log)"; }

ready || {
  echo '{"metrics": ["compare_table"]}' | "$venv/bin/python" src/osworld/driver.py probe >>"$log" 2>&1 || true
  tail -20 "$log" >&2
  fail "installed, but the driver's probe still fails (log: $log)"
}
say "installed in $((SECONDS - started)) s; OSWorld's server and evaluator run from $dest with $venv"
