#!/usr/bin/env bash
# bench/kernel_sampling.sh: the cost of kernel CPU sampling with DWARF
# stacks (user registers + an 8 KiB stack copy per sample), spoor record
# beside perf record at the same rate, in one run. Runs a CPU-bound
# program (bench/workloads/cpu_bound.c) untraced, under
#   spoor record --no-preload --kernel=samples --sample-hz HZ
#   perf record --call-graph dwarf,8192 -F HZ
# at 1 kHz and 10 kHz, interleaved, SPOOR_BENCH_REPS times, and prints one
# table of medians:
#
#   wall      the program's own elapsed seconds for its fixed work
#   cpu       the program's own user + system seconds (the kernel charges
#             sample interrupts and stack copies to the sampled task)
#   tool cpu  user + system seconds of everything else in the run (the
#             recorder draining and writing; perf writing perf.data)
#   x         cpu and cpu + tool cpu, divided by the untraced run's cpu
#   samples   samples in the output (CpuSample events; perf's SAMPLE events)
#   lost      records the kernel dropped because the ring was full (spoor's
#             kernel lost count; the total of perf's PERF_RECORD_LOST)
#
#   bench/kernel_sampling.sh
#
# Environment:
#   SPOOR_BENCH_DIR    traces and the summary (/tmp/spoor-kernel-sampling)
#   SPOOR_BENCH_REPS   runs of each case (3)
#   SPOOR_BENCH_ROUNDS the workload's rounds (20000: ~0.2 s of CPU here)
#   SPOOR_BENCH_PRESET the CMake preset to build with (release; ci is release with -Werror)
set -euo pipefail
cd "$(dirname "$0")/.."
DIR=${SPOOR_BENCH_DIR:-/tmp/spoor-kernel-sampling}
REPS=${SPOOR_BENCH_REPS:-3}
ROUNDS=${SPOOR_BENCH_ROUNDS:-20000}
mkdir -p "$DIR"
source bench/kernel_counts.sh
kernel_bench_build

echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
RESULTS=$DIR/results.txt
: > "$RESULTS"
# One run: the tree's user+sys from GNU time, the program's own figures
# from its output; tool cpu = tree - program.
run_case() {
  local name=$1 rep=$2
  shift 2
  local out=$DIR/$name-$rep.out err=$DIR/$name-$rep.err
  /usr/bin/time -f "tree %U %S" -o "$DIR/$name-$rep.time" "$@" >"$out" 2>"$err"
  local wall cpu tree samples=0 lost=0
  wall=$(awk '/^wall/{print $2}' "$out")
  cpu=$(awk '/^wall/{print $4}' "$out")
  tree=$(awk '/^tree/{print $2 + $3}' "$DIR/$name-$rep.time")
  case $name in
    spoor*)
      samples=$(spoor_samples "$DIR/$name.spoor")
      lost=$(spoor_lost "$err")
      ;;
    perf*)
      samples=$(perf_samples "$DIR/$name.data")
      lost=$(perf_lost "$DIR/$name.data")
      ;;
  esac
  echo "$name $wall $cpu $(awk -v t="$tree" -v c="$cpu" 'BEGIN{printf "%.4f", t - c}') ${samples:-0} ${lost:-0}" >> "$RESULTS"
}

for rep in $(seq 1 "$REPS"); do
  run_case base "$rep" "$WORK" "$ROUNDS"
  for hz in 1000 10000; do
    run_case "spoor-$hz" "$rep" "$SPOOR" record --no-preload --kernel=samples --sample-hz "$hz" \
      --kernel-stack-size 8192 -o "$DIR/spoor-$hz.spoor" -- "$WORK" "$ROUNDS"
    run_case "perf-$hz" "$rep" perf record -q --call-graph dwarf,8192 -F "$hz" -o "$DIR/perf-$hz.data" -- \
      "$WORK" "$ROUNDS"
  done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"

# Medians per case.
awk '
  { n[$1]++; w[$1, n[$1]] = $2; c[$1, n[$1]] = $3; t[$1, n[$1]] = $4; s[$1, n[$1]] = $5; l[$1, n[$1]] = $6 }
  function median(arr, name, k,   i, j, v, tmp) {
    for (i = 1; i <= k; i++) v[i] = arr[name, i]
    for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (v[j] < v[i]) { tmp = v[i]; v[i] = v[j]; v[j] = tmp }
    return v[int((k + 1) / 2)]
  }
  END {
    base = median(c, "base", n["base"])
    printf "%-12s %8s %8s %9s %7s %9s %8s %6s\n", "case", "wall", "cpu", "tool cpu", "x cpu", "x cpu+tool", "samples", "lost"
    split("base spoor-1000 perf-1000 spoor-10000 perf-10000", order, " ")
    for (o = 1; o <= 5; o++) {
      name = order[o]; k = n[name]
      cpu = median(c, name, k); tool = median(t, name, k)
      printf "%-12s %8.3f %8.3f %9.3f %7.2f %9.2f %8d %6d\n", name, median(w, name, k), cpu, tool, cpu / base,
             (cpu + tool) / base, median(s, name, k), median(l, name, k)
    }
  }' "$RESULTS" | tee "$DIR/summary.txt"
