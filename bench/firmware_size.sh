#!/bin/sh
# The firmware core's figures on a Cortex-M3 (-Os): flash and RAM of the
# core with one provider and three events, bytes per event, and instructions
# per event counted by executing under QEMU (bench/RESULTS.md, "Firmware
# core (issue 5)").
#   bench/firmware_size.sh [BUILD_DIR] [--check-flash BYTES]
# With --check-flash, exits 1 when the core's flash (writer side: the
# program without the trace dump) is over BYTES (the size report CTest runs).
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$src/build/firmware-size}
limit=""
if [ "${2:-}" = "--check-flash" ]; then limit=$3; fi
mkdir -p "$build"
generator=Ninja
command -v ninja >/dev/null 2>&1 || generator="Unix Makefiles"

# The core as a firmware builds it: one provider and three events fit the
# smallest registry (SPOOR_MAX_PROVIDERS=1, SPOOR_MAX_EVENTS=3).
core() {  # core DIR [extra cmake args]
  dir=$1; shift
  cmake -S "$src" -B "$dir" -G "$generator" --toolchain "$src/toolchain/arm-none-eabi-cortex-m3.cmake" \
    -DSPOOR_MAX_PROVIDERS=1 -DSPOOR_MAX_EVENTS=3 "$@" >"$dir.log" 2>&1 || { cat "$dir.log"; exit 1; }
  cmake --build "$dir" --target spoor_core >>"$dir.log" 2>&1 || { cat "$dir.log"; exit 1; }
}
mkdir -p "$build/hooks" "$build/inline"
core "$build/hooks"
core "$build/inline" -DSPOOR_PORT_HEADER="$src/bench/firmware/cortex_m3_port.h"

flags="-mcpu=cortex-m3 -mthumb -mfloat-abi=soft -Os -std=c++20 -ffunction-sections -fdata-sections
  -fno-exceptions -fno-rtti -ffreestanding -fno-threadsafe-statics -fno-tree-loop-distribute-patterns
  -DSPOOR_PORT_HOOKS=1 -DSPOOR_SINGLE_CORE=1 -DSPOOR_MAX_PROVIDERS=1 -DSPOOR_MAX_EVENTS=3 -I$src/core/include"
link="-nostdlib -Wl,--gc-sections -Wl,-e,reset_handler"
sample=$src/bench/firmware/size_sample.cpp
# shellcheck disable=SC2086
arm-none-eabi-g++ $flags -DSPOOR_COMPILE_OUT=1 "$sample" $link -o "$build/none.elf"
# shellcheck disable=SC2086
arm-none-eabi-g++ $flags -DSAMPLE_DUMP=0 "$sample" $link "$build/hooks/core/libspoor-core.a" -lgcc -o "$build/writer.elf"
# shellcheck disable=SC2086
arm-none-eabi-g++ $flags -DSAMPLE_DUMP=1 "$sample" $link "$build/hooks/core/libspoor-core.a" -lgcc -o "$build/full.elf"

# section ELF NAME: bytes of output section NAME (0 if absent)
section() { arm-none-eabi-size -A "$1" | awk -v n="$2" '$1 == n {print $2; f=1} END {if (!f) print 0}'; }
# symbols ELF REGEX: summed sizes of the symbols matching REGEX
# (mawk has no strtonum: hex() converts nm's sizes)
hexfn='function hex(h,  i, v) { v = 0; for (i = 1; i <= length(h); i++) v = v * 16 + index("0123456789abcdef", tolower(substr(h, i, 1))) - 1; return v }'
symbols() { arm-none-eabi-nm -S "$1" | awk -v r="$2" "$hexfn"' NF == 4 && $4 ~ r {s += hex($2)} END {print s + 0}'; }
flash() { echo $(( $(section "$1" .text) + $(section "$1" .rodata) + $(section "$1" .data) )); }
ram() { echo $(( $(section "$1" .data) + $(section "$1" .bss) )); }
# Not the core's: the program's own copy loops, its port hooks, its ring buffer.
outside_flash() { symbols "$1" '^(memcpy|memset|spoor_port_[a-z_]+|_ZN12_GLOBAL__N_17to_port.*)$'; }
buffers() { symbols "$1" 'g_ring_memory'; }

