#!/usr/bin/env bash
# bench/run.sh: builds the benchmarks with the release preset, runs
# spoor_bench_core under an LTTng session (so its LTTng-UST cases take the
# enabled path), then spoor_bench_sustained, and prints the figures that
# bench/RESULTS.md reports, with the ratios and each target's verdict.
#
#   bench/run.sh [extra spoor_bench_core flags, e.g. --benchmark_filter=Spoor]
#
# Environment:
#   SPOOR_BENCH_DIR       where traces, JSON and the summary go (/tmp/spoor-bench)
#   SPOOR_BENCH_REPS      repetitions of each spoor_bench_core case (5)
#   SPOOR_BENCH_RATE      sustained run's target events/s (10000000)
#   SPOOR_BENCH_SECONDS   sustained run's length (10)
#   SPOOR_BENCH_NO_LTTNG  1: no LTTng session (the LTTng cases then measure
#                         the disabled path and the summary says so)
#   SPOOR_BENCH_SKIP_DEPS 1: do not run scripts/install-bench-deps.sh
#   SPOOR_BENCH_KEEP_TRACES 1: keep the trace files (several GB) in
#                         SPOOR_BENCH_DIR instead of deleting them at the end
#
# Needs root (or the tracing group) for lttng-sessiond's per-user buffers as
# set up here; starts lttng-sessiond when none runs and stops it again at the
# end. A benchmark, not a test: it exits 0 whatever the numbers are.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
out=${SPOOR_BENCH_DIR:-/tmp/spoor-bench}
reps=${SPOOR_BENCH_REPS:-5}
rate=${SPOOR_BENCH_RATE:-10000000}
seconds=${SPOOR_BENCH_SECONDS:-10}
mkdir -p "$out"
out=$(cd "$out" && pwd)
export SPOOR_BENCH_DIR=$out

say() { printf 'run.sh: %s\n' "$*" >&2; }

# --- 1. dependencies and build ----------------------------------------------
if [ "${SPOOR_BENCH_SKIP_DEPS:-0}" != 1 ]; then
  "$root/scripts/install-bench-deps.sh"
fi
cd "$root"
cmake --preset release
cmake --build --preset release --target spoor_bench_core spoor_bench_sustained
bin="$root/build/release/bench"

# --- 2. LTTng session ---------------------------------------------------------
lttng_session=spoorbench
lttng_trace="$out/lttng-trace"
lttng_active=0
sessiond_pid=""
cleanup() {
  if [ "$lttng_active" = 1 ]; then
    lttng stop "$lttng_session" >/dev/null 2>&1 || true
    lttng destroy "$lttng_session" >/dev/null 2>&1 || true
  fi
  if [ -n "$sessiond_pid" ]; then
    say "stopping the lttng-sessiond this script started (pid $sessiond_pid)"
    kill "$sessiond_pid" 2>/dev/null || true
  fi
}
trap cleanup EXIT

has_lttng_cases=0
"$bin/spoor_bench_core" --benchmark_list_tests=true | grep -q '^BM_LttngUst' && has_lttng_cases=1
use_lttng=0
if [ "$has_lttng_cases" = 1 ] && [ "${SPOOR_BENCH_NO_LTTNG:-0}" != 1 ]; then
  if command -v lttng >/dev/null && command -v lttng-sessiond >/dev/null; then
    use_lttng=1
  else
    say "lttng-tools not installed: the LTTng cases will measure the disabled path"
  fi
fi

if [ "$use_lttng" = 1 ]; then
  if ! pgrep -x lttng-sessiond >/dev/null; then
    say "starting lttng-sessiond"
    lttng-sessiond --daemonize --no-kernel
    if [ "$(id -u)" -eq 0 ]; then pidfile=/var/run/lttng/lttng-sessiond.pid
    else pidfile="$HOME/.lttng/lttng-sessiond.pid"; fi
    [ -r "$pidfile" ] && sessiond_pid=$(cat "$pidfile")
  fi
  # A session left over from an interrupted run would hold the name.
  lttng destroy "$lttng_session" >/dev/null 2>&1 || true
  rm -rf "$lttng_trace"
  lttng create "$lttng_session" --output="$lttng_trace"
  lttng_active=1
  lttng enable-event --userspace 'spoor_bench:*'
  lttng start "$lttng_session"
