#!/usr/bin/env bash
# bench/heaptrack_compare.sh: whole-process cost of tracing the heap, Spoor
# beside heaptrack, in one run. Builds the release preset, then runs each
# workload (bench/workloads/) untraced, under `spoor record` (every
# provider, 64-frame stacks: heaptrack's depth), under `spoor record
# --compress none` ("spoor raw": the same events written as they are, no
# packing: what the program's side alone costs, the floor under the first
# row) and under `heaptrack`, interleaved, SPOOR_BENCH_REPS times, and
# prints one table of medians:
#
#   wall      seconds from start to exit, the tool's finishing work included
#             (spoor record's last drain; heaptrack's interpreter and zstd)
#   loop      seconds the workload's own loop took (it prints them)
#   finishing (spoor, in the notes) seconds spoor record worked on after
#             the program ended: last drains, packing what was queued
#   cpu       user + system seconds of every process of the run
#   x         wall and cpu divided by the untraced run's
#   rss       the workload process's peak RSS (VmHWM, reported at its exit
#             by libspoor-bench-peak-rss.so) and what the tool added to it
#   shared    of what it added, the shared memory resident at its exit
#             (RssShmem): spoor record's rings, mapped by the recorder too
#   tool rss  the largest peak of the tool's own processes (spoor record;
#             heaptrack_interpret, zstd)
#   file      bytes of the trace (Spoor) or of heaptrack's .zst, and per
#             allocation call (Spoor: Alloc + Realloc events in `spoor info`;
#             heaptrack: "calls to allocation functions" of heaptrack_print),
#             and the wall time the tool added per allocation call
#
#   bench/heaptrack_compare.sh
#
# Environment:
#   SPOOR_BENCH_DIR            traces and the summary (/tmp/spoor-heaptrack-compare)
#   SPOOR_BENCH_REPS           runs of each case and tool (3)
#   SPOOR_BENCH_MALLOC_ITERATIONS  malloc_heavy's iterations per thread (1000000)
#   SPOOR_BENCH_IO_ITERATIONS  io_heavy's iterations per thread (200000)
#   SPOOR_BENCH_SKIP_DEPS      1: do not run scripts/install-bench-deps.sh
#   SPOOR_BENCH_KEEP_TRACES    1: keep the last run's trace files
#   SPOOR_BENCH_PAUSE          seconds to wait before each run (0): on a virtual
#                              machine whose host takes back freed memory, a run
#                              right after another reuses its pages; after a
#                              pause it pays for fresh ones, as a first
#                              recording does (bench/RESULTS.md)
#
# A benchmark, not a test: it exits 0 whatever the numbers are. The machine
# should be quiet: it prints the load average before and after.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
out=${SPOOR_BENCH_DIR:-/tmp/spoor-heaptrack-compare}
mkdir -p "$out"
out=$(cd "$out" && pwd)

if [ "${SPOOR_BENCH_SKIP_DEPS:-0}" != 1 ]; then
  "$root/scripts/install-bench-deps.sh"
fi
cd "$root"
cmake --preset release >/dev/null
cmake --build --preset release --target spoor spoor-preload spoor_workload_malloc_heavy \
  spoor_workload_io_heavy spoor_bench_peak_rss

python3 - "$root/build/release" "$out" <<'PY' | tee "$out/summary.txt"
import glob, os, re, resource, statistics, subprocess, sys, time

build, out = sys.argv[1:3]
reps = int(os.environ.get("SPOOR_BENCH_REPS", "3"))
malloc_iters = os.environ.get("SPOOR_BENCH_MALLOC_ITERATIONS", "1000000")
io_iters = os.environ.get("SPOOR_BENCH_IO_ITERATIONS", "200000")
keep = os.environ.get("SPOOR_BENCH_KEEP_TRACES", "0") == "1"
pause = float(os.environ.get("SPOOR_BENCH_PAUSE", "0"))

spoor = os.path.join(build, "symbolizer", "spoor")
workloads = os.path.join(build, "bench", "workloads")
peak_rss_lib = os.path.join(workloads, "libspoor-bench-peak-rss.so")

