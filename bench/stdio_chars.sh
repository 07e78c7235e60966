#!/usr/bin/env bash
# bench/stdio_chars.sh: what the stdio layer's runs cost a program that
# calls putc/getc once per character, or printf/fgets/fwrite once per line,
# timed as a whole process: plain, under spoor record with Spoor.IO off
# (the hooks' disabled path), with Spoor.IO's fd and stdio events
# (-p Spoor.IO:0x3) and with the default spec (every provider, read/write
# stacks, CPU samples); and, given a BASELINE spoor (another build's, e.g.
# before a change), under that one with the default spec. Prints the
# smallest wall and CPU time (user + sys of the process tree, spoor record
# included) of REPS runs of each, the ratio to plain, and the load average
# before and after.
#
#   bench/stdio_chars.sh [BUILD_DIR (build/ci)] [REPS (5)] [BASELINE_SPOOR]
#
# Workloads (bench/stdio_chars.c): putc of 20 M characters to /dev/null;
# getc through a 20 MB file; the copy loop getc -> putc (/dev/null) over it;
# printf of 1 M short lines to /dev/null; fgets through a 1 M-line file
# (seq 1 1000000); and sort -rn of that file to /dev/null (coreutils: one
# fwrite per output line).
# A benchmark, not a test: it exits 0 whatever the numbers are.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build/ci}
reps=${2:-5}
baseline=${3:-}
spoor=$build/symbolizer/spoor
program=$build/bench/spoor_bench_stdio_chars
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# 20 MB of text (base64 lines); the last head closes the pipe early.
(head -c 15000000 /dev/urandom | base64 -w 100 | head -c 20000000 >"$work/text") || true
seq 1 1000000 >"$work/nums"

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

runs="plain io-off io-only default"
[[ -n $baseline ]] && runs="$runs baseline"
uptime
printf '%-12s %-10s %8s %8s %8s %8s\n' workload run wall_s cpu_s wall_x cpu_x
for workload in "putc 20000000 /dev/null" "getc 0 $work/text" "copy 0 $work/text" "printf 1000000 -" \
                "fgets 0 $work/nums" "sort"; do
  if [[ $workload == sort ]]; then
    command=(sort -rn "$work/nums" -o /dev/null)
  else
    read -r -a args <<<"$workload"
    command=("$program" "${args[@]}")
  fi
  read -r pw pc < <(best "${command[@]}")
  for run in $runs; do
    case $run in
      plain) w=$pw c=$pc ;;
      io-off) read -r w c < <(best "$spoor" record -p Spoor.Heap -o "$work/t.spoor" -- "${command[@]}") ;;
      io-only) read -r w c < <(best "$spoor" record -p Spoor.IO:0x3 -o "$work/t.spoor" -- "${command[@]}") ;;
      default) read -r w c < <(best "$spoor" record -o "$work/t.spoor" -- "${command[@]}") ;;
      baseline) read -r w c < <(best "$baseline" record -o "$work/t.spoor" -- "${command[@]}") ;;
    esac
    awk -v n="${workload%% *}" -v r="$run" -v w="$w" -v c="$c" -v pw="$pw" -v pc="$pc" \
      'BEGIN { printf "%-12s %-10s %8.3f %8.3f %8.1f %8.1f\n", n, r, w, c, w / pw, c / pc }'
  done
done
uptime
