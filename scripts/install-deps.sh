#!/usr/bin/env bash
# Installs the Debian packages Spoor needs to build and test, only those
# that are missing. Usage: scripts/install-deps.sh [extra-package...]
set -euo pipefail
packages=(cmake ninja-build g++ gcc pkg-config libgtest-dev libbenchmark-dev nlohmann-json3-dev libunwind-dev libzstd-dev libdw-dev libelf-dev libdebuginfod-dev zlib1g-dev libiberty-dev liburing-dev libaio-dev "$@")
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "spoor: installing missing packages: ${missing[*]}" >&2
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
