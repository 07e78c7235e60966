#!/usr/bin/env bash
# bench/symbolize_compare.sh: spoor symbolize beside eu-addr2line, GNU
# addr2line and llvm-symbolizer, in one run, on one set of addresses of one
# large -O2 -g C++ binary. Prints per tool:
#
#   addr/s     addresses per second with inline frames (-f -i -C), wall
#              clock from start to exit: loading the debug info included
#   peak rss   the tool's peak RSS (/usr/bin/time -v), and that divided by
#              the binary's .debug_info size
#   same       % of addresses whose frames (every line of -a -f -i -C
#              output) are identical to GNU addr2line's
#
#   bench/symbolize_compare.sh [BINARY]
#
# BINARY defaults to the program bench/symbolize_corpus.sh generates and
# builds with g++ -O2 -g (SPOOR_BENCH_UNITS translation units of std
# containers, algorithms, lambdas and std::function, each with its own
# types: mostly inline chains). Addresses: every Nth instruction of its
# .text (objdump -d), N chosen for at least SPOOR_BENCH_ADDRESSES (12000) of
# them, in address order, each once.
#
# Environment:
#   SPOOR_BENCH_DIR         outputs (/tmp/spoor-symbolize-compare)
#   SPOOR_BENCH_ADDRESSES   how many addresses at least (12000)
#   SPOOR_BENCH_UNITS       translation units of the generated program (160)
#   SPOOR_TOOL              the spoor binary (default: the release preset's, built if missing)
#   SPOOR_BENCH_SKIP_DEPS   1: do not run scripts/install-bench-deps.sh
#
# A benchmark, not a test: it exits 0 whatever the numbers are.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
out=${SPOOR_BENCH_DIR:-/tmp/spoor-symbolize-compare}
mkdir -p "$out"
want=${SPOOR_BENCH_ADDRESSES:-12000}

[ "${SPOOR_BENCH_SKIP_DEPS:-0}" = 1 ] || "$root/scripts/install-bench-deps.sh" >&2
spoor=${SPOOR_TOOL:-$root/build/release/symbolizer/spoor}
if [ -z "${SPOOR_TOOL:-}" ]; then
  (cd "$root" && cmake --preset release >/dev/null && cmake --build --preset release --target spoor -j2 >/dev/null)
fi
binary=${1:-$("$root/bench/symbolize_corpus.sh" "$out/corpus" "${SPOOR_BENCH_UNITS:-160}")}

section_size() {
  readelf -SW "$binary" | awk -v name="$1" '{ for (i = 1; i <= NF; i++) if ($i == name) print $(i + 4) }' |
    head -1 | { read -r hex && echo $((16#$hex)) || echo 0; }
}
debug_info=$(section_size .debug_info)

objdump -d --no-show-raw-insn -j .text "$binary" |
  awk -F: '/^ +[0-9a-f]+:\t/ { gsub(/ /, "", $1); print "0x" $1 }' > "$out/all.txt"
total=$(wc -l < "$out/all.txt")
step=$(( total / want )); [ "$step" -ge 1 ] || step=1
awk -v s="$step" 'NR % s == 1 || s == 1' "$out/all.txt" > "$out/addresses.txt"
n=$(wc -l < "$out/addresses.txt")

echo "binary      $binary"
echo "            $(stat -c %s "$binary") bytes, .debug_info $debug_info bytes"
echo "addresses   $n (every ${step}th of $total instructions in .text)"
echo "machine     $(nproc) CPUs, $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo

# run NAME COMMAND...: runs with the addresses on stdin, keeps stdout and
# /usr/bin/time's report.
run() {
  local name=$1
  shift
  /usr/bin/time -v -o "$out/$name.time" "$@" < "$out/addresses.txt" > "$out/$name.out" 2> "$out/$name.err" || true
}
run spoor "$spoor" symbolize -a -f -i -C -e "$binary"
run addr2line addr2line -a -f -i -C -e "$binary"
run eu-addr2line eu-addr2line -a -f -i -C -e "$binary"
run llvm-symbolizer llvm-symbolizer --output-style=GNU -a -f -i -C --obj="$binary"

# Per-address blocks (an "0x..." line starts one: 16 digits from addr2line,
# fewer from llvm-symbolizer, so compared by value); % equal to addr2line's.
same_as_addr2line() {
  python3 - "$out/addr2line.out" "$1" <<'PY'
import re, sys
address = re.compile(r"^0x([0-9a-f]+)$")
def blocks(path):
    out, cur = [], None
    for line in open(path, errors="replace"):
        m = address.match(line.rstrip("\n"))
        if m:
            cur = [int(m.group(1), 16)]; out.append(cur)
        elif cur is not None:
            cur.append(line)
    return out
a, b = blocks(sys.argv[1]), blocks(sys.argv[2])
n = len(a)
same = sum(1 for x, y in zip(a, b) if x == y)
print(f"{100.0 * same / n:.2f}" if n else "n/a")
PY
}

printf '%-16s %10s %10s %12s %8s %8s\n' tool seconds addr/s "peak rss" "x debug" same%
for tool in spoor addr2line eu-addr2line llvm-symbolizer; do
  wall=$(awk -F': ' '/Elapsed \(wall clock\)/ { print $2 }' "$out/$tool.time")
  seconds=$(echo "$wall" | awk -F: '{ s = 0; for (i = 1; i <= NF; i++) s = s * 60 + $i; print s }')
  rss_kb=$(awk -F': ' '/Maximum resident set size/ { print $2 }' "$out/$tool.time")
  rate=$(awk -v n="$n" -v s="$seconds" 'BEGIN { printf "%.0f", (s > 0 ? n / s : 0) }')
  ratio=$(awk -v r="$rss_kb" -v d="$debug_info" 'BEGIN { printf "%.2f", (d > 0 ? r * 1024 / d : 0) }')
  printf '%-16s %10s %10s %9s MiB %8s %8s\n' "$tool" "$seconds" "$rate" "$((rss_kb / 1024))" "$ratio" \
    "$(same_as_addr2line "$out/$tool.out")"
done
echo
echo "outputs in $out (TOOL.out, TOOL.time, TOOL.err)"
