#!/usr/bin/env bash
# bench/rule_cache.sh: what keeping unwind rules between recordings saves
# (preload/record/rule_cache_file.h). Each command runs untraced, under
# `spoor record --no-rule-cache` (every recording builds its rules), under
# `spoor record` with a rule cache the first, untimed recording filled,
# and under heaptrack, interleaved, and the medians of the wall times are
# printed with what each tool added.
#
#   bench/rule_cache.sh [runs (9)]
#
# Uses build/release (cmake --build --preset release) and a cache file of
# its own. A benchmark, not a test: it exits 0 whatever the numbers are.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
runs=${1:-9}
spoor="$root/build/release/symbolizer/spoor"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
printf 'int main(void) { return 0; }\n' >"$out/a.c"

commands=(
  "node -e 0"
  "python3 -c 'import json, sqlite3'"
  "gcc -c -o $out/a.o $out/a.c"
  "git -C $root log --oneline -3"
)

python3 - "$spoor" "$out" "$runs" "${commands[@]}" <<'PY'
import os, shutil, statistics, subprocess, sys, time

spoor, out, runs, commands = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
heaptrack = shutil.which("heaptrack")
cache = os.path.join(out, "unwind-rules")

def timed(argv, env=None):
    start = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    return time.perf_counter() - start

print(f"load before: {os.getloadavg()[0]:.2f}; {runs} interleaved runs each, medians")
print(f"{'command':36s} {'untraced':>9s} {'no cache':>9s} {'cached':>9s} {'heaptrack':>10s}  added: no cache / cached / heaptrack")
for command in commands:
    shell = ["sh", "-c", command]
    cached_env = dict(os.environ, SPOOR_RULE_CACHE=cache)
    trace = os.path.join(out, "t.spoor")
    if os.path.exists(cache):
        os.remove(cache)
    timed([spoor, "record", "-o", trace, "--"] + shell, cached_env)  # fills the cache
    r = {"untraced": [], "no cache": [], "cached": [], "heaptrack": []}
    for _ in range(runs):
        r["untraced"].append(timed(shell))
        r["no cache"].append(timed([spoor, "record", "--no-rule-cache", "-o", trace, "--"] + shell))
        r["cached"].append(timed([spoor, "record", "-o", trace, "--"] + shell, cached_env))
        if heaptrack:
            r["heaptrack"].append(timed([heaptrack, "-o", os.path.join(out, "ht")] + shell))
            for f in os.listdir(out):
                if f.startswith("ht."):
                    os.remove(os.path.join(out, f))
    m = {k: statistics.median(v) * 1000 if v else float("nan") for k, v in r.items()}
    u = m["untraced"]
    print(f"{command[:36]:36s} {m['untraced']:7.1f}ms {m['no cache']:7.1f}ms {m['cached']:7.1f}ms {m['heaptrack']:8.1f}ms"
          f"  +{m['no cache'] - u:.1f} / +{m['cached'] - u:.1f} / +{m['heaptrack'] - u:.1f} ms")
print(f"load after: {os.getloadavg()[0]:.2f}")
PY