base_flash=$(flash "$build/none.elf")
base_ram=$(ram "$build/none.elf")
writer_flash=$(( $(flash "$build/writer.elf") - base_flash - $(outside_flash "$build/writer.elf") ))
full_flash=$(( $(flash "$build/full.elf") - base_flash - $(outside_flash "$build/full.elf") ))
writer_ram=$(( $(ram "$build/writer.elf") - base_ram - $(buffers "$build/writer.elf") ))
full_ram=$(( $(ram "$build/full.elf") - base_ram - $(buffers "$build/full.elf") ))

echo "Cortex-M3, -Os, $(arm-none-eabi-g++ --version | head -1)"
echo "core with one provider and three events (SPOOR_MAX_PROVIDERS=1, SPOOR_MAX_EVENTS=3):"
echo "  flash, writer side (registration, enable, ring_init, the three events' writes): $writer_flash bytes"
echo "  flash, with the trace dump (drain, TraceWriter, CRC-32C, metadata):             $full_flash bytes"
echo "  RAM besides the buffers (.data + .bss of the core): writer $writer_ram bytes, with the dump $full_ram bytes"
echo "  (not counted: memcpy/memset $(symbols "$build/full.elf" '^(memcpy|memset)$') bytes, the port hooks" \
  "$(symbols "$build/full.elf" '^spoor_port_')" "bytes, the ring buffer $(buffers "$build/full.elf") bytes)"
echo "core symbols of the image with the dump (bytes):"
arm-none-eabi-nm -S --size-sort -C "$build/full.elf" |
  awk "$hexfn"' NF >= 4 && $3 !~ /^[Nn]$/ {printf "  %6d %s %s\n", hex($2), $3, substr($0, index($0, $4))}' |
  grep -v -e ' memcpy$' -e ' memset$' -e 'g_ring_memory' -e ' spoor_port_' | tail -40

echo "bytes per event in the buffer (format 1.3 short records, tests/core/ring_masked_test.cpp):"
echo "  u32 + u16: 6 + 4 + 2 = 12 bytes; two u32: 6 + 4 + 4 = 14 bytes;"
echo "  the first record of a packet (long form, with the thread id): 10 + 4 + fields"

if command -v qemu-system-arm >/dev/null 2>&1; then
  for port in hooks inline; do
    extra=-DSPOOR_PORT_HOOKS=1  # (already in $flags: a harmless repeat)
    if [ "$port" = inline ]; then extra="-DSPOOR_PORT_HEADER=\"$src/bench/firmware/cortex_m3_port.h\""; fi
    # shellcheck disable=SC2086
    arm-none-eabi-g++ $flags "$extra" "$src/bench/firmware/count_sample.cpp" -nostdlib -Wl,--gc-sections \
      -T "$src/bench/firmware/mps2_an385.ld" "$build/$port/core/libspoor-core.a" -lgcc -o "$build/count-$port.elf"
    (cd "$build" && timeout 60 qemu-system-arm -M mps2-an385 -nographic \
      -semihosting-config enable=on,target=native -kernel "count-$port.elf" \
      -singlestep -d exec,nochain -D "count-$port.log")
    echo "instructions per event, u32 + u16 event, hooks $( [ "$port" = inline ] && echo "inline (SPOOR_PORT_HEADER)" || echo "as calls"):"
    python3 "$src/bench/firmware/count_instructions.py" "$build/count-$port.log" | sed 's/^/  /'
    rm -f "$build/count-$port.log"
  done
else
  echo "qemu-system-arm not found: instructions per event not counted"
fi

if [ -n "$limit" ] && [ "$writer_flash" -gt "$limit" ]; then
  echo "FAIL: the core's flash ($writer_flash bytes) is over the $limit-byte target"
  exit 1
fi
