#!/usr/bin/env bash
# bench/stdio_chars.sh: what the stdio layer's character runs cost a
# program that calls putc/getc once per character, timed as a whole
# process: plain, under spoor record with Spoor.IO off (the hooks' disabled
# path), with Spoor.IO's fd and stdio events (-p Spoor.IO:0x3) and with the
# default spec (every provider, read/write stacks, CPU samples). Prints the
# smallest wall and CPU time (user + sys of the process tree, spoor record
# included) of REPS runs of each, and the ratio to plain.
#
#   bench/stdio_chars.sh [BUILD_DIR (build/ci)] [REPS (5)]
#
# Workloads (bench/stdio_chars.c): putc of 20 M characters to /dev/null;
# getc through a 20 MB file; the copy loop getc -> putc (/dev/null) over it.
# A benchmark, not a test: it exits 0 whatever the numbers are.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build/ci}
reps=${2:-5}
spoor=$build/symbolizer/spoor
program=$build/bench/spoor_bench_stdio_chars
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# 20 MB of text (base64 lines); the last head closes the pipe early.
(head -c 15000000 /dev/urandom | base64 -w 100 | head -c 20000000 >"$work/text") || true

# Smallest "wall cpu" of $reps runs of the command.
best() {
  local w c best_w=999999 best_c=999999 TIMEFORMAT='%R %U %S'
  for ((i = 0; i < reps; ++i)); do
    read -r w u s < <({ time "$@" >/dev/null 2>&1; } 2>&1)
    c=$(awk -v u="$u" -v s="$s" 'BEGIN { print u + s }')
    best_w=$(awk -v a="$w" -v b="$best_w" 'BEGIN { print (a < b) ? a : b }')
    best_c=$(awk -v a="$c" -v b="$best_c" 'BEGIN { print (a < b) ? a : b }')
  done
  echo "$best_w $best_c"
}

uptime
printf '%-12s %-10s %8s %8s %8s %8s\n' workload run wall_s cpu_s wall_x cpu_x
for workload in "putc 20000000 /dev/null" "getc 0 $work/text" "copy 0 $work/text"; do
  read -r pw pc < <(best "$program" $workload)
  for run in plain io-off io-only default; do
    case $run in
      plain) w=$pw c=$pc ;;
      io-off) read -r w c < <(best "$spoor" record -p Spoor.Heap -o "$work/t.spoor" -- "$program" $workload) ;;
      io-only) read -r w c < <(best "$spoor" record -p Spoor.IO:0x3 -o "$work/t.spoor" -- "$program" $workload) ;;
      default) read -r w c < <(best "$spoor" record -o "$work/t.spoor" -- "$program" $workload) ;;
    esac
    awk -v n="${workload%% *}" -v r="$run" -v w="$w" -v c="$c" -v pw="$pw" -v pc="$pc" \
      'BEGIN { printf "%-12s %-10s %8.3f %8.3f %8.1f %8.1f\n", n, r, w, c, w / pw, c / pc }'
  done
done
uptime
