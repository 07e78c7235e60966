#!/usr/bin/env bash
# bench/kernel_stack_size.sh: how much user stack a kernel CPU sample needs
# (spoor record --kernel-stack-size) on a Python program, whose native stack
# grows ~0.5 KiB per level of recursion through C. For each size, records
# bench/workloads/py_deep.py (a tree walk ~15 C levels deep, and the same
# walk under 40 more levels) with
#
#   spoor record --no-preload --kernel=samples --kernel-stack-size SIZE -- python3 py_deep.py ...
#
# and prints the samples, how many walks stopped at the end of the stack
# copy, frames per sample, lost records, the trace's size (and its blocks'
# before zstd) and the program's own CPU time (the kernel charges each
# sample's copy to it).
#
#   bench/kernel_stack_size.sh [SIZE...]   (default: 16376 32768 65528)
# Environment: SPOOR_BENCH_DIR (/tmp/spoor-kernel-stack), SPOOR_TOOL
# (default: the release preset's build), SPOOR_BENCH_REPS (1),
# SPOOR_BENCH_HZ (the sample rate, 1000), SPOOR_BENCH_WORK ("walk",
# "deep" or both, the default).
# A benchmark, not a test: it exits 0 whatever the numbers are.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${SPOOR_BENCH_DIR:-/tmp/spoor-kernel-stack}
spoor=${SPOOR_TOOL:-build/release/symbolizer/spoor}
reps=${SPOOR_BENCH_REPS:-1}
hz=${SPOOR_BENCH_HZ:-1000}
works=()
[[ ${SPOOR_BENCH_WORK:-both} == deep ]] || works+=("0 200")
[[ ${SPOOR_BENCH_WORK:-both} == walk ]] || works+=("40 6000")
sizes=("$@")
[[ ${#sizes[@]} -gt 0 ]] || sizes=(16376 32768 65528)
if [[ ! -x $spoor ]]; then
  cmake --preset release -B build/release >/dev/null
  cmake --build build/release -j2 --target spoor
fi
mkdir -p "$dir"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg); $(python3 --version); $hz Hz"
echo "| workload | stack bytes | samples | stopped: copy too short | frames/sample | lost | trace (zstd) | blocks before zstd | program cpu s |"
echo "|---|---|---|---|---|---|---|---|---|"
for work in "${works[@]}"; do
  read -r extra walks <<<"$work"
  name=$([[ $extra == 0 ]] && echo "walk" || echo "walk + $extra levels")
  for rep in $(seq "$reps"); do
    for size in "${sizes[@]}"; do
      trace="$dir/py-$extra-$size-$rep.spoor"
      "$spoor" record --no-preload --kernel=samples --sample-hz "$hz" --kernel-stack-size "$size" -o "$trace" -- \
        /usr/bin/time -f "program cpu %U %S" python3 bench/workloads/py_deep.py "$extra" "$walks" \
        >/dev/null 2>"$dir/record.err"
      cpu=$(awk '/^program cpu/ {printf "%.2f", $3 + $4}' "$dir/record.err")
      blocks=$(grep -o 'packed [0-9.]* [KMG]iB' "$dir/record.err" | cut -d' ' -f2-3 || true)
      "$spoor" report --kernel --format json "$trace" >"$dir/report.json"
      python3 - "$dir/report.json" "$name" "$size" "$(stat -c %s "$trace")" "$blocks" "$cpu" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
c = r["kernel"]["cpu"]
n = c["samples"]
lost = sum(x["count"] for x in r["kernel"]["lost"])
print(f"| {sys.argv[2]} | {sys.argv[3]} | {n} | {c['stack_copy_short']} ({100 * c['stack_copy_short'] / max(n, 1):.1f}%) "
      f"| {c['unwound']['frames'] / max(n, 1):.1f} | {lost} | {int(sys.argv[4]) / 1024:.0f} KiB | {sys.argv[5]} | {sys.argv[6]} |")
PY
    done
  done
done
