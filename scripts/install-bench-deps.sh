#!/usr/bin/env bash
# Installs what bench/run.sh needs on Debian/Ubuntu, only the packages that
# are missing: Google Benchmark, LTTng-UST (headers and library), the LTTng
# control tools and babeltrace2 (to count the events of an LTTng trace); and
# heaptrack and zstd, which bench/heaptrack_compare.sh (and
# bench/process_start.sh) run beside spoor
# record (heaptrack compresses its output with zstd when it finds it, with
# gzip otherwise); perf (linux-perf), which bench/record_ab.sh uses to
# count the CPU time of a whole recording and the profiles in
# bench/RESULTS.md were taken with; and the symbolizers
# bench/symbolize_compare.sh runs beside spoor symbolize: eu-addr2line
# (elfutils), GNU addr2line (binutils) and llvm-symbolizer (llvm), with GNU
# time for their peak memory; fio and strace, which bench/aio_compare.sh
# runs (fio's libaio engine, under spoor record and under strace).
#
#   scripts/install-bench-deps.sh
#
# Exits 0 when everything is installed, 1 when something is missing and
# cannot be installed here (not Debian, or not root and no sudo).
set -euo pipefail

packages=(libbenchmark-dev liblttng-ust-dev lttng-tools babeltrace2 heaptrack zstd linux-perf elfutils binutils llvm time fio strace)

installed() {
  dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'
}

if ! command -v dpkg-query >/dev/null 2>&1; then
  echo "install-bench-deps: not a Debian-based system; install by hand: ${packages[*]}" >&2
  exit 1
fi

missing=()
for p in "${packages[@]}"; do
  installed "$p" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-bench-deps: all present (${packages[*]})"
  exit 0
fi

as_root=()
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then
    as_root=(sudo)
  else
    echo "install-bench-deps: missing ${missing[*]}; run as root or install sudo" >&2
    exit 1
  fi
fi

echo "install-bench-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# A stale package index is the usual reason an install fails; refresh once.
"${as_root[@]}" apt-get install -y --no-install-recommends "${missing[@]}" ||
  { "${as_root[@]}" apt-get update && "${as_root[@]}" apt-get install -y --no-install-recommends "${missing[@]}"; }