cases = [
    ("malloc_heavy 1 thread", "spoor_workload_malloc_heavy", ["--iterations=" + malloc_iters, "--threads=1"]),
    ("malloc_heavy 2 threads", "spoor_workload_malloc_heavy", ["--iterations=" + malloc_iters, "--threads=2"]),
    ("io_heavy 1 thread", "spoor_workload_io_heavy", ["--iterations=" + io_iters, "--threads=1"]),
    ("io_heavy 2 threads", "spoor_workload_io_heavy", ["--iterations=" + io_iters, "--threads=2"]),
]
tools = ("untraced", "spoor", "spoor raw", "heaptrack")

def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])

def peaks(prefix):
    """name -> (largest peak RSS, its shared memory at exit) in KiB, of the
    processes of that name."""
    p = {}
    for path in glob.glob(prefix + ".*"):
        name = path[len(prefix) + 1:].rsplit(".", 1)[0]
        with open(path) as f:
            fields = [int(x) for x in f.read().split()]
        if fields:
            p[name] = max(p.get(name, (0, 0)), (fields[0], fields[1] if len(fields) > 1 else 0))
        os.remove(path)
    return p

def spoor_file(case_id, tool):
    return os.path.join(out, case_id + ("-raw" if tool == "spoor raw" else "") + ".spoor")

def run_once(case_id, program, args, tool, rep):
    exe = os.path.join(workloads, program)
    base = os.path.join(out, case_id)
    if tool == "untraced":
        cmd = [exe] + args
    elif tool.startswith("spoor"):
        cmd = [spoor, "record", "-o", spoor_file(case_id, tool), "--stack-depth", "64"] + \
              (["--compress", "none"] if tool == "spoor raw" else []) + ["--", exe] + args
    else:
        for stale in glob.glob(base + ".zst") + glob.glob(base + ".gz"):
            os.remove(stale)
        cmd = ["heaptrack", "-o", base, exe] + args
    rss_prefix = os.path.join(out, "rss")
    env = dict(os.environ, SPOOR_BENCH_PEAK_RSS=rss_prefix,
               LD_PRELOAD=peak_rss_lib + (":" + os.environ["LD_PRELOAD"] if os.environ.get("LD_PRELOAD") else ""))
    # The children's rusage grows by the tool's process and every process it
    # waited for in turn: the traced program, heaptrack_interpret and zstd.
    if pause > 0:
        time.sleep(pause)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    stdout, stderr = proc.stdout, proc.stderr
    if proc.returncode != 0:
        sys.exit("heaptrack_compare: %s exited with %d:\n%s" % (" ".join(cmd), proc.returncode, stderr))
    r = {"wall": wall, "cpu": (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)}
    m = re.search(r"\bseconds=([0-9.]+)", stdout)
    r["loop"] = float(m.group(1)) if m else float("nan")
    p = peaks(rss_prefix)
    r["rss"], r["shmem"] = p.get(program, (0, 0))
    others = {k: v[0] for k, v in p.items() if k != program}
    if tool.startswith("spoor"):
        r["tool_rss"] = others.get("spoor", 0)
        r["tool_rss_name"] = "spoor record"
        r["file"] = os.path.getsize(spoor_file(case_id, tool))
        m = re.search(r"(\d+) events, (\d+) lost", stderr)
        r["events"], r["lost"] = (int(m.group(1)), int(m.group(2))) if m else (0, -1)
        # What of the wall time came after the program ended: the last
        # drains and packing what was still queued.
        m = re.search(r"the trace was finished ([0-9.]+) s later", stderr)
        r["tail"] = float(m.group(1)) if m else float("nan")
    elif tool == "heaptrack":
        name = max(others, key=others.get) if others else ""
        r["tool_rss"] = others.get(name, 0)
        r["tool_rss_name"] = name
        data = (glob.glob(base + ".zst") + glob.glob(base + ".gz"))[0]
        r["file"] = os.path.getsize(data)
        r["data"] = data
    return r


