#!/usr/bin/env bash
# bench/malloc_heavy.sh: the whole-process cost of tracing the heap with
# stacks. Runs spoor_workload_malloc_heavy untraced, under `spoor record`
# with the fast unwinder, and under `spoor record` with SPOOR_UNWIND=libunwind,
# interleaved, several times each, and prints per configuration the median
# and minimum of the loop's wall time and of the process's CPU time, and
# each traced configuration's slowdown against the untraced one.
#
#   bench/malloc_heavy.sh [build dir (build/release)] [runs (7)] [workload flags...]
#
# Environment: SPOOR_BENCH_DIR: where the traces go (/tmp/spoor-bench);
# SPOOR_BENCH_BASELINE_PRELOAD: another libspoor-preload.so (say, one built
# from an earlier commit) to run as a fourth configuration, "baseline".
# A benchmark, not a test: it exits 0 whatever the numbers are.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build/release}
runs=${2:-7}
shift $(( $# > 2 ? 2 : $# ))
out=${SPOOR_BENCH_DIR:-/tmp/spoor-bench}
mkdir -p "$out"
workload="$build/bench/workloads/spoor_workload_malloc_heavy"
spoor="$build/symbolizer/spoor"
results="$out/malloc_heavy.txt"
: >"$results"

# One run: appends "config wall_ns_per_iteration cpu_seconds".
run() {
  local config=$1
  shift
  local line
  line=$("$@" 2>/dev/null | grep '^malloc_heavy:')
  local ns cpu
  ns=$(sed -E 's/.*ns_per_iteration=([0-9.]+).*/\1/' <<<"$line")
  cpu=$(sed -E 's/.*cpu_seconds=([0-9.]+).*/\1/' <<<"$line")
  echo "$config $ns $cpu" >>"$results"
}

echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for ((i = 0; i < runs; ++i)); do
  run untraced "$workload" "$@"
  run fast "$spoor" record -o "$out/malloc_heavy.spoor" -- "$workload" "$@"
  run libunwind env SPOOR_UNWIND=libunwind "$spoor" record -o "$out/malloc_heavy.spoor" -- "$workload" "$@"
  if [ -n "${SPOOR_BENCH_BASELINE_PRELOAD:-}" ]; then
    run baseline env SPOOR_PRELOAD_LIB="$SPOOR_BENCH_BASELINE_PRELOAD" "$spoor" record -o "$out/malloc_heavy.spoor" -- "$workload" "$@"
  fi
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"

awk '
  { wall[$1] = wall[$1] " " $2; cpu[$1] = cpu[$1] " " $3 }
  function sorted(list, a,   n, i, j, t) {
    n = split(list, a, " ")
    for (i = 2; i <= n; ++i) for (j = i; j > 1 && a[j - 1] + 0 > a[j] + 0; --j) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
    return n
  }
  function median(list,   a, n) { n = sorted(list, a); return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
  function minimum(list,   a) { sorted(list, a); return a[1] }
  END {
    printf "%-10s %14s %14s %14s %14s %10s %10s\n", "config", "wall ns/it med", "wall ns/it min", "cpu s med", "cpu s min", "x wall", "x cpu"
    n = split("untraced fast libunwind baseline", order, " ")
    for (k = 1; k <= n; ++k) {
      c = order[k]
      if (!(c in wall)) continue
      printf "%-10s %14.1f %14.1f %14.3f %14.3f %10.2f %10.2f\n", c, median(wall[c]), minimum(wall[c]),
             median(cpu[c]), minimum(cpu[c]), median(wall[c]) / median(wall["untraced"]),
             median(cpu[c]) / median(cpu["untraced"])
    }
  }' "$results"
