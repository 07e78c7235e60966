#!/usr/bin/env bash
# bench/stack_depth.sh: spoor record -p heap of spoor_workload_malloc_heavy
# (1 thread) at several --stack-depth values, each beside a baseline shim
# (SPOOR_BENCH_BASELINE_SHIM, optional) and heaptrack (its stacks are
# always whole), interleaved, with the medians of the whole run's wall time
# and of the workload's own loop. A shorter stack should never cost more
# than a longer one.
#
#   bench/stack_depth.sh [runs (7)] [depths (1 4 64)...]
#
# Uses build/release (cmake --build --preset release). A benchmark, not a
# test: it exits 0 whatever the numbers are.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
runs=${1:-7}
shift $(( $# > 0 ? 1 : 0 ))
depths=("$@")
[ ${#depths[@]} -gt 0 ] || depths=(1 4 64)
spoor="$root/build/release/symbolizer/spoor"
shim="$root/build/release/preload/libspoor-preload.so"
workload="$root/build/release/bench/workloads/spoor_workload_malloc_heavy"
baseline=${SPOOR_BENCH_BASELINE_SHIM:-}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# One timed run: label, then the command. Appends "label wall_ms loop_s".
timed() {
  local label=$1 start end o loop
  shift
  start=$(date +%s%N)
  o=$("$@" 2>&1)
  end=$(date +%s%N)
  loop=$(sed -nE 's/.* seconds=([0-9.]+) .*/\1/p' <<<"$o" | head -1)
  echo "$label $(( (end - start) / 1000000 )) ${loop:-0}" >>"$out/runs"
}

labels=(untraced)
for depth in "${depths[@]}"; do
  labels+=("spoor-$depth")
  [ -z "$baseline" ] || labels+=("baseline-$depth")
done
command -v heaptrack >/dev/null && labels+=(heaptrack)

echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for ((r = 0; r < runs; r++)); do
  timed untraced "$workload" --threads=1
  for depth in "${depths[@]}"; do
    timed "spoor-$depth" env SPOOR_PRELOAD_LIB="$shim" \
      "$spoor" record -p heap --stack-depth "$depth" -o "$out/d.spoor" -- "$workload" --threads=1
    [ -z "$baseline" ] || timed "baseline-$depth" env SPOOR_PRELOAD_LIB="$baseline" \
      "$spoor" record -p heap --stack-depth "$depth" -o "$out/d.spoor" -- "$workload" --threads=1
  done
  if command -v heaptrack >/dev/null; then
    timed heaptrack heaptrack -o "$out/ht" "$workload" --threads=1
    rm -f "$out"/ht*
  fi
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-14s %8s %8s\n' run wall_ms loop_s
for label in "${labels[@]}"; do
  awk -v l="$label" '$1 == l' "$out/runs" | awk -v l="$label" '
    { wall[NR] = $2; loop[NR] = $3 }
    function median(a,   i, j, t, k) {
      k = 0; for (i in a) k++
      for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
      return a[int((k + 1) / 2)]
    }
    END { printf "%-14s %8d %8.3f\n", l, median(wall), median(loop) }'
done