def allocation_calls(tool, r, case_id):
    if tool.startswith("spoor"):
        info = subprocess.run([spoor, "info", spoor_file(case_id, tool)],
                              capture_output=True, text=True).stdout
        n = 0
        for name in ("Alloc", "Realloc"):
            m = re.search(r"^\s+%s\s+(\d+)\s*$" % name, info, re.M)
            n += int(m.group(1)) if m else 0
        return n
    text = subprocess.run(["heaptrack_print", "-f", r["data"], "--print-peaks=0", "--print-allocators=0",
                           "--print-temporary=0"],
                          capture_output=True, text=True).stdout
    m = re.search(r"calls to allocation functions: (\d+)", text)
    return int(m.group(1)) if m else 0

def versions():
    ht = subprocess.run(["heaptrack", "--version"], capture_output=True, text=True).stdout.strip()
    cpu = ""
    for line in subprocess.run(["lscpu"], capture_output=True, text=True).stdout.splitlines():
        if line.startswith("Model name:"):
            cpu = line.split(":", 1)[1].strip()
    return "%s, %d CPUs, kernel %s; %s" % (cpu, os.cpu_count(), os.uname().release, ht)

print("heaptrack_compare: %s" % versions())
load_before = loadavg()
results = {}  # (case, tool) -> [run dicts]
for rep in range(reps):
    for ci, (label, program, args) in enumerate(cases):
        for tool in tools:
            results.setdefault((label, tool), []).append(run_once("case%d" % ci, program, args, tool, rep))
load_after = loadavg()

def med(runs, key):
    return statistics.median(r[key] for r in runs)

print()
print("=== Spoor vs heaptrack, whole process (medians of %d runs%s; load %s -> %s) ===" %
      (reps, "; %g s idle before each" % pause if pause > 0 else "", load_before, load_after))
header = "%-23s %-9s %8s %7s %8s %7s %7s %9s %8s %8s %20s %9s %7s %s" % (
    "case", "tool", "wall s", "x", "cpu s", "x", "loop s", "rss MiB", "+MiB", "shared", "tool rss MiB", "file MiB",
    "B/call", "calls / notes")
print(header)
print("-" * len(header))
for ci, (label, program, args) in enumerate(cases):
    base = results[(label, "untraced")]
    bw, bc, br = med(base, "wall"), med(base, "cpu"), med(base, "rss")
    for tool in tools:
        runs = results[(label, tool)]
        w, c, rss = med(runs, "wall"), med(runs, "cpu"), med(runs, "rss")
        tool_rss = file_mib = bpc = notes = ""
        if tool != "untraced":
            tool_rss = "%.1f (%s)" % (med(runs, "tool_rss") / 1024, runs[-1]["tool_rss_name"])
            calls = allocation_calls(tool, runs[-1], "case%d" % ci)
            size = runs[-1]["file"]
            file_mib = "%.2f" % (size / 2**20)
            # Per call figures mean something only where calls dominate (not
            # io_heavy, whose handful of calls come from the runtime).
            per_call = calls >= 10000
            bpc = "%.1f" % (size / calls) if per_call else "n/a"
            notes = "%d calls" % calls
            if per_call:
                notes += ", %+.0f ns wall per call" % ((w - bw) * 1e9 / calls)
            if tool.startswith("spoor"):
                notes += ", %d events; lost per run: %s; finishing after the program: %.3f s" % (
                    runs[-1]["events"], " ".join(str(r["lost"]) for r in runs), med(runs, "tail"))
        print("%-23s %-9s %8.3f %7s %8.3f %7s %7.3f %9.1f %8s %8s %20s %9s %7s %s" % (
            label if tool == "untraced" else "", tool, w, "" if tool == "untraced" else "%.1f" % (w / bw),
            c, "" if tool == "untraced" else "%.1f" % (c / bc), med(runs, "loop"), rss / 1024,
            "" if tool == "untraced" else "%+.1f" % ((rss - br) / 1024),
            "" if tool == "untraced" else "%.1f" % ((med(runs, "shmem") - med(base, "shmem")) / 1024),
            tool_rss, file_mib, bpc, notes))

if not keep:
    for f in glob.glob(os.path.join(out, "case*.spoor")) + glob.glob(os.path.join(out, "case*.zst")) + \
            glob.glob(os.path.join(out, "case*.gz")):
        os.remove(f)
PY
echo "heaptrack_compare: summary in $out/summary.txt" >&2
