#!/usr/bin/env bash
# bench/attach.sh: recording a process that is already running, spoor
# record --pid beside perf record -p, in one run. Starts a CPU-bound program
# (bench/workloads/cpu_bound.c), lets it run 0.3 s, then records it for one
# second with DWARF stacks (user registers + an 8 KiB stack copy per sample)
# at 1 kHz under
#   spoor record --pid PID --kernel=samples --sample-hz 1000 --kernel-stack-size 8192 --duration 1
#   perf record -p PID --call-graph dwarf,8192 -F 1000 -- sleep 1
#   perf record -z ... (the same, zstd-compressed like spoor's file)
# a fresh program for each run, the tools interleaved, SPOOR_BENCH_REPS
# times; prints one table of medians:
#
#   wall      the tool's elapsed seconds (the second recorded, then
#             finishing its file)
#   tool cpu  the tool's user + system seconds
#   samples   samples in the output (CpuSample events; perf's SAMPLE events)
#   bytes     the output file's size
#   lost      records the kernel dropped (spoor's kernel lost count; the
#             total of perf's PERF_RECORD_LOST)
#
#   bench/attach.sh
#
# Environment:
#   SPOOR_BENCH_DIR    traces and the summary (/tmp/spoor-attach)
#   SPOOR_BENCH_REPS   runs of each tool (5)
#   SPOOR_BENCH_PRESET the CMake preset to build with (release)
set -euo pipefail
cd "$(dirname "$0")/.."
DIR=${SPOOR_BENCH_DIR:-/tmp/spoor-attach}
REPS=${SPOOR_BENCH_REPS:-5}
mkdir -p "$DIR"
source bench/kernel_counts.sh
kernel_bench_build

echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
RESULTS=$DIR/results.txt
: > "$RESULTS"
run_case() {
  local name=$1 rep=$2 out=$3
  shift 3
  # ~4 s of work: it outlives the recording.
  "$WORK" 400000 >/dev/null &
  local pid=$!
  sleep 0.3
  local cmd=("${@//PID/$pid}")
  /usr/bin/time -f "time %e %U %S" -o "$DIR/$name-$rep.time" "${cmd[@]}" >/dev/null 2>"$DIR/$name-$rep.err"
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  local samples lost
  case $name in
    spoor)
      samples=$(spoor_samples "$out")
      lost=$(spoor_lost "$DIR/$name-$rep.err")
      ;;
    perf*)
      samples=$(perf_samples "$out")
      lost=$(perf_lost "$out")
      ;;
  esac
  echo "$name $(awk '/^time/{print $2, $3 + $4}' "$DIR/$name-$rep.time") ${samples:-0} $(stat -c %s "$out") ${lost:-0}" \
    >> "$RESULTS"
}

for rep in $(seq 1 "$REPS"); do
  run_case spoor "$rep" "$DIR/attach.spoor" "$SPOOR" record --pid PID --kernel=samples --sample-hz 1000 \
    --kernel-stack-size 8192 --duration 1 -o "$DIR/attach.spoor"
  run_case perf "$rep" "$DIR/attach.data" perf record -q -p PID --call-graph dwarf,8192 -F 1000 \
    -o "$DIR/attach.data" -- sleep 1
  run_case perf-z "$rep" "$DIR/attach-z.data" perf record -q -z -p PID --call-graph dwarf,8192 -F 1000 \
    -o "$DIR/attach-z.data" -- sleep 1
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"

awk '
  { n[$1]++; w[$1, n[$1]] = $2; t[$1, n[$1]] = $3; s[$1, n[$1]] = $4; b[$1, n[$1]] = $5; l[$1, n[$1]] = $6 }
  function median(arr, name, k,   i, j, v, tmp) {
    for (i = 1; i <= k; i++) v[i] = arr[name, i]
    for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (v[j] < v[i]) { tmp = v[i]; v[i] = v[j]; v[j] = tmp }
    return v[int((k + 1) / 2)]
  }
  END {
    printf "%-7s %7s %9s %8s %10s %6s\n", "tool", "wall", "tool cpu", "samples", "bytes", "lost"
    split("spoor perf perf-z", order, " ")
    for (o = 1; o <= 3; o++) {
      name = order[o]; k = n[name]
      printf "%-7s %7.3f %9.3f %8d %10d %6d\n", name, median(w, name, k), median(t, name, k), median(s, name, k),
             median(b, name, k), median(l, name, k)
    }
    spoor_per = median(b, "spoor", n["spoor"]) / median(s, "spoor", n["spoor"])
    for (o = 2; o <= 3; o++) {
      name = order[o]
      printf "spoor / %s: wall %.2fx, tool cpu %.2fx, bytes per sample %.3fx\n", name,
             median(w, "spoor", n["spoor"]) / median(w, name, n[name]),
             median(t, "spoor", n["spoor"]) / median(t, name, n[name]),
             spoor_per / (median(b, name, n[name]) / median(s, name, n[name]))
    }
  }' "$RESULTS" | tee "$DIR/summary.txt"
