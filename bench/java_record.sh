#!/usr/bin/env bash
# bench/java_record.sh: the whole cost of tracing a JVM, Spoor beside
# heaptrack in one run. Runs tests/preload/programs/JitHeap.java (zlib's
# malloc under Java frames, a JIT's code in no module; threads; caught
# null dereferences) untraced, under `spoor record`, under heaptrack and,
# when BASELINE_SPOOR is given, under that build's spoor, interleaved, and
# prints the median wall and CPU (user + system) of each, with the ratio
# to the untraced run. A JVM's run moves by a tenth from one run to the
# next: read medians of 5 or more.
#
#   bench/java_record.sh [runs (5)] [BASELINE_SPOOR]
#
# BASELINE_SPOOR is a spoor whose SPOOR_PRELOAD_LIB, if it needs one, the
# caller sets in a wrapper. Uses build/release of this tree. Needs java
# (openjdk-17-jdk-headless), heaptrack (scripts/install-bench-deps.sh) and
# GNU time. A benchmark, not a test: it exits 0 whatever the numbers are.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
runs=${1:-5}
base=${2:-}
spoor="$root/build/release/symbolizer/spoor"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cp "$root/tests/preload/programs/JitHeap.java" "$out/"
cd "$out"
java JitHeap.java > expected.txt  # warms the page cache; the output to compare
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
one() {
  local label=$1
  shift
  /usr/bin/time -f "$label %e %U %S" -a -o times.txt "$@" > got.txt 2>/dev/null
  # heaptrack prints its own lines on stdout too: the program's must be there.
  grep -qxF -f expected.txt got.txt || echo "$label: the program's output is not the untraced run's" >&2
}
for _ in $(seq "$runs"); do
  one untraced java JitHeap.java
  one spoor "$spoor" record -o s.spoor -- java JitHeap.java
  one heaptrack heaptrack -o h java JitHeap.java
  rm -f h.*
  [ -n "$base" ] && one baseline "$base" record -o b.spoor -- java JitHeap.java
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
printf '%-10s %9s %6s %9s %6s\n' tool wall x cpu x
w0=$(awk '$1 == "untraced" { print $2 }' times.txt | median)
c0=$(awk '$1 == "untraced" { print $3 + $4 }' times.txt | median)
for label in untraced spoor heaptrack baseline; do
  grep -q "^$label " times.txt || continue
  w=$(awk -v l="$label" '$1 == l { print $2 }' times.txt | median)
  c=$(awk -v l="$label" '$1 == l { print $3 + $4 }' times.txt | median)
  printf '%-10s %8.2fs %5.2fx %8.2fs %5.2fx\n' "$label" "$w" "$(echo "$w / $w0" | bc -l)" "$c" "$(echo "$c / $c0" | bc -l)"
done
