#!/usr/bin/env bash
# bench/kernel_unwind.sh: time to unwind (DWARF, offline) and symbolize
# about 100,000 CPU samples, spoor beside perf, on the same workload
# (bench/workloads/deep_chain.c: call chains 6-21 frames deep, built
# -O2 -fomit-frame-pointer) recorded at the same requested rate:
#
#   spoor record --no-preload --kernel=samples --sample-hz 10000 -- deep_chain S
#   perf record --call-graph dwarf -F 10000 -e cpu-clock -- deep_chain S
#
# then times `spoor report --kernel` (reads the trace, unwinds every sample
# with libdw, symbolizes, prints the profile) and `perf report --stdio
# --children` (the same for perf.data) with /usr/bin/time: CPU time
# (user + sys) is the figure, wall clock is shown too (a shared machine's
# wall clock says more about its load than about the tools).
#
#   bench/kernel_unwind.sh [SECONDS]   (default 24: ~100k samples at the
#                                       ~4.4 kHz cpu-clock delivers here)
# Environment: SPOOR_BENCH_DIR (/tmp/spoor-kernel-unwind), SPOOR_TOOL,
# SPOOR_WORKLOAD (default: the release preset's builds).
# A benchmark, not a test: it exits 0 whatever the numbers are.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-24}
dir=${SPOOR_BENCH_DIR:-/tmp/spoor-kernel-unwind}
spoor=${SPOOR_TOOL:-build/release/symbolizer/spoor}
workload=${SPOOR_WORKLOAD:-build/release/bench/workloads/spoor_workload_deep_chain}
if [[ ! -x $spoor || ! -x $workload ]]; then
  cmake --preset release -B build/release >/dev/null
  cmake --build build/release -j2 --target spoor spoor_workload_deep_chain
fi
mkdir -p "$dir"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
"$spoor" record --no-preload --kernel=samples --sample-hz 10000 -o "$dir/deep.spoor" -- "$workload" "$seconds" 2>&1 | grep -E "kernel:|events"
perf record -q --call-graph dwarf -F 10000 -e cpu-clock -o "$dir/perf.data" -- "$workload" "$seconds" 2>&1 | tail -2 || true
echo "samples: spoor $("$spoor" report --kernel --format json "$dir/deep.spoor" | grep -m1 -o '"samples": [0-9]*'), perf $(perf report -i "$dir/perf.data" --stdio 2>/dev/null | grep -m1 '^# Samples')"
for run in 1 2 3; do
  /usr/bin/time -f "spoor report --kernel: %e s wall, %U s user, %S s sys, %M KiB peak RSS" \
    "$spoor" report --kernel "$dir/deep.spoor" >/dev/null
  /usr/bin/time -f "perf report --children: %e s wall, %U s user, %S s sys, %M KiB peak RSS" \
    perf report -i "$dir/perf.data" --stdio --children --percent-limit 1 >/dev/null 2>"$dir/perf.err" || true
  tail -1 "$dir/perf.err"
done
/usr/bin/time -f "spoor info (reading the trace only): %e s wall, %U s user, %S s sys" "$spoor" info "$dir/deep.spoor" >/dev/null
ls -l "$dir/deep.spoor" "$dir/perf.data" | awk '{print $5, $9}'
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
