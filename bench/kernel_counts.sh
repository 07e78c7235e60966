# bench/kernel_counts.sh: sourced by the kernel-sampling benchmarks
# (kernel_sampling.sh, attach.sh), from the tree's root: builds what they
# run, and counts what a run wrote, the same way for each: samples and
# records the kernel dropped, in a Spoor trace (with spoor record's
# stderr) and in a perf.data file.

# Builds spoor and the CPU-bound workload with $SPOOR_BENCH_PRESET
# (release) and sets BUILD, SPOOR and WORK; exits when perf is missing.
kernel_bench_build() {
  local preset=${SPOOR_BENCH_PRESET:-release}
  BUILD=build/$preset
  cmake --preset "$preset" -B "$BUILD" >/dev/null
  cmake --build "$BUILD" -j2 --target spoor spoor_workload_cpu_bound >/dev/null
  SPOOR=$BUILD/symbolizer/spoor
  WORK=$BUILD/bench/workloads/spoor_workload_cpu_bound
  command -v perf >/dev/null || { echo "perf is not installed (scripts/install-test-deps.sh)"; exit 1; }
}

# CpuSample events in the Spoor trace $1.
spoor_samples() { "$SPOOR" dump "$1" | grep -c CpuSample || true; }
# The kernel's lost count spoor record printed to the stderr file $1.
spoor_lost() { sed -n 's/.*kernel: [0-9]* records, \([0-9]*\) lost.*/\1/p' "$1"; }
# SAMPLE events in the perf.data file $1.
perf_samples() { perf report --stats -i "$1" 2>/dev/null | awk '/SAMPLE events:/{print $3}' | head -1; }
# The records PERF_RECORD_LOST says were dropped, in all, in perf.data $1.
perf_lost() {
  perf report -D -i "$1" 2>/dev/null | sed -n 's/.*PERF_RECORD_LOST: .*lost:\([0-9]*\).*/\1/p' |
    awk '{n += $1} END {print n + 0}'
}
