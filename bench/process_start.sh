#!/usr/bin/env bash
# bench/process_start.sh: what tracing costs per process in a fork/exec-heavy
# workload. Runs a shell loop that starts ~3 processes per iteration (the
# command substitution's subshell, its pipeline's two children, one of them
# exec'ing cat) untraced, under `spoor record` (default providers) and under
# `heaptrack` (whose library LD_PRELOAD loads into every process of the
# loop too, though heaptrack 1.4.0 records the first process's allocations
# only: neither a fork child's nor an exec'd program's), interleaved,
# SPOOR_BENCH_REPS times, and prints the median wall and CPU time of each, the time
# each tool added per process started, and the ratios to untraced.
#
#   bench/process_start.sh
#
# Environment:
#   SPOOR_BENCH_DIR        traces and the summary (/tmp/spoor-process-start)
#   SPOOR_BENCH_REPS       runs of each tool (7)
#   SPOOR_BENCH_LOOPS      iterations of the shell loop (100)
#   SPOOR_BENCH_EXEC_ONLY  1: the loop runs /bin/true instead (one fork and
#                          exec per iteration: what a new image costs alone)
#   SPOOR_BENCH_BODY       the loop's body, a shell command (say 'ls / >/dev/null':
#                          a program whose libraries allocate before the shim attaches)
#   SPOOR_BENCH_BUILD      build directory with spoor and the shim (build/release,
#                          configured and built here when it is the default)
#   SPOOR_BENCH_SKIP_DEPS  1: do not run scripts/install-bench-deps.sh
#   SPOOR_BENCH_BASELINE   SPOOR:SHIM, another build's spoor and libspoor-preload.so
#                          to run beside (a "baseline" row, for before/after figures)
#   SPOOR_BENCH_TIMEOUT    seconds a run may take before it is killed (with its
#                          process group) and run again (120)
#
# Processes per run are counted, not assumed: `spoor info` of the last
# traced run says how many processes joined the recording.
#
# A benchmark, not a test: it exits 0 whatever the numbers are. The machine
# should be quiet: it prints the load average before and after.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
out=${SPOOR_BENCH_DIR:-/tmp/spoor-process-start}
mkdir -p "$out"
out=$(cd "$out" && pwd)

if [ "${SPOOR_BENCH_SKIP_DEPS:-0}" != 1 ]; then
  "$root/scripts/install-bench-deps.sh"
fi
cd "$root"
build=${SPOOR_BENCH_BUILD:-}
if [ -z "$build" ]; then
  build="$root/build/release"
  cmake --preset release >/dev/null
  cmake --build --preset release --target spoor spoor-preload
fi

python3 - "$build" "$out" <<'PY' | tee "$out/summary.txt"
import os, re, resource, shutil, signal, statistics, subprocess, sys, time

build, out = sys.argv[1:3]
reps = int(os.environ.get("SPOOR_BENCH_REPS", "7"))
loops = int(os.environ.get("SPOOR_BENCH_LOOPS", "100"))
timeout = float(os.environ.get("SPOOR_BENCH_TIMEOUT", "120"))
spoor = os.path.join(build, "symbolizer", "spoor")
heaptrack = shutil.which("heaptrack")
body = "/bin/true" if os.environ.get("SPOOR_BENCH_EXEC_ONLY", "0") == "1" else "x=$(echo $i | cat)"
body = os.environ.get("SPOOR_BENCH_BODY", body)
loop = ["bash", "-c", f"for i in $(seq {loops}); do {body}; done"]
trace = os.path.join(out, "process_start.spoor")

tools = {"untraced": (loop, {}), "spoor": ([spoor, "record", "-o", trace, "--"] + loop, {})}
baseline = os.environ.get("SPOOR_BENCH_BASELINE", "")
if baseline:
    base_spoor, base_shim = baseline.split(":")
    tools["baseline"] = ([base_spoor, "record", "-o", os.path.join(out, "baseline.spoor"), "--"] + loop,
                         {"SPOOR_PRELOAD_LIB": base_shim})
if heaptrack:
    tools["heaptrack"] = ([heaptrack, "-o", os.path.join(out, "heaptrack.process_start")] + loop, {})

def run(cmd, env):
    # A run that does not end (heaptrack's fork child can hang on a lock its
    # parent held) is killed with its whole process group and run again.
    for attempt in range(3):
        for f in os.listdir(out):
            if f.startswith("heaptrack.process_start"):
                os.unlink(os.path.join(out, f))
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.perf_counter()
        p = subprocess.Popen(cmd, env={**os.environ, **env}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             start_new_session=True)
        try:
            rc = p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
            print(f"{os.path.basename(cmd[0])}: no end after {timeout} s; killed, running it again", file=sys.stderr)
            continue
        wall = time.perf_counter() - t
        if rc != 0:
            raise subprocess.CalledProcessError(rc, cmd)
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        return wall, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    return None  # the tool is left out of the rest of the runs

print(f"load average before: {os.getloadavg()[0]:.2f}")
print(f"workload: {' '.join(loop[:2])} '{loop[2]}', {reps} interleaved runs per tool")
walls = {name: [] for name in tools}
cpus = {name: [] for name in tools}
hung = []  # tools whose run did not end three times: left out
for _ in range(reps):
    for name, (cmd, env) in tools.items():
        if name in hung:
            continue
        got = run(cmd, env)
        if got is None:
            if name in ("untraced", "spoor"):
                sys.exit(f"{name}: no end after {timeout} s, three times")
            print(f"{name}: no end after {timeout} s, three times: left out", file=sys.stderr)
            hung.append(name)
            continue
        walls[name].append(got[0])
        cpus[name].append(got[1])
for name in hung:
    del walls[name], cpus[name]

info = subprocess.run([spoor, "info", trace], capture_output=True, text=True).stdout
# One line per image ("  pid N (ppid P, ...) name"); the recorder is one
# of them, and an exec'd process is listed once per image.
pids = set(re.findall(r"^  pid (\d+) \(ppid", info, re.M))
processes = max(len(pids) - 1, 1)

base = statistics.median(walls["untraced"])
base_cpu = statistics.median(cpus["untraced"])
print(f"processes per run: {processes} (spoor info of the last traced run)")
print("wall: start to exit, the tool's finishing included; cpu: user + system of every process of the run")
print(f"{'tool':<10} {'wall s':>8} {'min s':>8} {'x':>6} {'ms/proc':>8} {'+ms/proc':>9} "
      f"{'cpu s':>8} {'x':>6} {'+cpu ms/proc':>13}")
for name, w in walls.items():
    med, cpu = statistics.median(w), statistics.median(cpus[name])
    print(f"{name:<10} {med:8.3f} {min(w):8.3f} {med / base:6.2f} {1000 * med / processes:8.3f} "
          f"{1000 * (med - base) / processes:9.3f} {cpu:8.3f} {cpu / base_cpu:6.2f} "
          f"{1000 * (cpu - base_cpu) / processes:13.3f}")
for name in hung:
    print(f"{name:<10} left out: a run did not end in {timeout} s, three times")
if "heaptrack" in walls:
    print(f"spoor / heaptrack wall: {statistics.median(walls['spoor']) / statistics.median(walls['heaptrack']):.2f}")
print(f"load average after: {os.getloadavg()[0]:.2f}")
PY
