#!/bin/sh
# Builds libspoor-core.a for one Cortex-M toolchain file and fails if the
# archive needs anything from outside besides memcpy/memset/memmove, the
# compiler's own helpers (__aeabi_*) and the platform hooks (spoor/port.h):
# no libc, no libatomic, no C++ runtime.
#   cortex_m_core_test.sh SOURCE_DIR BUILD_DIR TOOLCHAIN_NAME CMAKE_GENERATOR
# Exits 77 (CTest: skipped) when arm-none-eabi-g++ is not installed.
set -eu
src=$1 build=$2 toolchain=$3 generator=$4
if ! command -v arm-none-eabi-g++ >/dev/null 2>&1; then
  echo "arm-none-eabi-g++ not found (scripts/install-cross-deps.sh installs it): skipping"
  exit 77
fi
cmake -S "$src" -B "$build" -G "$generator" --toolchain "$src/toolchain/$toolchain.cmake" \
  -DSPOOR_WERROR=ON >"$build.configure.log" 2>&1 || { cat "$build.configure.log"; exit 1; }
cmake --build "$build" --target spoor_core
lib="$build/core/libspoor-core.a"
defined=$(arm-none-eabi-nm -g --defined-only "$lib" | awk 'NF == 3 {print $3}' | sort -u)
undefined=$(arm-none-eabi-nm -u "$lib" | awk '$1 == "U" {print $2}' | sort -u)
outside=$(printf '%s\n' "$undefined" | grep -vxF -e "" $(printf '%s\n' "$defined" | sed 's/^/-e /') || true)
bad=$(printf '%s\n' "$outside" |
  grep -vE '^(memcpy|memset|memmove|__aeabi_[a-z0-9_]+|spoor_port_(ticks|cpu|thread|irq_save|irq_restore))$' |
  grep -v '^$' || true)
echo "$toolchain: libspoor-core.a needs from outside:" $outside
if [ -n "$bad" ]; then
  echo "FAIL: the core pulls symbols a firmware image may not have:" $bad
  exit 1
fi
arm-none-eabi-size -t "$lib" | tail -1
