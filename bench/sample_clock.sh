#!/usr/bin/env bash
# bench/sample_clock.sh: Spoor's two sampling clocks (preload/README.md,
# "The sampling clock") beside perf record at the same rate, in one run,
# interleaved, RUNS times each (medians):
#   - samples per second of CPU time, and what sampling costs a CPU-bound
#     program (spoor_workload_cpu_bound: its own wall and CPU seconds);
#   - what each adds to a context switch (spoor_workload_pipe_pingpong:
#     the round trips' wall time, two switches each);
#   - what each adds to starting a thread (spoor_workload_thread_churn).
# Spoor records only CPU samples, threads and processes (-p
# samples,thread,process) at --sample-hz 1000; perf records cpu-clock at
# -F 1000 with DWARF stacks (--call-graph dwarf,8192), as
# bench/kernel_sampling.sh does.
#
#   bench/sample_clock.sh [RUNS (5)]
#
# A benchmark, not a test: it exits 0 whatever the numbers are.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
runs=${1:-5}
cd "$root"
cmake --preset release >/dev/null
cmake --build --preset release --target spoor spoor-preload spoor_workload_cpu_bound spoor_workload_pipe_pingpong \
  spoor_workload_thread_churn >/dev/null
spoor="$root/build/release/symbolizer/spoor"
w="$root/build/release/bench/workloads"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
have_perf=0
if command -v perf >/dev/null && perf record -q -e cpu-clock -o "$out/probe.data" -- true >/dev/null 2>&1; then have_perf=1; fi

# tracer NAME, then the command: prints the workload's own line.
spoor_timer() { "$spoor" record -p samples,thread,process --sample-hz 1000 --sample-clock timer -o "$out/t.spoor" -- "$@" 2>/dev/null; }
spoor_task() { "$spoor" record -p samples,thread,process --sample-hz 1000 --sample-clock task -o "$out/t.spoor" -- "$@" 2>/dev/null; }
perf_1k() { perf record -q -e cpu-clock -F 1000 --call-graph dwarf,8192 -o "$out/p.data" -- "$@" 2>/dev/null; }
untraced() { "$@"; }

# Samples of the last recording and the CPU seconds they cover.
spoor_samples() {
  "$spoor" report --format json --cpu "$out/t.spoor" |
    python3 -c 'import json,sys; c=json.load(sys.stdin)["cpu"]; print(c["samples"], c["periods"])'
}
perf_samples() { perf script -i "$out/p.data" -F period 2>/dev/null | grep -c . || true; }

tracers="untraced spoor_timer spoor_task"
[ "$have_perf" = 1 ] && tracers="$tracers perf_1k"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for ((i = 0; i < runs; ++i)); do
  for t in $tracers; do
    line=$($t "$w/spoor_workload_cpu_bound" 20000)
    extra=""
    case $t in
      spoor_*) extra="samples $(spoor_samples)" ;;
      perf_1k) extra="samples $(perf_samples) 0" ;;
    esac
    echo "cpu $t $line $extra"
    echo "pingpong $t $($t "$w/spoor_workload_pipe_pingpong" 100000)"
    [ "$t" = perf_1k ] || echo "churn $t $($t "$w/spoor_workload_thread_churn" 30)"
  done
done >"$out/runs.txt"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"

python3 - "$out/runs.txt" <<'PY'
import re, statistics, sys
rows = {}
for line in open(sys.argv[1]):
    parts = line.split()
    case, tracer = parts[0], parts[1]
    rows.setdefault((case, tracer), []).append(line)
def med(values):
    return statistics.median(values) if values else float("nan")
tracers = [t for t in ("untraced", "spoor_timer", "spoor_task", "perf_1k") if ("cpu", t) in rows]
print("CPU-bound (spoor_workload_cpu_bound 20000), medians:")
print("%-12s %9s %9s %9s %14s %14s" % ("", "wall s", "cpu s", "x wall", "samples", "per CPU s"))
base = med([float(re.search(r"wall ([0-9.]+)", l).group(1)) for l in rows[("cpu", "untraced")]])
for t in tracers:
    ls = rows[("cpu", t)]
    wall = med([float(re.search(r"wall ([0-9.]+)", l).group(1)) for l in ls])
    cpu = med([float(re.search(r"cpu ([0-9.]+)", l).group(1)) for l in ls])
    samples = [int(re.search(r"samples (\d+)", l).group(1)) for l in ls if "samples" in l]
    s = med(samples) if samples else 0
    print("%-12s %9.3f %9.3f %9.2f %14s %14s" % (t, wall, cpu, wall / base, "%.0f" % s if samples else "-",
                                                 "%.0f" % (s / cpu) if samples else "-"))
print()
print("pipe ping-pong (100,000 round trips, 200,000 context switches), medians:")
print("%-12s %9s %9s %14s" % ("", "s", "x", "us per switch"))
base = med([float(re.search(r"seconds=([0-9.]+)", l).group(1)) for l in rows[("pingpong", "untraced")]])
for t in tracers:
    s = med([float(re.search(r"seconds=([0-9.]+)", l).group(1)) for l in rows[("pingpong", t)]])
    print("%-12s %9.3f %9.2f %14.2f" % (t, s, s / base, (s - base) / 200000 * 1e6))
print()
print("thread churn (3,000 threads), medians:")
print("%-12s %9s %9s %14s" % ("", "s", "x", "us per thread"))
base = med([float(re.search(r"seconds=([0-9.]+)", l).group(1)) for l in rows[("churn", "untraced")]])
for t in tracers:
    if ("churn", t) not in rows:
        continue
    s = med([float(re.search(r"seconds=([0-9.]+)", l).group(1)) for l in rows[("churn", t)]])
    print("%-12s %9.3f %9.2f %14.2f" % (t, s, s / base, (s - base) / 3000 * 1e6))
PY
