#!/usr/bin/env bash
# bench/signal_hooks.sh: what wrapping the program's signal handlers costs
# (preload/README.md, "Signal handlers that interrupt the shim"). Runs
# spoor_workload_sigaction_loop untraced and under spoor record
# (--sample-hz 0), interleaved, RUNS times each, and prints the median ns
# per sigaction install, per query and per raise + handler.
#
#   bench/signal_hooks.sh [RUNS (7)]
#
# A benchmark, not a test: it exits 0 whatever the numbers are.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
runs=${1:-7}
cd "$root"
cmake --preset release >/dev/null
cmake --build --preset release --target spoor spoor-preload spoor_workload_sigaction_loop >/dev/null
spoor="$root/build/release/symbolizer/spoor"
workload="$root/build/release/bench/workloads/spoor_workload_sigaction_loop"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for ((i = 0; i < runs; ++i)); do
  echo "untraced $("$workload")"
  echo "traced $("$spoor" record --sample-hz 0 -o "$out/t.spoor" -- "$workload" 2>/dev/null)"
done >"$out/runs.txt"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$out/runs.txt" <<'PY'
import re, statistics, sys
rows = {}
for line in open(sys.argv[1]):
    label = line.split()[0]
    values = [float(v) for v in re.findall(r"([0-9.]+) ns", line)]
    rows.setdefault(label, []).append(values)
print("%-9s %12s %12s %16s" % ("", "install ns", "query ns", "raise+handler ns"))
for label in ("untraced", "traced"):
    med = [statistics.median(r[i] for r in rows[label]) for i in range(3)]
    print("%-9s %12.0f %12.0f %16.0f" % (label, *med))
PY
