#!/usr/bin/env bash
# bench/ring_size.sh: spoor record of spoor_workload_malloc_heavy with
# several ring sizes (--buffer-size), interleaved, and for each the medians
# of the whole run's wall time (spoor record's finishing included), the
# workload's own loop and the drain thread's CPU, the runs that lost
# events and the events lost in all.
#
#   bench/ring_size.sh [runs (9)] [threads (1)] [sizes (16M 8M)...]
#
# SPOOR_BENCH_AS=USER runs spoor record as that user (setpriv): the drain
# thread then cannot raise its priority, as for any unprivileged user.
# Uses build/release (cmake --build --preset release). A benchmark, not a
# test: it exits 0 whatever the numbers are.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
runs=${1:-9}
threads=${2:-1}
shift $(( $# > 2 ? 2 : $# ))
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(16M 8M)
spoor="$root/build/release/symbolizer/spoor"
workload="$root/build/release/bench/workloads/spoor_workload_malloc_heavy"
out=$(mktemp -d)
chmod 777 "$out"
trap 'rm -rf "$out"' EXIT
as=()
[ -z "${SPOOR_BENCH_AS:-}" ] || as=(setpriv --reuid="$SPOOR_BENCH_AS" --regid="$(id -gn "$SPOOR_BENCH_AS")" --clear-groups)

echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for ((r = 0; r < runs; r++)); do
  for size in "${sizes[@]}"; do
    start=$(date +%s%N)
    o=$("${as[@]}" "$spoor" record --buffer-size "$size" -o "$out/ring.spoor" -- "$workload" --threads="$threads" 2>&1)
    end=$(date +%s%N)
    loop=$(sed -nE 's/.* seconds=([0-9.]+) .*/\1/p' <<<"$o" | head -1)
    drain=$(sed -nE 's/.*draining the rings took ([0-9.]+) s of CPU.*/\1/p' <<<"$o" | head -1)
    lost=$(grep -oE 'events, [0-9]+ lost' <<<"$o" | grep -oE '[0-9]+ lost' | cut -d' ' -f1 || true)
    echo "$size $(( (end - start) / 1000000 )) ${loop:-0} ${drain:-0} ${lost:-0}" >>"$out/runs"
  done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-8s %8s %8s %9s %12s %12s\n' size wall_ms loop_s drain_s lossy_runs lost_in_all
for size in "${sizes[@]}"; do
  awk -v s="$size" '$1 == s' "$out/runs" | sort -n -k2 | awk -v s="$size" -v n="$runs" '
    { wall[NR] = $2; loop[NR] = $3; drain[NR] = $4; if ($5 > 0) lossy++; lost += $5 }
    function median(a,   i, j, t, k) {
      k = 0; for (i in a) k++
      for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
      return a[int((k + 1) / 2)]
    }
    END { printf "%-8s %8d %8.3f %9.3f %7d of %-3d %12d\n", s, median(wall), median(loop), median(drain), lossy, n, lost }'
done