fi

# --- 3. spoor_bench_core --------------------------------------------------------
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
say "load average before the runs: $load_before"
core_cmd=("$bin/spoor_bench_core" "--benchmark_repetitions=$reps"
          --benchmark_report_aggregates_only=true
          "--benchmark_out=$out/core.json" --benchmark_out_format=json "$@")
say "${core_cmd[*]}"
"${core_cmd[@]}" | tee "$out/core.txt"

lttng_events=""
lttng_discarded=""
lttng_bytes=""
if [ "$use_lttng" = 1 ]; then
  lttng stop "$lttng_session"
  lttng list "$lttng_session" >"$out/lttng-list.txt"
  lttng_discarded=$(awk '/Discarded events:/ {print $3; exit}' "$out/lttng-list.txt")
  lttng destroy "$lttng_session"
  lttng_active=0
  lttng_bytes=$(du -sb "$lttng_trace" | cut -f1)
  # sink.utils.counter prints running totals; the last "Event messages" line
  # is the trace's event count. Text output and wc -l is the slow fallback.
  lttng_events=$(babeltrace2 "$lttng_trace" -c sink.utils.counter 2>/dev/null |
                 awk '/Event messages/ {n = $1} END {print n + 0}')
  if [ "${lttng_events:-0}" = 0 ]; then
    lttng_events=$(babeltrace2 "$lttng_trace" 2>/dev/null | wc -l)
  fi
fi

# --- 4. spoor_bench_sustained -----------------------------------------------------
sustained_cmd=("$bin/spoor_bench_sustained" "--rate=$rate" "--seconds=$seconds"
               "--output=$out/sustained.spoor")
say "${sustained_cmd[*]}"
"${sustained_cmd[@]}" | tee "$out/sustained.txt"
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

# Read the sustained trace back with the spoor tool when it builds: an
# independent count of the events and losses in the file.
if cmake --build --preset release --target spoor >/dev/null 2>&1; then
  "$root/build/release/symbolizer/spoor" info "$out/sustained.spoor" >"$out/sustained-info.txt" 2>&1 ||
    say "spoor info could not read $out/sustained.spoor (see sustained-info.txt)"
else
  say "the spoor tool does not build right now; sustained trace not read back"
fi

# --- 5. summary ------------------------------------------------------------------
python3 - "$out" "$use_lttng" "$lttng_events" "$lttng_discarded" "$lttng_bytes" \
  "$load_before" "$load_after" <<'PY' | tee "$out/summary.txt"
import json, sys, os

out, use_lttng, lt_events, lt_discarded, lt_bytes, load_before, load_after = sys.argv[1:8]
with open(os.path.join(out, "core.json")) as f:
    data = json.load(f)

# (benchmark, threads) -> {aggregate_name: entry}. Run names carry options
# ("BM_X/iterations:4000000/real_time/threads:2"), so key on the function
# name and the thread count. Without repetitions the plain iteration entry
# stands in for the median.
runs = {}
for b in data["benchmarks"]:
    parts = b.get("run_name", b["name"]).split("/")
    threads = 1
    for p in parts[1:]:
        if p.startswith("threads:"):
            threads = int(p.split(":")[1])
    kind = b.get("aggregate_name", "median" if b.get("run_type") == "iteration" else "")
    runs.setdefault((parts[0], threads), {})[kind] = b

def get(name, field="real_time", agg="median"):
    entry = runs.get(name, {}).get(agg)
    if entry is None or field not in entry:
        return None
    v = entry[field]
    if field in ("real_time", "cpu_time"):
        unit = entry.get("time_unit", "ns")
        v *= {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}[unit]
    return v

def fmt(v, spec=".2f", suffix=""):
    return "n/a" if v is None else format(v, spec) + suffix

def verdict(ok):
    return "n/a" if ok is None else ("met" if ok else "MISSED")

