#!/usr/bin/env bash
# io_uring requests followed by `spoor record` beside `perf record` of the
# kernel's io_uring tracepoints (submit_req and complete: the peer that
# sees the same requests), in one run: spoor_bench_uring (1-byte reads of
# /dev/zero, 8 to a submit) untraced, under each, interleaved, RUNS times.
# Prints the medians: the whole process's wall time, the program's wall and
# thread CPU time per request, each tool's file size, and the ratio to the
# untraced run.
#
#   bench/uring_compare.sh [RUNS] [REQUESTS]      (defaults: 7, 1000000)
#
# perf needs the tracepoints (root, or perf_event_paranoid -1, and tracefs
# mounted); without them its row says so. Builds the release preset's
# spoor and spoor_bench_uring if missing.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-7}
requests=${2:-1000000}
B=build/release/bench/spoor_bench_uring
S=build/release/symbolizer/spoor
if [ ! -x "$B" ] || [ ! -x "$S" ]; then
  cmake --preset release >/dev/null && cmake --build --preset release --target spoor spoor_bench_uring >/dev/null
fi
[ -d /sys/kernel/tracing/events ] || mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null || true
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
perf_ok=0
if command -v perf >/dev/null &&
   perf record -q -e io_uring:io_uring_submit_req -o "$work/probe.data" -- "$B" 8 >/dev/null 2>&1; then
  perf_ok=1
fi

# One run: "<whole wall s> <ns/request> <cpu ns/request> <file bytes>".
one() {
  local tool=$1 out=$work/out file=""
  local t0 t1
  t0=$(date +%s.%N)
  case $tool in
    untraced) "$B" "$requests" >"$out" ;;
    spoor) file=$work/t.spoor; "$S" record -o "$file" -- "$B" "$requests" >"$out" 2>"$work/err" ;;
    perf) file=$work/perf.data
          perf record -q -e io_uring:io_uring_submit_req -e io_uring:io_uring_complete -o "$file" -- "$B" "$requests" \
            >"$out" 2>"$work/err" ;;
  esac
  t1=$(date +%s.%N)
  local size=0
  [ -n "$file" ] && size=$(stat -c %s "$file")
  awk -v t0="$t0" -v t1="$t1" -v size="$size" '{
      for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
      printf "%.4f %s %s %s\n", t1 - t0, v["ns_per_request"], v["cpu_ns_per_request"], size }' "$out"
}

tools="untraced spoor"
[ "$perf_ok" = 1 ] && tools="$tools perf"
for ((r = 0; r < runs; r++)); do
  for tool in $tools; do echo "$tool $(one "$tool")" >>"$work/all"; done
done

echo "spoor_bench_uring, $requests requests, median of $runs interleaved runs ($(nproc) CPUs, $(uname -r))"
printf '%-9s %10s %8s %14s %14s %12s\n' tool wall_s x ns/request cpu_ns/request file_MiB
base=$(awk '$1 == "untraced" { print $2 }' "$work/all" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
for tool in $tools; do
  awk -v t="$tool" -v base="$base" '
    $1 == t { w[++n] = $2; ns[n] = $3; cpu[n] = $4; size[n] = $5 }
    function median(a, n,   i, j, x) {
      for (i = 2; i <= n; i++) { x = a[i]; for (j = i - 1; j >= 1 && a[j] > x; j--) a[j + 1] = a[j]; a[j + 1] = x }
      return a[int((n + 1) / 2)] }
    END { printf "%-9s %10.3f %8.2f %14.1f %14.1f %12.2f\n", t, median(w, n), median(w, n) / base,
                 median(ns, n), median(cpu, n), median(size, n) / 1048576 }' "$work/all"
done
[ "$perf_ok" = 1 ] || echo "perf: the io_uring tracepoints are not open to this user here; its row is left out"
