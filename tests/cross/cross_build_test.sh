#!/bin/sh
# Usage: cross_build_test.sh TRIPLE SOURCE_DIR BUILD_DIR GENERATOR WERROR
# Builds the core alone with toolchain/TRIPLE.cmake in BUILD_DIR. For a Linux
# triple it also builds the core's tests and runs them under qemu-user; for a
# bare-metal one it checks that libspoor-core.a needs nothing from its
# program but memcpy, memset and the three port hooks. Exits 77 (CTest:
# skipped) when the cross compiler, qemu-user or GoogleTest's sources are
# missing; scripts/install-cross-deps.sh installs them.
set -eu
triple=$1 src=$2 build=$3 generator=$4 werror=$5

skip() { echo "SKIP: $triple: $1 (scripts/install-cross-deps.sh installs it)"; exit 77; }
command -v "$triple-g++" >/dev/null || skip "no $triple-g++"
case $triple in
  *-linux-gnu)
    arch=${triple%%-*}
    command -v "qemu-$arch" >/dev/null || skip "no qemu-$arch (qemu-user)"
    [ -d "/usr/$triple/lib" ] || skip "no C library for $triple in /usr/$triple"
    [ -f /usr/src/googletest/CMakeLists.txt ] || skip "no GoogleTest sources in /usr/src/googletest"
    linux=1 ;;
  *)
    [ -d /usr/include/newlib/c++ ] || skip "no newlib C++ headers (libstdc++-arm-none-eabi-newlib)"
    linux=0 ;;
esac

# The host build's flags are for the host compiler; keep them out.
unset CFLAGS CXXFLAGS LDFLAGS CPPFLAGS
port_hooks=OFF
# Bare metal: the program supplies the clock, CPU and thread. RISC-V has
# lock-free atomics of every width the core uses, so the ring stays
# lock-free and works on many harts: SPOOR_SINGLE_CORE (interrupt masking,
# for microcontrollers without them) is off.
[ "$linux" = 1 ] || port_hooks=ON
mkdir -p "$build"
cmake -S "$src" -B "$build" -G "$generator" --toolchain "$src/toolchain/$triple.cmake" \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSPOOR_HOSTED=OFF -DSPOOR_PORT_HOOKS=$port_hooks -DSPOOR_SINGLE_CORE=OFF \
  -DSPOOR_WERROR="$werror" >"$build/configure.log" 2>&1 ||
  { cat "$build/configure.log"; echo "FAIL: $triple: configuring failed"; exit 1; }

if [ "$linux" = 1 ]; then
  cmake --build "$build" -j2
  # The tests register themselves with the toolchain's emulator (qemu-user).
  ctest --test-dir "$build" -j2 --output-on-failure --no-tests=error
  if [ "$arch" = aarch64 ]; then
    # QEMU's default CPU has the LSE atomics, so libgcc's outline atomics ran
    # casal; an ARMv8.0 CPU makes them take the ldaxr/stlxr loops instead.
    echo "core_tests again on an ARMv8.0 CPU without LSE (cortex-a53):"
    "qemu-$arch" -cpu cortex-a53 -L "/usr/$triple" "$build/tests/core/core_tests" --gtest_brief=1
  fi
  echo "PASS: $triple: the core's tests ran under qemu-$arch"
  exit 0
fi

cmake --build "$build" --target spoor_core
lib=$build/core/libspoor-core.a
nm=$triple-nm
# Symbols the archive uses but does not define: what a firmware must supply.
"$nm" -u "$lib" | awk 'NF == 2 {print $2}' | sort -u >"$build/needed.txt"
"$nm" --defined-only "$lib" | awk 'NF == 3 {print $3}' | sort -u >"$build/defined.txt"
external=$(comm -23 "$build/needed.txt" "$build/defined.txt")
allowed="memcpy memset spoor_port_cpu spoor_port_thread spoor_port_ticks"
bad=""
for s in $external; do
  case " $allowed " in *" $s "*) ;; *) bad="$bad $s" ;; esac
done
[ -z "$bad" ] || { echo "FAIL: $triple: libspoor-core.a needs symbols a bare-metal program lacks:$bad"; exit 1; }
echo "PASS: $triple: $lib needs only:" $external
"$triple-size" -t "$lib" | tail -1 | awk '{print "code " $1 " B, data " $2 " B, bss " $3 " B"}'