S1 = ("BM_Spoor_Enabled3Fields", 1)
S2 = ("BM_Spoor_Enabled3Fields", 2)
V1 = ("BM_Spoor_Enabled3Fields_LiveDrain", 1)
V2 = ("BM_Spoor_Enabled3Fields_LiveDrain", 2)
X1 = ("BM_Spoor_Enabled3Fields_Saturated", 1)
X2 = ("BM_Spoor_Enabled3Fields_Saturated", 2)
SD = ("BM_Spoor_Disabled", 1)
L1 = ("BM_LttngUst_3Fields", 1)
L2 = ("BM_LttngUst_3Fields", 2)
LD = ("BM_LttngUst_Disabled", 1)
FT = ("BM_Floor_TickRead", 1)

s1, s2, sd = get(S1), get(S2), get(SD)
l1, l2, ld = get(L1), get(L2), get(LD)
s1_ips, s2_ips = get(S1, "items_per_second"), get(S2, "items_per_second")
l1_ips, l2_ips = get(L1, "items_per_second"), get(L2, "items_per_second")
lttng_on = get(L1, "lttng_enabled")

print()
print("=== Spoor vs LTTng-UST (medians of %s repetitions; real time; load %s -> %s) ==="
      % (data["benchmarks"][0].get("repetitions", 1), load_before, load_after))
for label, name in (("Spoor enabled, 1 thread", S1), ("Spoor enabled, 2 threads", S2),
                    ("Spoor, live drainer, 1 thread", V1), ("Spoor, live drainer, 2 thr.", V2),
                    ("Spoor saturated, 1 thread", X1), ("Spoor saturated, 2 threads", X2),
                    ("Spoor disabled", SD), ("LTTng-UST enabled, 1 thread", L1),
                    ("LTTng-UST enabled, 2 threads", L2), ("LTTng-UST disabled", LD),
                    ("clock read alone (floor)", FT)):
    extra = ""
    lost = get(name, "lost_pct")
    if lost is not None and name != SD:
        extra = "  lost %.1f%% (median), %s B/event in the file" % (lost, fmt(get(name, "bytes_per_event")))
    if name not in runs:
        continue
    print("%-30s %8s ns/event  (cpu %s ns)  %s items/s%s" % (
        label, fmt(get(name)), fmt(get(name, "cpu_time")),
        fmt(None if get(name, "items_per_second") is None else get(name, "items_per_second") / 1e6, ".1f", "M"),
        extra))
if use_lttng != "1" or lttng_on == 0:
    print("WARNING: the LTTng enabled cases ran without an active LTTng session (lttng_enabled=0)")

faster = (l1 / s1) if (l1 and s1 and lttng_on) else None
faster2 = (l2 / s2) if (l2 and s2 and lttng_on) else None
scaling = (s2_ips / s1_ips) if (s1_ips and s2_ips) else None
lscaling = (l2_ips / l1_ips) if (l1_ips and l2_ips) else None

print()
print("Spoor 1-thread vs LTTng-UST 1-thread: %sx faster" % fmt(faster, ".1f"))
print("Spoor 2-thread vs LTTng-UST 2-thread: %sx faster" % fmt(faster2, ".1f"))
print("Spoor 2-thread / 1-thread throughput: %sx (LTTng-UST: %sx)" % (fmt(scaling), fmt(lscaling)))
s1cpu, s2cpu = get(S1, "cpu_time"), get(S2, "cpu_time")
if s1 and s1cpu and s2cpu:
    # cpu_time is CPU per event summed over threads: if each thread ran
    # undisturbed, 2 threads would give 2 * (1 / s2cpu) events per ns.
    print("  by CPU time (what the threads themselves spent): 1 thread %.2f ns, 2 threads %.2f ns per event "
          "per thread; scaling if both had a CPU to themselves: %.2fx" % (s1cpu, s2cpu, 2 * s1cpu / s2cpu))

