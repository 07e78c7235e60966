#!/usr/bin/env bash
# bench/record_ab.sh: the whole cost of `spoor record` on
# spoor_workload_malloc_heavy, two spoor builds side by side. Runs the
# workload untraced, under the baseline's spoor and under this build's,
# interleaved, and prints medians of:
#
#   wall     start to exit of the whole run (spoor record's finishing included)
#   cpu      CPU time of every process of the run (perf stat task-clock)
#   loop     the workload's own loop (it prints it)
#   progcpu  the workload's own CPU time (getrusage, all its threads)
#   pack     CPU time of spoor record's packing threads (it prints it)
#   drain    CPU time of spoor record's drain thread (printed since the
#            drain thread's cuts; 0 for a spoor that does not print it)
#   prog     start to the program's end, as spoor record saw it
#   finish   what spoor record did after that (last drains, packing)
#   lost     events lost, per run
#
#   bench/record_ab.sh BASELINE_SPOOR [runs (7)] [workload flags...]
#
# SPOOR_BENCH_PAUSE=SECONDS waits that long before each run. On a virtual
# machine whose host takes back freed memory after a few seconds, a run
# that follows another at once gets the pages that one freed, still
# backed; after a pause it pays for fresh ones, as a user's first
# recording does (bench/RESULTS.md).
#
# BASELINE_SPOOR: another build's spoor (say, from a checkout of an earlier
# commit: cmake --preset release && cmake --build --preset release --target
# spoor spoor-preload). Uses build/release of this tree (built by
# bench/heaptrack_compare.sh or cmake --build --preset release). Needs perf.
# A spoor that does not print "finished ... later" shows prog as the whole
# run and finish as 0. A benchmark, not a test: it exits 0 whatever the
# numbers are.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
base=${1:?usage: bench/record_ab.sh BASELINE_SPOOR [runs] [workload flags...]}
runs=${2:-7}
shift $(( $# > 2 ? 2 : $# ))
workload="$root/build/release/bench/workloads/spoor_workload_malloc_heavy"
spoor="$root/build/release/symbolizer/spoor"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

one() {
  local label=$1
  shift
  local start end o
  sleep "${SPOOR_BENCH_PAUSE:-0}"
  start=$(date +%s.%N)
  o=$(perf stat -x, -e task-clock "$@" 2>&1)
  end=$(date +%s.%N)
  # A field the program or this spoor does not print reads as 0.
  field() {
    local v
    v=$(sed -nE "s/$1/\\1/p" <<<"$o" | head -1)
    echo "${v:-0}"
  }
  echo "$label $(echo "$end - $start" | bc) $(echo "$(grep task-clock <<<"$o" | cut -d, -f1) / 1000" | bc -l)" \
    "$(field '.* seconds=([0-9.]+) ns.*')" "$(field '.*cpu_seconds=([0-9.]+).*')" \
    "$(field '.*using ([0-9.]+) s of CPU.*')" "$(field '.* after ([0-9.]+) s.*')" \
    "$(field '.*finished ([0-9.]+) s later.*')" "$(field '.* ([0-9]+) lost.*')" \
    "$(field '.*draining the rings took ([0-9.]+) s of CPU.*')"
}

echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for ((i = 0; i < runs; ++i)); do
  one untraced "$workload" "$@"
  one baseline "$base" record -o "$out/b.spoor" -- "$workload" "$@"
  one this "$spoor" record -o "$out/t.spoor" -- "$workload" "$@"
done >"$out/runs.txt"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"

python3 - "$out/runs.txt" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    label, *values = line.split()
    values = [float(v) for v in values]
    rows.setdefault(label, []).append(values)
med = lambda label, i: statistics.median(r[i] for r in rows[label])
uw, uc, ul = med("untraced", 0), med("untraced", 1), med("untraced", 2)
print("%-9s %7s %6s %7s %6s %7s %6s %8s %6s %6s %6s %7s  %s" % (
    "config", "wall s", "x", "cpu s", "x", "loop s", "x", "progcpu", "pack", "drain", "prog", "finish",
    "lost per run"))
for label in ("untraced", "baseline", "this"):
    print("%-9s %7.3f %6.2f %7.3f %6.2f %7.3f %6.2f %8.3f %6.3f %6.3f %6.3f %7.3f  %s" % (
        label, med(label, 0), med(label, 0) / uw, med(label, 1), med(label, 1) / uc, med(label, 2),
        med(label, 2) / ul, med(label, 3), med(label, 4), med(label, 8), med(label, 5), med(label, 6),
        " ".join(str(int(r[7])) for r in rows[label])))
PY
