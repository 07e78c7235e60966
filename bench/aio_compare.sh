#!/usr/bin/env bash
# Linux AIO requests followed by `spoor record` beside `strace` (the peer
# that sees the same io_submit and io_getevents calls), in one run: fio's
# libaio engine reading 4 KiB blocks of a cached file at random, 8 in
# flight, untraced and under each, interleaved, RUNS times. Prints the
# medians of the whole process's wall time, the ratio to the untraced run,
# and each tool's output size.
#
#   bench/aio_compare.sh [RUNS] [MIB]      (defaults: 5, 256: 65,536 reads)
#
# Needs fio and strace (scripts/install-bench-deps.sh); builds the release
# preset's spoor if missing.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
mib=${2:-256}
S=build/release/symbolizer/spoor
[ -x "$S" ] || { cmake --preset release >/dev/null && cmake --build --preset release --target spoor >/dev/null; }
for tool in fio strace; do
  command -v "$tool" >/dev/null || { echo "aio_compare: $tool is not installed (scripts/install-bench-deps.sh)" >&2; exit 1; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
job=(fio --name=aio --filename="$work/data" --size="${mib}M" --rw=randread --bs=4k --ioengine=libaio
     --iodepth=8 --randrepeat=1 --output-format=terse)
"${job[@]}" >/dev/null  # lays the file out and reads it once, so every run reads from the page cache

# One run: "<wall s> <output bytes>".
one() {
  local t0 t1 size=0
  t0=$(date +%s.%N)
  case $1 in
    untraced) "${job[@]}" >/dev/null ;;
    spoor) "$S" record -o "$work/t.spoor" -- "${job[@]}" >/dev/null 2>"$work/err"; size=$(stat -c %s "$work/t.spoor") ;;
    strace) strace -f -qq -e trace=io_submit,io_getevents -o "$work/strace.txt" -- "${job[@]}" >/dev/null
            size=$(stat -c %s "$work/strace.txt") ;;
  esac
  t1=$(date +%s.%N)
  echo "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f", b - a }') $size"
}

for ((r = 0; r < runs; r++)); do
  for tool in untraced spoor strace; do echo "$tool $(one "$tool")" >>"$work/all"; done
done
echo "fio libaio randread, $((mib * 256)) requests of 4 KiB, median of $runs interleaved runs ($(nproc) CPUs, $(uname -r))"
printf '%-9s %10s %8s %12s\n' tool wall_s x output_MiB
base=$(awk '$1 == "untraced" { print $2 }' "$work/all" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
for tool in untraced spoor strace; do
  awk -v t="$tool" '$1 == t { print $2, $3 }' "$work/all" | sort -n |
    awk -v t="$tool" -v base="$base" '{ w[NR] = $1; s[NR] = $2 }
      END { m = int((NR + 1) / 2); printf "%-9s %10.3f %8.2f %12.2f\n", t, w[m], w[m] / base, s[m] / 1048576 }'
done
"$S" report --io "$work/t.spoor" | grep -E "asynchronous|requests have" || true
