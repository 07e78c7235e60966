#!/usr/bin/env bash
# bench/report_memory.sh: what reading a long trace costs. Records
# spoor_workload_malloc_heavy at N and 2N iterations (about 2.2 events per
# iteration, every one with a stack; --wait-when-full, so nothing is lost
# and the traces hold every event), and ten runs of N/10 iterations one
# after another under one shell ("seq": 21 processes, as a build's are),
# then runs `spoor report` on each, this
# build beside BASELINE_SPOOR, interleaved, and prints medians of wall
# time, user CPU, peak RSS and peak anonymous memory (sampled). With
# heaptrack installed, also records the N run under heaptrack and times
# heaptrack_print on its file, the same way.
#
#   bench/report_memory.sh BASELINE_SPOOR [runs (3)] [N (10000000)]
#
# BASELINE_SPOOR: another build's spoor (cmake --preset release && cmake
# --build --preset release --target spoor in a checkout of an earlier
# commit). Uses build/release of this tree. A benchmark, not a test: it
# exits 0 whatever the numbers are.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
base=${1:?usage: bench/report_memory.sh BASELINE_SPOOR [runs] [N]}
runs=${2:-3}
n=${3:-10000000}
workload="$root/build/release/bench/workloads/spoor_workload_malloc_heavy"
spoor="$root/build/release/symbolizer/spoor"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

"$spoor" record --wait-when-full -o "$out/n.spoor" -- "$workload" --iterations="$n" >/dev/null 2>"$out/rec1"
"$spoor" record --wait-when-full -o "$out/2n.spoor" -- "$workload" --iterations=$((2 * n)) >/dev/null 2>"$out/rec2"
"$spoor" record --wait-when-full -o "$out/seq.spoor" -- sh -c \
  "for i in 1 2 3 4 5 6 7 8 9 10; do '$workload' --iterations=$((n / 10)) >/dev/null; sleep 0.2; done" 2>"$out/rec3"
grep -h 'events' "$out/rec1" "$out/rec2" "$out/rec3"
have_heaptrack=0
if command -v heaptrack >/dev/null && command -v heaptrack_print >/dev/null; then
  heaptrack -o "$out/heaptrack.n" "$workload" --iterations="$n" >/dev/null 2>&1 && have_heaptrack=1
fi

# Runs a reader under /usr/bin/time and samples its anonymous memory
# (RssAnon: the peak RSS also counts the mapped trace file's pages, which
# the kernel can take back) every 20 ms.
one() {
  local label=$1
  shift
  /usr/bin/time -o "$out/one" -f "%e %U %M" "$@" >/dev/null 2>&1 &
  local timer=$! pid="" anon=0 a
  while kill -0 "$timer" 2>/dev/null; do
    [ -n "$pid" ] || pid=$(pgrep -P "$timer" | head -1 || true)
    if [ -n "$pid" ]; then
      a=$(awk '/^RssAnon/ {print $2}' "/proc/$pid/status" 2>/dev/null || true)
      if [ -n "$a" ] && [ "$a" -gt "$anon" ]; then anon=$a; fi
    fi
    sleep 0.02
  done
  wait "$timer" || true
  echo "$label $(tail -1 "$out/one") $anon" >>"$out/times"
}

echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for ((i = 0; i < runs; ++i)); do
  for trace in n 2n seq; do
    one "baseline-$trace" "$base" report "$out/$trace.spoor"
    one "this-$trace" "$spoor" report "$out/$trace.spoor"
  done
  if [ "$have_heaptrack" = 1 ]; then one heaptrack_print-n heaptrack_print "$out"/heaptrack.n.*; fi
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"

python3 - "$out/times" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    parts = line.split()
    if len(parts) != 5:
        continue
    label, wall, user, rss, anon = parts
    rows.setdefault(label, []).append((float(wall), float(user), int(rss) / 1024, int(anon) / 1024))
print(f"{'reader':20} {'trace':>5} {'wall s':>8} {'user s':>8} {'peak RSS MiB':>13} {'of it anon MiB':>15}")
for label, values in rows.items():
    name, trace = label.rsplit('-', 1)
    med = lambda i: statistics.median(v[i] for v in values)
    print(f"{name:20} {trace:>5} {med(0):8.2f} {med(1):8.2f} {med(2):13.0f} {med(3):15.0f}")
PY