lt_bpe = None
if lt_events and lt_bytes and int(lt_events) > 0:
    lt_bpe = int(lt_bytes) / int(lt_events)
    # The enabled LTTng cases run a fixed iteration count, so the calls made
    # are known: every one is on disk or was discarded by the tracer.
    calls = 0
    for (fn, threads), aggs in runs.items():
        entry = aggs.get("median")
        if fn != L1[0] or entry is None:
            continue
        for part in entry.get("run_name", "").split("/"):
            if part.startswith("iterations:"):
                calls += int(part.split(":")[1]) * threads * int(entry.get("repetitions", 1))
    disc = lt_discarded or "?"
    # lttng 2.13.9 with per-user buffers has printed 2^63 + n here: not a count.
    if disc.isdigit() and int(disc) >= 1 << 62:
        disc = "garbage (%s)" % disc
    print("LTTng-UST trace: %s events on disk, %s bytes (du -sb) = %.1f B/event" % (lt_events, lt_bytes, lt_bpe))
    if calls:
        print("  %d tracepoint calls in the measured runs, so %d (%.1f%%) discarded by the tracer; "
              "lttng list says %s" % (calls, calls - int(lt_events), 100.0 * (calls - int(lt_events)) / calls, disc))

sus = {}
try:
    with open(os.path.join(out, "sustained.txt")) as f:
        for line in f:
            if line.startswith("spoor_bench_sustained:"):
                for kv in line.split()[1:]:
                    k, _, v = kv.partition("=")
                    sus[k] = float(v)
except OSError:
    pass
if sus:
    print("Spoor sustained: %d written, %d lost, %.2fM events/s achieved (target %.2fM) over %.2f s, "
          "%d bytes, %.2f B/event, buffer %d bytes per CPU"
          % (sus["written"], sus["lost"], sus["rate"] / 1e6, sus["target_rate"] / 1e6, sus["seconds"],
             sus["file_bytes"], sus["bytes_per_event"], sus["buffer_bytes_per_cpu"]))
    try:
        with open(os.path.join(out, "sustained-info.txt")) as f:
            for line in f:
                if line.startswith("time span"):
                    print("  read back with `spoor info`: " + " ".join(line.split()[2:]))
    except OSError:
        pass
    if "producer_cpu_s" in sus:
        print("  producer on a CPU %.0f%% of the run (%d involuntary switches); session writer thread used "
              "%.2f s of CPU" % (100 * sus["producer_cpu_s"] / sus["seconds"], sus["producer_preempted"],
                                  sus["drainer_cpu_s"]))

print()
print("=== Targets ===")
rows = [
    ("enabled 3 fields, 1 thread <= 20 ns (median)", fmt(s1, ".1f", " ns"),
     verdict(None if s1 is None else s1 <= 20)),
    (">= 10x faster than LTTng-UST, same run", fmt(faster, ".1f", "x"),
     verdict(None if faster is None else faster >= 10)),
    ("disabled <= 1 ns", fmt(sd, ".2f", " ns"), verdict(None if sd is None else sd <= 1)),
    ("2 threads >= 1.8x one thread", fmt(scaling, ".2f", "x"),
     verdict(None if scaling is None else scaling >= 1.8)),
]
if sus:
    ok = sus["lost"] == 0 and sus["rate"] >= 0.99 * sus["target_rate"] and sus["seconds"] >= 0.99 * float(
        sus["written"]) / sus["target_rate"]
    rows.append(("sustained %gM events/s, %g s, 0 lost, default buffer" % (sus["target_rate"] / 1e6,
                 float(sus["written"]) / sus["target_rate"]),
                 "%.2fM/s, %d lost" % (sus["rate"] / 1e6, sus["lost"]), verdict(ok)))
    rows.append(("file bytes per event (Spoor / LTTng-UST)",
                 "%.2f / %s" % (sus["bytes_per_event"], fmt(lt_bpe, ".2f")), "reported"))
for what, value, v in rows:
    print("%-52s %-22s %s" % (what, value, v))
PY
if [ "${SPOOR_BENCH_KEEP_TRACES:-0}" != 1 ]; then
  rm -rf "$lttng_trace" "$out"/*.spoor
  say "outputs in $out (core.json, core.txt, sustained.txt, summary.txt); traces deleted (SPOOR_BENCH_KEEP_TRACES=1 keeps them)"
else
  say "outputs and traces in $out"
fi
