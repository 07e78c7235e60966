#!/bin/sh
# Usage: compile_out_test.sh CXX INCLUDE_DIR SAMPLE WORKDIR [SIZE_TOOL]
# Builds the sample as an object three ways and compares the bytes of code
# and data (`size`): tracing compiled out must cost exactly 0 bytes.
set -eu
cxx=$1 inc=$2 src=$3 work=$4 size_tool=${5:-size}
mkdir -p "$work"
build() { "$cxx" -std=c++20 -O2 -c -I"$inc" "$@" "$src" -o "$work/$name.o"; "$size_tool" -A "$work/$name.o" | awk '$1 ~ /^\.(text|data|bss|rodata)/ {s += $2} END {print s + 0}'; }
name=on;      on=$(build)
name=out;     out=$(build -DSPOOR_COMPILE_OUT=1)
name=removed; removed=$(build -DSPOOR_SAMPLE_NO_TRACING)
echo "code+data bytes: tracing on $on, compiled out $out, tracing removed $removed"
[ "$on" -gt "$removed" ] || { echo "FAIL: tracing on should cost bytes"; exit 1; }
[ "$out" -eq "$removed" ] || { echo "FAIL: compiled-out tracing costs $((out - removed)) bytes"; exit 1; }
echo "PASS: SPOOR_COMPILE_OUT costs 0 bytes"
