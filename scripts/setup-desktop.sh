#!/usr/bin/env bash
# Installs what desktop sessions need on Debian/Ubuntu (as root, or with sudo): a virtual
# X server, D-Bus, the accessibility stack, a text editor (mousepad), LibreOffice Writer,
# Calc and Impress with their GTK3 bridge (without libreoffice-gtk3 LibreOffice never
# appears in the accessibility tree), LibreOffice's UNO bridge for Python (python3-uno:
# the Office API tools, UFO's COM tools, drive the live document through it), and fonts.
# About 400 MB of disk; ~40 s with a warm mirror.
#
#   scripts/setup-desktop.sh          install (idempotent: prints what is already there)
#   scripts/setup-desktop.sh --check  only say what is missing (exit 1 if anything is)
set -euo pipefail

packages=(xvfb dbus dbus-daemon at-spi2-core fonts-dejavu-core fonts-liberation2 mousepad
          libreoffice-writer libreoffice-calc libreoffice-impress libreoffice-gtk3 python3-uno)
missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ "${1:-}" = "--check" ]; then
  if [ ${#missing[@]} -eq 0 ]; then
    echo "desktop stack: everything is installed"
    exit 0
  fi
  echo "desktop stack: missing ${missing[*]} (install with scripts/setup-desktop.sh)"
  exit 1
fi

if [ ${#missing[@]} -eq 0 ]; then
  echo "desktop stack: everything is installed (${packages[*]})"
  exit 0
fi

sudo=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "run as root (or install sudo)" >&2; exit 2; }
  sudo=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
echo "desktop stack: installing ${missing[*]}"
apt_install() {
  "${sudo[@]}" apt-get install -y -q --no-install-recommends -o DPkg::Lock::Timeout=120 "${missing[@]}"
}
if ! apt_install >/tmp/setup-desktop.log 2>&1; then
  "${sudo[@]}" apt-get update -q -o DPkg::Lock::Timeout=120 >>/tmp/setup-desktop.log 2>&1
  apt_install >>/tmp/setup-desktop.log 2>&1 || {
    tail -20 /tmp/setup-desktop.log >&2
    echo "desktop stack: apt-get failed (log: /tmp/setup-desktop.log)" >&2
    exit 2
  }
fi
for exe in Xvfb dbus-daemon mousepad soffice; do
  command -v "$exe" >/dev/null || { echo "desktop stack: $exe is still missing" >&2; exit 2; }
done
test -x /usr/libexec/at-spi-bus-launcher || { echo "desktop stack: at-spi-bus-launcher is missing" >&2; exit 2; }
/usr/bin/python3 -c 'import uno' 2>/dev/null || { echo "desktop stack: /usr/bin/python3 cannot import uno (python3-uno)" >&2; exit 2; }
echo "desktop stack: installed (${packages[*]})"
